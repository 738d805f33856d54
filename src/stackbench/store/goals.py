"""The stored goals (`stackbench goal`): what every run is checked against when it is shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import insert

from stackbench.base.errors import StoreError
from stackbench.model.results import new_id
from stackbench.store import schema
from stackbench.store.database import Database
from stackbench.store.reads import GOALS
from stackbench.store.rows import now

if TYPE_CHECKING:
    from stackbench.model.goal import Goal


class Goals(Database):
    """The store's goals, oldest first."""

    def add_goal(self, goal: "Goal") -> str:
        goal_id = new_id()
        with self.engine.begin() as connection:
            connection.execute(
                insert(schema.goals).values(id=goal_id, text=goal.text, spec=goal.to_dict(), created_at=now())
            )
        return goal_id

    def list_goals(self) -> list[tuple[str, "Goal"]]:
        from stackbench.model.goal import Goal

        with self.reader.connect() as connection:
            rows = connection.execute(GOALS).mappings().all()
        return [(row["id"], Goal.from_dict(row["spec"])) for row in rows]

    def remove_goal(self, ref: str) -> "Goal":
        matches = [(gid, goal) for gid, goal in self.list_goals() if gid.startswith(ref.lower()) or goal.text == ref]
        if len(matches) != 1:
            raise StoreError(
                f"{'no goal' if not matches else 'several goals'} match {ref!r}",
                "List them with `stackbench goal list` and give a unique id prefix",
            )
        with self.engine.begin() as connection:
            connection.execute(schema.goals.delete().where(schema.goals.c.id == matches[0][0]))
        return matches[0][1]
