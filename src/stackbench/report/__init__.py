"""Presenters: they format what the store and analysis return and never compute results themselves.

A builder module per result makes `Tabular`s and JSON data, held together as a `Report` (document.py);
`formats/` renders a report in each output format (docs/architecture.md).
"""
