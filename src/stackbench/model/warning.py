"""Warnings as a closed set of codes, as hyperfine keeps them: data only, at the bottom of the import flow.

A warning tells the user that a number should not be trusted as it stands and what to do about it. Its
text is for people and gets reworded; its code is for scripts and does not change. A script that looks
for a substring of the text breaks silently the day the sentence is improved (synclat's own filter did),
so every warning the program stores or prints carries one `WarningCode`, scripts and the program filter
on the code, and docs/json.md lists the codes with their meaning and fix, generated from the members here.
A new warning is one new member, its record; a `Warning` with a code outside the set cannot be made.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any


class WarningCode(enum.StrEnum):
    """Every warning stackbench emits, one record each: the name, as JSON and the store spell it, then what it
    means and what fixes it, which are docs/json.md's table of codes (generated from them: report/registry_docs.py)."""

    meaning: str
    fix: str

    def __new__(cls, value: str, meaning: str, fix: str) -> WarningCode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        member.fix = fix
        return member

    PAGE_CACHE = (
        "PAGE_CACHE",
        "Read patterns on a test file smaller than 2x RAM, buffered (or on ZFS, where O_DIRECT before "
        "OpenZFS 2.3 still reads through the ARC): the reads measure caches, not the device.",
        "`--size` of at least 2x RAM, or `--direct` where the file system honours O_DIRECT.",
    )
    TMPFS_TARGET = (
        "TMPFS_TARGET",
        "The target is on tmpfs: every result measures RAM, not a storage device.",
        '`""` (a target on a storage device).',
    )
    DIRECT_IO_UNAVAILABLE = (
        "DIRECT_IO_UNAVAILABLE",
        "O_DIRECT was to be used where the target honours it (a preset whose cells use O_DIRECT where "
        "honoured, without `--direct`/`--buffered`) and this target does not: buffered I/O was measured, "
        "through the page cache.",
        "A target on a file system that honours O_DIRECT.",
    )
    TOO_FEW_RUNS = (
        "TOO_FEW_RUNS",
        "Cells measured in one fio run: no interval, and no verdict can use them (subject: the cells). A "
        "cell that writes its file once by design (cache-exhaustion) gets its own warning of this code, "
        "saying so. In a compared row: a side has a single run, so there is no verdict.",
        "`--runs 3` or more (5 before comparing runs); for a cell written once, read it as a curve (`chart "
        "--kind cache`); in a compared row, rerun each side with `stackbench run --runs 5` or use "
        "`stackbench ab --rounds 5` (`--rounds` for the runs of one `ab` session).",
    )
    FEW_RUNS_LOW_POWER = (
        "FEW_RUNS_LOW_POWER",
        "A compared row with fewer than 3 runs on a side: only large changes can be found.",
        "As `TOO_FEW_RUNS` in a compared row.",
    )
    CI_ABOVE_TARGET = (
        "CI_ABOVE_TARGET",
        "An adaptive cell (`--until-stable`) reached its run or time cap with the interval still wider than "
        "`--ci-target`; the text is the stop reason.",
        "Keep the machine quiet, or accept the wider interval.",
    )
    HIGH_SPREAD = (
        "HIGH_SPREAD",
        "A cell's separate runs differ a lot (run-to-run spread of 10 % or more; past 100 % the text gives "
        "the runs' range and \"too noisy to tell\"): other load, a cache filling, a file system still laying "
        "out the file.",
        "Keep the machine quiet; the runs that would tell a 5 % change at this spread, `--runs N` (`--rounds "
        "N` for an `ab` arm), or past 100 runs a quieter machine or longer runs.",
    )
    HIGH_CV = (
        "HIGH_CV",
        "IOPS swing second to second inside runs (CV of 25 % or more): a cache filling, or the target's file "
        "system's periodic flushes as the run's facts name it (ZFS txg flushes, ext4 journal commits, ...). "
        "A diagnostic, never the error bar.",
        "Longer runs (`--runtime`) show whether it settles.",
    )
    NO_SAMPLES = (
        "NO_SAMPLES",
        "A compared row where a side is a single summary without runs or samples (an import): nothing to "
        "test.",
        '`""` (measure both sides with stackbench).',
    )
    WEAK_REPLICATES = (
        "WEAK_REPLICATES",
        "A compared row where a side was measured before stackbench counted separate runs (continuation "
        "segments, or one run cut into blocks of seconds): its verdict is weak.",
        'Measure again with `stackbench run --runs 5` (`""` for segments).',
    )
    ABANDONED = (
        "ABANDONED",
        "The run's process died (killed, OOM, power cut); a later command marked the run abandoned, killed "
        "the fio processes still left of it and removed what it left (scratch file, job directory), naming "
        "what it could not remove or kill. Its finished fio runs are kept.",
        '`""` (run it again), or, when the cleanup could not finish, `finish the cleanup by hand: rm -f -- '
        "PATH` (the commands that do).",
    )
    HOST_DROPPED = (
        "HOST_DROPPED",
        "A host of a fleet run (`run --hosts`) dropped out mid-run (its fio killed, the network, the host "
        "down); `subject` is the host. The other hosts' results are kept, the run's status is `partial`, and "
        "the total covers only the runs where every host reported.",
        "Check the host and run again.",
    )
    SCRATCH_LEFT = (
        "SCRATCH_LEFT",
        "A fleet host's scratch file could not be removed after the run (the host was unreachable for the "
        "cleanup pass); `subject` is the host, `text` names the file.",
        "Remove the file by hand.",
    )
    LESS_SAFE = (
        "LESS_SAFE",
        "(compare, ab, report) One side of the comparison holds a setting that trades durability or "
        "correctness for speed and the other does not (`sync=disabled`, `barrier=0`/`nobarrier`, "
        "`cache=unsafe`, `zfs_nocacheflush`, `checksum=off`, a raised `zfs_txg_timeout`, ...: the table in "
        "`model/unsafe_settings.py`, read from the `ab` commands, the facts and the workloads). `text` is "
        "the verdict's marking, e.g. `B is faster because it is less safe: <risk> (B: <command>; A: "
        "<command>)`; the comparison's `safety` object holds the details.",
        "The safe way to the same end, per setting (e.g. keep `sync=standard` and add a fast log device).",
    )
    ORDER_EFFECT = (
        "ORDER_EFFECT",
        "(compare of the two arms of one `ab` session) The arm measured second in a round did significantly "
        "better or worse than the first, whichever arm it was: something carries over from one measurement "
        "to the next. With counterbalanced rounds the change B vs A is not biased by it, only less precise; "
        "`text` says by how much it moves the change when the rounds are not balanced.",
        "Reset that state before every measurement with `--prepare`, or a longer `--ramp`.",
    )
    SYNC_NOISE = (
        "SYNC_NOISE",
        "(synclat, slog; printed and in their `--json`, not stored with the run) The spread between the "
        "separate runs leaves a result open: a synclat size measured once or with a 95 % interval of its "
        "time per write wider than ±10 % (subject: the sizes); a slog candidate whose interval of the QD1 "
        "median latency straddles a class boundary, or a ranking where no candidate is proven better than "
        "the next (subject: the candidates). `text` gives the spread seen.",
        "The number of runs that spread calls for, in the command's own option: `--runs N` (or: the "
        "candidates differ by less than the smallest effect a ranking claims, and no number of runs makes "
        "one better).",
    )
    DISTURBED = (
        "DISTURBED",
        "(run, ab, synclat, slog) The machine was busy with something else during some of the cells' fio "
        "runs (`subject`: the cells, or past 4 of them their number, `6 of 48 cells`; `text`: what was seen in "
        "how many runs, past 4 cells for the worst three): CPU or memory pressure of 10 % "
        "or more (PSI; without PSI more runnable tasks than CPUs), CPU steal of 5 % or more, a ZFS scrub or "
        "resilver, or I/O on the target's device that fio did not do of 25 % or more of fio's own bytes. "
        "The per-run figures are `measurement.replicates[].conditions`.",
        "Measure on a quiet machine, or compare configurations in one `stackbench ab` session, whose rounds "
        "pair the arms in time.",
    )
    CONDITIONS_DIFFER = (
        "CONDITIONS_DIFFER",
        "(compare of runs from separate sessions) The machine's conditions differed between the two runs by "
        "more than either run's own fio runs show: CPU or memory pressure (10 points or more), CPU steal (5 "
        "points), I/O on the target's device that fio did not do (25 points of fio's bytes), or a scrub or "
        "resilver during one side only. `text` gives each side's figure; the verdict is marked weak.",
        "Confirm the verdict with `stackbench ab`, whose rounds measure both configurations alternately.",
    )
    SETUP_DIFFERS = (
        "SETUP_DIFFERS",
        "(compare of runs from separate sessions) The kernel, the fio version or the file measured on (a "
        "different existing file or device, or a scratch file on one side and an existing file on the "
        "other) differed between the two runs; `text` names each. The verdict is marked weak.",
        "Confirm the verdict with `stackbench ab`, whose rounds measure both configurations alternately.",
    )
    IMPORT_UNKNOWN = (
        "IMPORT_UNKNOWN",
        "(import) The imported output does not say a workload field: random or sequential (terse, a JSON job "
        "without `job options`, the reads a write job did to verify), the block size (bsrange in normal or "
        "terse output, no exact bytes / I/Os), the iodepth (terse, fio 2.1/2.2 JSON) or numjobs. The cell "
        "stores it as unknown: `rw`, `bs_bytes`, `iodepth` or `numjobs` is `null` in its JSON and listed in "
        "`unknown`, its row shows `?`, and it is never matched to another run's cell or a goal. `subject` "
        "names the jobs (direction).",
        "Import fio's JSON output of fio 3.x, which lists each job's options.",
    )
    IMPORT_DERIVED = (
        "IMPORT_DERIVED",
        "(import) A field the output does not print was computed exactly from the numbers it does print: the "
        "block size as bytes / I/Os, the I/O count from the truncated KiB, KiB/s and IOPS (terse, fio before "
        "2.17), the direction from the side that moved data, the bytes from fio 2.x's KiB. `text` names the "
        "fields.",
        '`""`: nothing to fix, it is said so that it is not taken for a number fio printed.',
    )
    NO_LATENCY = (
        "NO_LATENCY",
        "(import) fio measured no completion latency (`gtod_reduce=1`, `disable_clat`): the latency fields "
        "are `null` and the tables show none, instead of 0 µs. `subject` names the jobs (direction).",
        "Measure without gtod_reduce when latency matters.",
    )
    LEGACY = (
        "LEGACY",
        "A warning stored as plain text by a stackbench before warning codes (or with a code this version "
        "does not know).",
        '`""` for a plain string: the whole message is in `text`.',
    )


