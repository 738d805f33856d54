"""Share links die with their maker's ownership of the run, and stay dead.

Revision ID: 0011_share_links_bound
Revises: 0008_run_tallies
Create Date: 2026-11-27

A share link is its maker's: it let its holder see a run while the maker owned it, checked on every view
(web/access.py). A link whose run moved to another account (`user claim --take`) answered 404, but
nothing ended it: moved back to its maker, the run made the old link work again, although the maker had
since had no say over it and may have been told it was dead.

So the database ends them, in the transaction that moves the run, through whichever path moves it (a
claim, `--take`, `user remove`, a delete, a run stored again under its old id, a future command): a
trigger deletes every link naming a run (as the run of a link or either run of a comparison) when the
run's owner changes or the run is deleted. Links already dead that way when the migration runs are
deleted too.

SQLite drops a table's triggers with the table: a later migration that rebuilds `runs` in batch mode
must create these triggers again (as for run_tallies, 0008). tests/store/test_share_link_binding.py
moves runs at the head revision and fails if they are gone.
"""

from alembic import op

revision = "0011_share_links_bound"
down_revision = "0010_cell_figures_across_runs"
branch_labels = None
depends_on = None

_SQLITE = [
    """CREATE TRIGGER share_links_owner_moved AFTER UPDATE OF owner ON runs
       WHEN OLD.owner IS NOT NEW.owner BEGIN
         DELETE FROM share_links WHERE object_id = OLD.id OR other_id = OLD.id;
       END""",
    """CREATE TRIGGER share_links_run_deleted AFTER DELETE ON runs BEGIN
         DELETE FROM share_links WHERE object_id = OLD.id OR other_id = OLD.id;
       END""",
]

_POSTGRESQL = [
    """CREATE OR REPLACE FUNCTION share_links_end() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF TG_OP = 'DELETE' OR OLD.owner IS DISTINCT FROM NEW.owner THEN
           DELETE FROM share_links WHERE object_id = OLD.id OR other_id = OLD.id;
         END IF;
         RETURN NULL;
       END $$""",
    """CREATE TRIGGER share_links_end AFTER DELETE OR UPDATE OF owner ON runs
       FOR EACH ROW EXECUTE FUNCTION share_links_end()""",
]


def upgrade() -> None:
    op.create_index("ix_share_links_other_id", "share_links", ["other_id"])  # the triggers' lookup
    # links already dead: a run gone, or no longer owned by the link's maker
    op.execute("DELETE FROM share_links WHERE NOT EXISTS (SELECT 1 FROM runs WHERE runs.id = share_links.object_id "
               "AND runs.owner = share_links.owner) OR (other_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM runs "
               "WHERE runs.id = share_links.other_id AND runs.owner = share_links.owner))")
    for statement in _POSTGRESQL if op.get_bind().dialect.name == "postgresql" else _SQLITE:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER share_links_end ON runs")
        op.execute("DROP FUNCTION share_links_end()")
    else:
        for name in ("owner_moved", "run_deleted"):
            op.execute(f"DROP TRIGGER share_links_{name}")
    op.drop_index("ix_share_links_other_id", "share_links")

