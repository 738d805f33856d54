"""Presenters: they format what the store and analysis return and never compute results themselves."""
