"""The json+ completion-latency buckets of stored runs: fio's raw output is in the store (fio_outputs),
not in a `Run`, so the charts (report/, which never reads the store) get them from here, through the CLI
(`chart`, `report`) and the server alike."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Iterable

from stackbench.base.errors import StackbenchError

if TYPE_CHECKING:
    from stackbench.model.results import Cell, Run


def cell_bins(store: Any, run: "Run", cell: "Cell") -> Counter[int]:
    """The json+ completion-latency buckets of `cell`, added over all its stored fio runs."""
    from stackbench.engine.fio_json import parse_fio_json
    from stackbench.engine.merge import bins_of

    outputs = store.fio_outputs(run.id)
    first = next((o for o in outputs if o["id"] == cell.fio_output_id), None)
    group = [o for o in outputs if first is not None and first["group_id"] and o["group_id"] == first["group_id"]]
    # Cells of one output that share a job name and direction are its repeated job entries, in order.
    twins = [c.id for c in run.cells if c.fio_output_id == cell.fio_output_id
             and c.result.job_name == cell.result.job_name and c.result.direction == cell.result.direction]
    bins: Counter[int] = Counter()
    for output in group or ([first] if first else []):
        try:
            document = parse_fio_json(output["raw_text"], source="stored fio output").document
        except StackbenchError:
            continue  # an imported normal or terse output: no buckets in it
        found = bins_of(document, cell.result.direction, job_name=cell.result.job_name,
                        occurrence=twins.index(cell.id))
        if found:
            bins.update(found)
    if not bins:
        raise StackbenchError(
            f"run {run.id[:12]} has no json+ latency buckets for {cell.pattern} (imported without them?)",
            "Chart a run measured by `stackbench run` (it stores fio's json+ output), or import fio "
            "--output-format=json+ output; --kind percentiles needs no buckets",
        )
    return bins


def bins_where_stored(store: Any, run: "Run", cells: Iterable["Cell | None"]) -> dict[str, Counter[int]]:
    """The buckets of those `cells` that have them, keyed by cell id: a run imported without json+
    output simply has no histogram, its other charts are still drawn."""
    found: dict[str, Counter[int]] = {}
    for cell in cells:
        if cell is None:
            continue
        try:
            found[cell.id] = cell_bins(store, run, cell)
        except StackbenchError:
            pass
    return found
