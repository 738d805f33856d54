"""What a shareable report holds, already redacted and analysed: the runs with their goals and fio jobs, the
comparison and the layers when asked, and the charts drawn by the caller. Every document format renders one
`Contents`; none of them loads, computes, redacts or draws."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from stackbench.analysis.goals import GoalResult
from stackbench.model.results import Run

if TYPE_CHECKING:
    from stackbench.analysis.compare import RunComparison
    from stackbench.analysis.layers import LayerGaps
    from stackbench.report.charts.figure import Figure
    from stackbench.report.tabular import Tabular

# What a document format makes: the main file's bytes, and the files beside it (file name in the main file's
# directory, bytes), such as a Markdown report's PNG charts.
Document = tuple[bytes, list[tuple[str, bytes]]]


@dataclass(frozen=True)
class FioJob:
    """One distinct fio invocation of a run: the command line, the job file it read, and how many separate
    fio runs used it (a cell measured with --runs 5 is one job run 5 times)."""

    cell: str | None  # the cell's pattern, as the run table names it
    command: tuple[str, ...]
    job_file: str | None
    runs: int = 1

    @property
    def command_line(self) -> str:
        return shlex.join(self.command)


@dataclass(frozen=True)
class RunPart:
    run: Run
    goals: tuple[GoalResult, ...] = ()
    fio_jobs: tuple[FioJob, ...] = ()

    @property
    def name(self) -> str:
        """How the report names the run: its label, else its short id."""
        return self.run.label or self.run.id[:12]

    @property
    def anchor(self) -> str:
        return f"run-{self.run.id[:12]}"

    @property
    def stackbench_command(self) -> str | None:
        """The command that made the run, as typed (the program path shown as `stackbench`), or the import
        that stored it; None when the run does not say."""
        facts = self.run.facts or {}
        argv = facts.get("command")
        if isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv):
            return shlex.join(["stackbench", *without_db(argv[1:])])
        if facts.get("imported_from"):
            label = ["--label", self.run.label] if self.run.label else []
            return shlex.join(["stackbench", "import", str(facts["imported_from"]), *label])
        return None


@dataclass(frozen=True)
class StoredPart:
    """A stored audit or tune session as a report shows it: the tables `stackbench show ID` prints of it,
    built from the redacted document (an audit's findings and what changed since the audit before it; a
    tune session's summary, races and each knob's comparison), and notes."""

    title: str
    anchor: str
    tables: tuple["Tabular", ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Contents:
    runs: tuple[RunPart, ...]
    comparison: "RunComparison | None" = None
    layers: "LayerGaps | None" = None
    figures: tuple["Figure", ...] = ()
    redaction: str = ""  # one sentence: what was replaced by placeholders, or that identifiers were kept
    command: str = ""  # the `stackbench report` command that made this report (redacted like the rest)
    version: str = ""  # stackbench's version
    audits: tuple[StoredPart, ...] = ()  # stored audits (`report --audit`)
    tunes: tuple[StoredPart, ...] = ()  # stored tune sessions (`report TUNE`)
    layer_runs: tuple[Run, ...] = ()  # the runs of `layers`, bottom first, as redacted: their layer activity

    @property
    def title(self) -> str:
        names = [part.name for part in self.runs]
        if self.comparison is not None:
            a = self.comparison.base.label or self.comparison.base.id[:12]
            b = self.comparison.other.label or self.comparison.other.id[:12]
            return f"stackbench report: {a} vs {b}"
        if self.layers is not None and not names:
            return "stackbench report: layers " + " / ".join(self.layers.names)
        if (self.tunes or self.audits) and not names:
            return "stackbench report: " + ", ".join(part.title for part in [*self.tunes, *self.audits][:2])
        return "stackbench report: " + ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def fio_jobs(run: Run, outputs: Iterable[dict[str, Any]]) -> tuple[FioJob, ...]:
    """The run's distinct fio invocations from its stored fio outputs (dicts with `id`, `seq`, `command`,
    `job_file`, as the store returns them), in the order they first ran. Imported outputs have neither a
    command nor a job file and give nothing: their run's import command says where they came from."""
    patterns = {cell.fio_output_id: cell.pattern for cell in run.cells if cell.fio_output_id}
    jobs: dict[tuple[tuple[str, ...], str | None], list[Any]] = {}
    for output in sorted(outputs, key=lambda o: o.get("seq") or 0):
        command = tuple(str(a) for a in output.get("command") or ())
        job_file = output.get("job_file")
        if not command and not job_file:
            continue
        entry = jobs.setdefault((command, job_file), [None, 0])
        entry[0] = entry[0] or patterns.get(output.get("id"))
        entry[1] += 1
    return tuple(FioJob(cell, command, job_file, runs) for (command, job_file), (cell, runs) in jobs.items())


def without_db(argv: Sequence[str]) -> list[str]:
    """A command line without --db and its value: a database URL is local, and may hold a password."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--db":
            skip = True
        elif not arg.startswith("--db="):
            kept.append(arg)
    return kept
