"""The per-vdev sampler (probe/vdev_iostat.py): `zpool iostat -HpvPy POOL 1`'s real text parsed, its parser
fuzzed with garbage and cut lines, and its one long-lived zpool process ended with the run whatever ends it.

The text is what the OpenZFS 2.1.11 and 2.3.2 lab guests printed while fio wrote to their pool with
sync=always (lab/guest-init.sh, step "vdev iostat"; tests/data/zfs/vdev-iostat/README.md says how it was
captured). This machine has no ZFS, so the
process tests put a stand-in `zpool` first on PATH: a script that replays that real text a report per
interval, as zpool does, and checks it was called as `zpool iostat -H -p -v -P -y POOL INTERVAL`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from child_processes import alive, still_running
from stackbench.analysis.conditions import summarize
from stackbench.probe.conditions import ConditionSampler
from stackbench.probe.vdev_iostat import VdevSampler, iostat_argv, parse_report, parse_row

DATA = Path(__file__).resolve().parent.parent / "data" / "zfs" / "vdev-iostat"
SERIES = ("2.1", "2.3")
SRC = Path(__file__).resolve().parent.parent.parent / "src"


def real(series: str, flags: str = "HpvP") -> str:
    return (DATA / f"openzfs-{series}-{flags}.txt").read_text()


@pytest.mark.parametrize("series", SERIES)
def test_the_real_reports_parse_into_the_pool_s_rows_by_class(series: str) -> None:
    """`zpool iostat -HpvPy tank 1 2`: two reports, each the pool, its mirror and the mirror's two leaves,
    then (after an empty line each: -H's class headers) the special, the log and the cache vdev."""
    reports = parse_report(real(series), ["tank"])
    assert [report.pool for report in reports] == ["tank", "tank"]
    for report in reports:
        names = [row.name for row in report.rows]
        assert names[:2] == ["tank", "mirror-0"] and all(name.startswith("/dev/") for name in names[2:]), names
        assert [row.section for row in report.rows] == [0, 0, 0, 0, 1, 2, 3]
        assert all(row.rates is not None and row.reason is None for row in report.rows)


@pytest.mark.parametrize("series", SERIES)
def test_a_vdev_s_row_is_its_leaves_summed_and_the_pool_s_every_vdev_but_the_cache(series: str) -> None:
    """What module/zfs/vdev.c says, in the real figures: only leaves count, a vdev's row is its children's
    sum; but not exactly within one report taken while the pool writes: the kernel sums a vdev's children
    when it reads that vdev's row and reads each child's own row a moment later, while a txg's writes go on
    (the 2.1 capture's mirror 2.6 % over its legs, 83 writes against 41 + 39). Over whole bursts the sums
    hold (tests/stack/test_vdev_iostat_guest.py: within 1 % over a write with idle seconds around it)."""
    for report in parse_report(real(series), ["tank"]):
        rates = {row.name: row.rates for row in report.rows}
        pool, mirror, leg1, leg2, special, log, _cache = report.rows
        for field in range(4):
            legs = leg1.rates[field] + leg2.rates[field]
            assert mirror.rates[field] == pytest.approx(legs, rel=0.05, abs=3), rates
            vdevs = mirror.rates[field] + special.rates[field] + log.rates[field]
            assert pool.rates[field] == pytest.approx(vdevs, rel=0.05, abs=3), rates
        assert mirror.rates[1] > 0 and log.rates[3] > 0, rates  # fio was writing with sync=always


def test_the_plain_text_without_h_is_not_taken_for_figures() -> None:
    """`zpool iostat -pvy` (no -H) aligns columns with spaces and prints its class headers as words: not
    the format asked for, so every row is unavailable with the reason, and nothing raises."""
    reports = parse_report(real("2.3", "pv"), ["tank"])
    rows = [row for report in reports for row in report.rows]
    assert rows and all(row.rates is None and "fields" in row.reason for row in rows)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_parses_without_raising(text: str) -> None:
    for report in parse_report(text, ["tank"]):
        for row in report.rows:
            assert (row.rates is None) != (row.reason is None)
            assert row.name and all(ch.isprintable() for ch in row.name)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([line for line in real("2.3").splitlines() if line]), st.integers(0, 200),
       st.text(max_size=12), st.integers(0, 6))
def test_a_cut_or_garbled_real_line_makes_its_vdev_unavailable_with_the_reason(line: str, cut: int, junk: str,
                                                                              field: int) -> None:
    """A line cut anywhere, or one field replaced by anything, is either still a row of 7 numbers-or-names
    (its figures read) or a row without figures that says why; never an exception, never a wrong number."""
    for garbled in (line[:cut], "\t".join(junk if i == field else f for i, f in enumerate(line.split("\t")))):
        row = parse_row(garbled)
        fields = garbled.split("\t")
        if row.rates is not None:
            assert len(fields) == 7 and row.rates == tuple(float(f) for f in fields[3:])
        else:
            assert row.reason and ("fields" in row.reason or "not a number" in row.reason), row


