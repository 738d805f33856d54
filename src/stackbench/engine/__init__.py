"""The engine: the external measuring tools, run and their output parsed. fio (job building, running, output
parsing) and `cryptsetup benchmark` (cryptsetup.py). Nothing else calls fio or cryptsetup."""
