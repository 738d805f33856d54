"""Loading runs in and out: fio's output files into the store (importer.py), and stored runs into a
report's contents, redacted and analysed (report_contents.py), for the CLI and the server alike."""