def fake_zpool(tmp_path: Path, series: str = "2.3", *, fail: str | None = None) -> Path:
    """A `zpool` that replays the real text of `series`, one report each interval, or fails as zpool does
    for a pool it does not have (`fail`: its message)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "zpool"
    script.write_text(f"""#!{sys.executable}
import sys, time
argv = sys.argv[1:]
if argv[:6] != ["iostat", "-H", "-p", "-v", "-P", "-y"]:
    sys.exit("unexpected arguments: " + " ".join(argv))
FAIL = {fail!r}
if FAIL is not None:
    sys.stderr.write(FAIL + "\\n")
    sys.exit(1)
text = open({str(DATA / f"openzfs-{series}-HpvP.txt")!r}).read()
reports = ["tank\\t" + part for part in text.split("tank\\t") if part]
interval = float(argv[-1])
while True:
    for report in reports:
        time.sleep(interval)
        sys.stdout.write(report)
        sys.stdout.flush()
""")
    script.chmod(0o755)
    return bin_dir


@pytest.fixture
def zpool_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = fake_zpool(tmp_path)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


def test_one_zpool_process_streams_a_report_per_interval_kept_with_its_time(zpool_on_path: Path) -> None:
    sampler = VdevSampler(["tank"], interval=0.2).start()
    pid = sampler.pid
    time.sleep(1.2)
    assert pid is not None and Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[2:-1] == \
        [arg.encode() for arg in iostat_argv(["tank"], 0.2)[1:]]
    found = sampler.stop()
    assert not alive(pid)
    reports = found["samples"]
    expected = {row.name: list(row.rates) for row in parse_report(real("2.3"), ["tank"])[0].rows}
    assert len(reports) >= 3 and all(r["pool"] == "tank" and 0.1 < r["dt"] < 0.4 for r in reports), reports
    assert reports[0]["vdevs"] == expected
    assert [r["t"] for r in reports] == sorted(r["t"] for r in reports)
    assert found["cpu_s"] >= 0 and found["seconds"] >= 1.2 and "unavailable" not in found


def test_a_failing_fio_inside_the_sampler_leaves_no_zpool(zpool_on_path: Path) -> None:
    """A fio that fails raises out of the runner's `with self.sampler()` (measure/runner.py): its exit
    ends the zpool process and still returns what was sampled."""
    with pytest.raises(subprocess.CalledProcessError):
        with ConditionSampler([], ["tank"], interval=0.2) as sampler:
            pid = sampler.vdevs.pid
            time.sleep(0.5)
            subprocess.run(["fio", "--name=x", "--rw=nonsense"], capture_output=True, check=True)
    assert pid is not None and not alive(pid)
    assert sampler.result()["vdevs"]["samples"], sampler.result()["vdevs"]


SAMPLING = """
import sys, time
from stackbench.probe.conditions import ConditionSampler
with ConditionSampler([], ["tank"], interval=0.2) as sampler:
    print(sampler.vdevs.pid, flush=True)
    time.sleep(60)
"""


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_zpool_ends_with_the_process_that_samples_however_it_ends(zpool_on_path: Path, how: signal.Signals) -> None:
    """Ctrl-C unwinds the `with` (its stop kills zpool); SIGKILL runs no code of ours, and the kernel kills
    zpool (PR_SET_PDEATHSIG, base/spawn.popen's death_signal)."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    child = subprocess.Popen([sys.executable, "-c", SAMPLING], stdout=subprocess.PIPE, text=True, env=env)
    try:
        pid = int(child.stdout.readline())
        assert alive(pid)
        time.sleep(0.3)
        child.send_signal(how)
        child.wait(timeout=10)
        assert still_running([pid], seconds=5) == []
    finally:
        child.kill()
        child.wait()


def test_no_zpool_command_samples_nothing_and_fails_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool named in the facts on a machine without the zpool command (this one): no process, no samples,
    the reason noted, and the run's summary has no vdevs and no error."""
    monkeypatch.setenv("PATH", str(tmp_path))
    with ConditionSampler([], ["tank"], interval=0.05) as sampler:
        assert sampler.vdevs.pid is None
        time.sleep(0.15)
    found = sampler.result()
    assert found["vdevs"]["samples"] == [] and "zpool iostat" in found["vdevs"]["unavailable"][0]
    summary = summarize(found, None, fio_bytes=0.0)
    assert "vdevs" not in summary and any("zpool iostat" in u for u in summary["unavailable"])


def test_a_host_without_zfs_starts_no_zpool_at_all(zpool_on_path: Path) -> None:
    with ConditionSampler([], [], interval=0.05) as sampler:
        assert sampler.vdevs.pid is None
    assert "vdevs" not in sampler.result()


def test_a_zpool_that_fails_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = fake_zpool(tmp_path, fail="cannot open 'tank': no such pool")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    sampler = VdevSampler(["tank"], interval=0.2).start()
    deadline = time.monotonic() + 20  # until it has failed: a fixed sleep was too short on a loaded machine
    while sampler.process is not None and sampler.process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    found = sampler.stop()
    assert found["samples"] == []
    assert found["unavailable"] == ["zpool iostat: exited 1: cannot open 'tank': no such pool"]
