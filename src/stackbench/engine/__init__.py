"""The engine: fio job building, running and output parsing. Nothing else calls fio."""