@dataclass(frozen=True)
class Warning:  # shadows the builtin exception where imported; stackbench never raises or catches that one
    """One warning: `subject` is what it is about (cell patterns, a compared row; "" for the run and its
    target as a whole), `text` what was seen, `fix` the option or action that fixes it ("" if none)."""

    code: WarningCode
    subject: str
    text: str
    fix: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", WarningCode(self.code))  # ValueError for a code outside the set

    def __str__(self) -> str:
        """The line the user reads: `subject: text; fix`, each part only when present."""
        line = f"{self.subject}: {self.text}" if self.subject else self.text
        return f"{line}; {self.fix}" if self.fix else line

    def to_json(self) -> dict[str, str]:
        return {"code": self.code.value, "subject": self.subject, "text": self.text, "fix": self.fix}

    @classmethod
    def from_json(cls, value: Any) -> Warning:
        """A stored warning: the dict `to_json` writes, or a plain string from before codes (LEGACY).

        A code this version does not know (written by a newer stackbench) also reads as LEGACY, keeping the
        text: reading old or newer stores never fails over a warning.
        """
        if isinstance(value, dict):
            text = str(value.get("text", ""))
            subject, fix = str(value.get("subject") or ""), str(value.get("fix") or "")
            try:
                return cls(WarningCode(value.get("code")), subject, text, fix)
            except ValueError:
                return cls(WarningCode.LEGACY, subject, text, fix)
        return cls(WarningCode.LEGACY, "", str(value))
