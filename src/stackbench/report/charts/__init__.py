"""Charts drawn with matplotlib from stored runs (issue 13). Imported only by the commands that draw, so
that matplotlib never slows the start of the others."""
