"""Alembic environment: migrations run on the connection the store hands over (no alembic.ini needed)."""

from alembic import context

from stackbench.store.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
