"""The results store: SQLite by default, PostgreSQL by URL; schema changes go through Alembic."""

from stackbench.store.database import default_db_url
from stackbench.store.repository import Store, open_store, open_store_to_read

__all__ = ["Store", "default_db_url", "open_store", "open_store_to_read"]
