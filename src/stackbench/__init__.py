"""stackbench: benchmark and tune a storage stack layer by layer.

fio is the I/O engine, SQLite (or PostgreSQL) the store; see README.md.
"""

__version__ = "0.1.0"
