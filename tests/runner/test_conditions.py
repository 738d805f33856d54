"""The machine's conditions around every fio run (probe/conditions.py, analysis/conditions.py): sampled each
second in a thread of its own, stored per fio process and summed up per run, and a run disturbed by a real
CPU hog or a second fio on the same device says so, naming the cell, while a quiet device does not."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from stackbench.analysis.conditions import (FOREIGN_LIMIT, OTHER_CPU_LIMIT, PRESSURE_LIMIT, disturbance_warnings,
                                            disturbances, fio_window, summarize)
from stackbench.measure.runner import RunRequest, execute_run
from stackbench.measure.telemetry import job_ends, sampled_layers
from stackbench.model.plan import Plan, Workload
from stackbench.model.warning import WarningCode
from stackbench.probe import conditions as probe
from stackbench.probe.conditions import ConditionSampler, Counters, sample_between
from stackbench.store import Store

MiB = 1024**2


def _proc(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_missing_or_garbled_source_is_named_and_the_sample_goes_on(tmp_path: Path, monkeypatch) -> None:
    """A kernel without PSI, without /proc/vmstat and with a /proc/stat that does not parse cannot be made
    here, so the readers get a directory standing in for /proc: each missing or broken source is listed in
    the sample's `unavailable` and the others are still read; nothing raises."""
    root = _proc(tmp_path, {
        "stat": "cpu  garbage\nprocs_running 3\n",
        "loadavg": "2.50 1.00 0.50 3/100 42\n",
        "meminfo": "MemAvailable: 1000 kB\nCached: 10 kB\nDirty: 2 kB\nWriteback: 0 kB\n",
        "diskstats": "   7       3 loop3 10 0 80 5 20 0 160 9 0 12 14 0 0 0 0\n",
    })
    for name in ("read_pressure", "read_cpu", "read_load", "read_memory", "read_vmstat", "read_diskstats"):
        reader = getattr(probe, name)
        monkeypatch.setattr(probe, name, lambda *a, _r=reader, **k: _r(*a, **k, root=str(root)))
    before = Counters(("loop3", "sdz"), zfs=False)
    time.sleep(0.01)
    sample = sample_between(before, Counters(("loop3", "sdz"), zfs=False))
    assert {"pressure", "vmstat", "diskstats:sdz"} <= set(sample["unavailable"])
    assert sample["load1"] == 2.5  # no PSI: the load stands in
    assert sample["running"] == 3.0 and sample["mem"]["available"] == 1000 * 1024
    assert sample["disks"]["loop3"]["reads"] == 0 and "psi" not in sample


def _stat(pid: int, name: str, parent: int, utime: int, stime: int, cutime: int = 0, cstime: int = 0) -> str:
    """A /proc/PID/stat line: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt
    cmajflt utime stime cutime cstime ..."""
    return f"{pid} ({name}) S {parent} {pid} {pid} 0 -1 0 0 0 0 0 {utime} {stime} {cutime} {cstime} 20 0 1 0\n"


def test_fio_s_processes_the_kernel_s_threads_and_the_others_are_told_apart(tmp_path: Path) -> None:
    """fio's job processes each start a session of their own (seen with fio 3.33), so parentage finds them;
    a name with spaces and parentheses does not shift the fields; the others' reaped children count."""
    root = _proc(tmp_path, {
        "100/stat": _stat(100, "fio", 50, 10, 20),
        "101/stat": _stat(101, "fio", 100, 1, 300),  # a job process in a session of its own
        "2/stat": _stat(2, "kthreadd", 0, 0, 1),
        "7/stat": _stat(7, "kworker/u4:1-loop0", 2, 0, 40),
        "300/stat": _stat(300, "make (x) y", 1, 5, 5, 400, 100),  # its compilers are gone: cutime
        "301/stat": "301 (torn",
        f"{os.getpid()}/stat": _stat(os.getpid(), "python", 1, 999, 999),
        "self/stat": "ignored: not a pid",
    })
    found = probe.read_process_ticks(100, root=str(root))
    assert found == {"fio": {100: 30.0, 101: 301.0}, "kernel": {2: 1.0, 7: 40.0}, "other": {300: 510.0}}
    assert probe.read_process_ticks(None, root=str(root))["fio"] == {}


def test_fio_s_own_cpu_time_is_not_the_others_and_a_new_process_counts_from_its_start() -> None:
    def reading(t: float, fio: dict, other: dict, own: float) -> Counters:
        counters = Counters((), zfs=False, fio_pid=100)
        counters.t, counters.own, counters.processes = t, own, {"fio": fio, "kernel": {7: 0.0}, "other": other}
        counters.cpu = {"user": 0.0, "system": 0.0, "idle": 0.0, "iowait": 0.0, "steal": 0.0}
        return counters

    tick = probe.TICKS_PER_SECOND
    before = reading(0.0, {100: 0.0}, {300: 0.0, 301: 5.0 * tick}, own=0.0)
    now = reading(2.0, {100: 0.5 * tick, 101: 1.5 * tick}, {300: 1.0 * tick, 302: 1.0 * tick}, own=0.02 * tick)
    assert sample_between(before, now)["procs"] == {"fio": 1.0, "own": 0.01, "kernel": 0.0, "other": 1.0}
    unwatched = Counters((), zfs=False)
    assert unwatched.fio_pid is None and "procs" not in sample_between(unwatched, Counters((), zfs=False))


def test_the_devices_counters_are_read_at_the_reading_s_time_before_the_slow_sources(monkeypatch) -> None:
    """A reading's devices are what the layer table sets against fio's bytes second by second: read at its
    time `t`, not after every process's CPU time. Reading the processes is made slow here (0.3 s), as it is
    on the lab guests' emulated CPU, which this machine's cannot be; /proc/diskstats is the real one."""
    read_at: list[float] = []
    real_diskstats, real_processes = probe.read_diskstats, probe.read_process_ticks

    def diskstats(names, root=probe.PROC):  # noqa: ANN001, ANN202 - the real reader, timed
        read_at.append(time.time())
        return real_diskstats(names, root)

    def slow_processes(leader, root=probe.PROC):  # noqa: ANN001, ANN202 - the real reader, made slow
        time.sleep(0.3)
        return real_processes(leader, root)

    monkeypatch.setattr(probe, "read_diskstats", diskstats)
    monkeypatch.setattr(probe, "read_process_ticks", slow_processes)
    device = next(line.split()[2] for line in Path("/proc/diskstats").read_text().splitlines())
    counters = Counters((device,), zfs=False, fio_pid=os.getpid())
    assert device in counters.disks and counters.processes["fio"]
    assert read_at and read_at[0] - counters.t < 0.1


def test_cpu_pressure_is_a_disturbance_only_while_other_processes_used_the_cpu() -> None:
    """fio's own threads wait for a CPU at every completion (13-19 % CPU pressure on an idle two-core VM):
    without other processes using the CPU that is the measurement, not a disturbance. Runs stored before the
    processes were counted are judged on pressure alone."""
    busy = {"pressure": {"cpu": 30.0}, "procs": {"fio": 0.3, "own": 0.0, "kernel": 0.1, "other": 1.2}}
    assert disturbances(busy) == ["CPU pressure 30 % while other processes used 1.2 CPUs"]
    quiet = {"pressure": {"cpu": 30.0}, "procs": {"fio": 0.3, "own": 0.0, "kernel": 0.1, "other": 0.01}}
    assert disturbances(quiet) == []
    assert disturbances({"pressure": {"cpu": 30.0}}) == ["CPU pressure 30 %"]
    assert disturbances({**quiet, "pressure": {"cpu": 30.0, "memory": 12.0}}) == ["memory pressure 12 %"]
    assert disturbances({**busy, "pressure": {"cpu": PRESSURE_LIMIT - 1}}) == []
    # a kernel without PSI: more runnable tasks than CPUs stands in, under the same condition
    crowded = {"running_max": 6.0, "cpus": 2}
    assert disturbances(crowded) == ["6 runnable tasks on 2 CPUs"]
    assert disturbances({**crowded, "procs": quiet["procs"]}) == []
    assert disturbances({**crowded, "procs": busy["procs"]}) == ["6 runnable tasks on 2 CPUs"]


def test_the_thread_is_bounded_and_always_stopped() -> None:
    sampler = ConditionSampler(["no-such-device"], interval=0.01, max_samples=5)
    with pytest.raises(KeyboardInterrupt):
        with sampler:
            time.sleep(0.3)
            raise KeyboardInterrupt  # Ctrl-C in the middle of a cell
    assert not any(t.name == "stackbench-conditions" for t in threading.enumerate())
    result = sampler.result()
    assert len(result["samples"]) == 5 and result["dropped"] > 0
    assert all("diskstats:no-such-device" in s["unavailable"] for s in result["samples"])


def test_the_summary_counts_only_fio_s_window_and_the_bytes_fio_did_not_do() -> None:
    """Three seconds of 10 MB each on the device; fio measured the last 1.5 s and moved 12 MB of it."""
    second = 10e6 / 512
    samples = [{"t": 100.0 + i, "dt": 1.0, "psi": {"cpu": 20.0 * i},
                "disks": {"vdz": {"read_sectors": second, "write_sectors": 0, "reads": 100, "busy_ms": 500}}}
               for i in range(1, 4)]
    summary = summarize({"devices": ["vdz"], "samples": samples}, fio_window(103.0, 1.5), fio_bytes=12e6,
                        foreign_on="vdz")
    assert summary["seconds"] == 1.5
    assert summary["pressure"]["cpu"] == pytest.approx((40 * 0.5 + 60 * 1.0) / 1.5, abs=0.01)
    assert summary["disks"]["vdz"]["bytes"] == 15_000_000
    # the foreign I/O from the one second wholly inside the window, against fio's bytes prorated to it: the
    # second that straddles the window's start also holds what came before fio measured
    assert summary["foreign"] == {"device": "vdz", "bytes": 2_000_000, "share": 0.25}
    assert disturbances(summary) == ["CPU pressure 53 %", "I/O fio did not do on vdz (1.9 MiB, 25 % of fio's)"]
    short = summarize({"devices": ["vdz"], "samples": samples}, fio_window(103.0, 2.5), fio_bytes=24e6,
                      foreign_on="vdz")
    assert short["foreign"]["bytes"] == 800_000  # 2 whole seconds of 2.5: 20 MB against 19.2 MB of fio's
    layout = [samples[0], {**samples[1], "disks": {"vdz": {**samples[1]["disks"]["vdz"], "write_sectors": 8 * second}}},
              samples[2]]
    laid_out = summarize({"devices": ["vdz"], "samples": layout}, fio_window(103.0, 1.5), fio_bytes=12e6,
                         foreign_on="vdz")
    assert laid_out["foreign"]["bytes"] == 2_000_000  # a layout burst before the window is not foreign


def test_the_summary_keeps_what_the_table_needs() -> None:
    """Per device: bytes per direction, the requests' time (await), time in queue, the in-flight trend,
    what fio moved per direction and the ARC's hits; the keys runs already stored keep their meaning."""
    samples = [{"t": 100.0 + i, "dt": 1.0, "arc": {"hits": 90, "misses": 10},
                "disks": {"vdz": {"reads": 10, "writes": 100, "read_sectors": 80, "write_sectors": 800,
                                  "read_ms": 5, "write_ms": 50, "queue_ms": 2000 * i, "busy_ms": 1000,
                                  "in_flight": 2 * i}}}
               for i in range(1, 5)]
    summary = summarize({"devices": ["vdz"], "samples": samples}, fio_window(104.0, 4.0), fio_bytes=1.6e6,
                        fio_moved={"write": 1_638_400.0})
    assert summary["disks"]["vdz"] == {
        "reads": 40, "writes": 400, "bytes": 4 * 880 * 512, "util": 100.0,
        "inside": {"seconds": 4.0, "reads": 40, "writes": 400, "read_bytes": 4 * 80 * 512, "write_bytes": 4 * 800 * 512,
                   "busy_ms": 4000.0, "io_ms": 220.0, "queue_ms": 20000.0},
        "in_flight": {"mean": 5.0, "rise": 6.0}}
    # a window whose edges fall inside seconds: `inside` counts the two seconds wholly inside it, whole
    edges = summarize({"devices": ["vdz"], "samples": samples}, fio_window(103.5, 3.0), fio_bytes=1.2e6)
    assert edges["disks"]["vdz"]["inside"]["seconds"] == 2.0 and edges["disks"]["vdz"]["inside"]["writes"] == 200
    assert edges["disks"]["vdz"]["writes"] == 300  # the top-level keys as before: the edges prorated
    assert summary["fio_bytes"] == {"write": 1_638_400} and summary["arc"] == {"hits": 360, "misses": 40}


def test_the_queue_s_trend_is_read_from_each_second_s_time_in_queue_not_from_one_instant() -> None:
    """A lab guest's loop device under dm-delay (OpenZFS 2.3 boot of the CI, 2026-11-28): 16 requests in
    flight at dm-delay all the time, handed on to the loop device together; the in-flight gauge, one instant
    a second, read 0, 0, 16, 0 on the loop device (2.5 % utilised, 1.6 ms a request), a least-squares rise
    of 7 requests: "growing", so the loop device was named the busiest layer under dm-delay. Each second's
    time in queue says 0.45 requests on average, level: no growth."""
    samples = [{"t": 100.0 + i, "dt": 1.0,
                "disks": {"loop0": {"writes": 285, "write_sectors": 2280, "write_ms": 450, "queue_ms": 450,
                                    "busy_ms": 25, "in_flight": level}}}
               for i, level in enumerate((0, 0, 16, 0), start=1)]
    summary = summarize({"devices": ["loop0"], "samples": samples}, fio_window(104.0, 4.0), fio_bytes=4.6e6)
    assert summary["disks"]["loop0"]["in_flight"] == {"mean": 0.45, "rise": 0.0}
    gauge_only = [{**s, "disks": {"loop0": {k: v for k, v in s["disks"]["loop0"].items() if k != "queue_ms"}}}
                  for s in samples]  # a run stored before the time in queue was kept: the gauge, as then
    assert summarize({"devices": ["loop0"], "samples": gauge_only}, fio_window(104.0, 4.0),
                     fio_bytes=4.6e6)["disks"]["loop0"]["in_flight"]["rise"] > 2


def with_conditions(measured, summaries):  # noqa: ANN001, ANN201 - synthetic cells
    """`measured` (a synthetic cell) with each of its runs' conditions summaries."""
    from dataclasses import replace

    replicates = [{**r, "conditions": c} for r, c in zip(measured.measurement["replicates"], summaries)]
    return replace(measured, measurement={**measured.measurement, "replicates": replicates})


def test_the_warning_names_each_disturbed_cell_once_with_its_worst_run() -> None:
    from synthetic import cell

    busy = with_conditions(cell(rw="randwrite", runs=[1000.0, 1010.0, 990.0]), [
        {"pressure": {"cpu": 12.0}}, {"pressure": {"cpu": 40.0}, "scrubs": {"tank": "scrub in progress"}},
        {"pressure": {"cpu": 2.0}}])
    quiet = with_conditions(cell(rw="randread", runs=[1000.0, 1010.0]), [{"pressure": {"cpu": 1.0}}] * 2)
    shared = with_conditions(cell(rw="read", runs=[1000.0, 1010.0]),
                             [{"foreign": {"device": "sda", "bytes": 5 * MiB, "share": 0.5}}, {}])
    [warning] = disturbance_warnings([busy, quiet, shared])
    assert warning.code == WarningCode.DISTURBED and warning.subject == "4K QD4 rnd write, 4K QD4 seq read"
    assert "4K QD4 rnd write (2 runs: CPU pressure 40 %, a scrub on tank)" in warning.text
    assert "4K QD4 seq read (1 run: I/O fio did not do on sda (5.0 MiB, 50 % of fio's))" in warning.text
    assert disturbance_warnings([quiet]) == []


def test_a_warning_about_many_cells_counts_them_and_names_the_worst_three() -> None:
    from synthetic import cell

    busy = [with_conditions(cell(bs=bs, runs=[1000.0, 1010.0]),
                            [{"pressure": {"cpu": pressure}}, {"pressure": {"cpu": 1.0}}])
            for bs, pressure in zip((4096, 8192, 16384, 65536, 131072, 1048576), (30.0, 60.0, 20.0, 50.0, 40.0, 25.0))]
    quiet = with_conditions(cell(rw="randread", runs=[1000.0, 1010.0]), [{"pressure": {"cpu": 1.0}}] * 2)
    [warning] = disturbance_warnings([*busy, quiet])
    assert warning.subject == "6 of 7 cells"
    assert "busy with something else in 6 runs; the worst: 8K QD4 rnd write (1 run: CPU pressure 60 %); " \
           "64K QD4 rnd write (1 run: CPU pressure 50 %); 128K QD4 rnd write (1 run: CPU pressure 40 %); " \
           "and 3 more cells" in warning.text
    many = [with_conditions(cell(bs=4096 * (1 + n), runs=[1000.0]), [{"pressure": {"cpu": 30.0}}]) for n in range(40)]
    assert len(str(disturbance_warnings(many)[0])) <= len(str(warning)) + 10  # as long for 40 cells as for 6


def test_without_a_discovered_stack_the_devices_and_pools_come_from_the_target_s_facts() -> None:
    facts = {"target": {"block_devices": [{"name": "sda1"}, {"name": "sda"}], "zfs_dataset": "tank/vm/disk"}}
    assert sampled_layers(facts) == (["sda1", "sda"], ["tank"])
    assert sampled_layers({**facts, "stack": {"version": None, "error": "OSError: ..."}}) == (["sda1", "sda"], ["tank"])
    assert sampled_layers({}) == ([], [])


def test_the_jobs_of_one_fio_process_get_windows_back_from_its_end() -> None:
    """synclat and slog run a round's cells as stonewalled jobs of one fio process: each job ends where the
    later jobs' ramps and runtimes begin."""
    from types import SimpleNamespace

    jobs = [SimpleNamespace(directions=[SimpleNamespace(runtime_ms=ms)]) for ms in (2000, 3000, 1000)]
    workloads = [Workload(rw="randwrite", bs=4096, iodepth=1, runtime=2, ramp_time=r) for r in (1.0, 0.5, 0.25)]
    assert job_ends(1000.0, jobs, workloads) == [995.25, 998.75, 1000.0]
    assert job_ends(None, jobs, workloads) == [None, None, None]


# -- real runs on a private loop device --------------------------------------------------------------------


def _plan(rw: str = "randread") -> Plan:
    return Plan("custom", (Workload(rw=rw, bs=4096, iodepth=4, size=16 * MiB, runtime=3, direct=True),), runs=2)


def _measure(store: Store, target: Path):  # noqa: ANN202 - the stored run
    return execute_run(store, RunRequest(target=target, plan=_plan()))


@pytest.fixture
def hog() -> Iterator[None]:
    """Busy loops, two per CPU: a real CPU hog for the duration of the test."""
    processes = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2 * (os.cpu_count() or 1))]
    try:
        yield
    finally:
        for process in processes:
            process.send_signal(signal.SIGKILL)
            process.wait()


def _summaries(run) -> list[dict]:  # noqa: ANN001 - a stored run
    return [r["conditions"] for c in run.cells for r in c.measurement["replicates"]]


def _sectors_written(device: str) -> int:
    """The device's sectors written since it was made (/sys/block/DEV/stat, field 7)."""
    return int(Path(f"/sys/block/{device}/stat").read_text().split()[6])


@pytest.mark.slow
def test_the_private_device_does_no_io_of_its_own(ext4_loop: Path, blank_loop: Path) -> None:
    """The quiet-device tests judge I/O fio did not do on the test's own loop device, so nothing but fio may
    write to it: ext4's lazy init zeroed the inode tables, 4 MiB, within 5 s of the mount (the kernel's
    random start delay), 1 % of a quiet run's bytes here and over 5 % of a run slowed by a busy machine.
    Seven seconds after the mount, nothing at all has been written."""
    device = blank_loop.name  # the device under ext4_loop
    before = _sectors_written(device)
    time.sleep(7)
    assert _sectors_written(device) == before


@pytest.mark.slow
def test_a_quiet_device_counts_fio_s_own_io_and_no_foreign(tmp_path: Path, ext4_loop: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run = _measure(store, ext4_loop)
    devices = sampled_layers(run.facts)[0]
    device = devices[0]
    # the discovered stack (facts.stack): the loop device, then the layers under its backing file
    assert device.startswith("loop") and len(devices) >= 2
    assert all(name in s["devices"] for s in store.conditions_of(run.id) for name in devices)
    summaries = _summaries(run)
    assert len(summaries) == 2
    for summary in summaries:
        fio_bytes = summary["disks"][device]["bytes"] - summary["foreign"]["bytes"]
        assert summary["foreign"]["share"] < 0.05
        assert summary["disks"][device]["bytes"] == pytest.approx(fio_bytes, rel=0.05)
        assert summary["seconds"] == pytest.approx(3, abs=0.2)
    stored = store.conditions_of(run.id)
    assert len(stored) == 2 and all(len(s["samples"]) >= 3 and s["devices"][0] == device for s in stored)
    disturbed = [w for w in run.warnings if w.code == WarningCode.DISTURBED]
    assert not any("did not do" in w.text for w in disturbed)
    if all(not disturbances(s) for s in summaries):  # the shared machine's own CPU load is not the test's to control
        assert disturbed == []


@pytest.mark.slow
def test_a_second_fio_on_the_same_device_makes_the_warning_appear(tmp_path: Path, ext4_loop: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    other = subprocess.Popen(["fio", "--name=other", f"--filename={ext4_loop / 'other-file'}", "--size=8m",
                              "--rw=randwrite", "--bs=64k", "--direct=1", "--time_based", "--runtime=60"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1)
        run = _measure(store, ext4_loop)
    finally:
        other.terminate()
        other.wait()
    assert all(s["foreign"]["share"] >= FOREIGN_LIMIT for s in _summaries(run))
    disturbed = [w for w in run.warnings if w.code == WarningCode.DISTURBED]
    assert len(disturbed) == 1 and disturbed[0].subject == "4K QD4 rnd read"
    assert "I/O fio did not do on loop" in disturbed[0].text


@pytest.mark.slow
def test_a_cpu_hog_makes_the_warning_appear(tmp_path: Path, ext4_loop: Path, hog: None) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run = _measure(store, ext4_loop)
    assert all(s["pressure"]["cpu"] >= 50 for s in _summaries(run))
    assert all(s["procs"]["other"] >= 1.0 for s in _summaries(run))  # the busy loops: two CPUs' worth and more
    disturbed = [w for w in run.warnings if w.code == WarningCode.DISTURBED]
    assert len(disturbed) == 1 and disturbed[0].subject == "4K QD4 rnd read"
    assert "CPU pressure" in disturbed[0].text and "while other processes used" in disturbed[0].text


@pytest.mark.slow
def test_a_quiet_pair_compares_without_a_difference_and_a_hogged_run_with_one(tmp_path: Path,
                                                                               ext4_loop: Path) -> None:
    """Issue 35's acceptance: two runs of the same cell one after the other on a quiet device are compared
    with no CONDITIONS_DIFFER (whatever their verdict), and a run with busy loops beside it is: the other
    processes' CPU time, two CPUs' worth and more, against none."""
    from stackbench.analysis.compare import compare_runs

    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    first, second = _measure(store, ext4_loop), _measure(store, ext4_loop)
    quiet = compare_runs(first, second)
    others = [s["procs"]["other"] for s in _summaries(first) + _summaries(second)]
    if max(others) < OTHER_CPU_LIMIT:  # this machine's other load is measured, not the test's to control
        assert not any(w.code == WarningCode.CONDITIONS_DIFFER for w in quiet.warnings), quiet.warnings
    processes = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2 * (os.cpu_count() or 1))]
    try:
        hogged = _measure(store, ext4_loop)
    finally:
        for process in processes:
            process.kill()
            process.wait()
    [differs] = [w for w in compare_runs(first, hogged).warnings if w.code == WarningCode.CONDITIONS_DIFFER]
    assert "CPU used by other processes" in differs.text and compare_runs(first, hogged).weak


@pytest.mark.slow
def test_fio_s_own_cpu_pressure_is_not_a_disturbance(tmp_path: Path, ext4_loop: Path) -> None:
    """Four fio jobs reading a cached file on two CPUs stall one another for a CPU: pressure well over the
    limit, all of it fio's. It is counted as fio's time and no warning follows from it; a warning the run
    does give must name other processes' CPU time (this machine's other load is not the test's to
    control, and is measured)."""
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    jobs = 2 * (os.cpu_count() or 1)
    plan = Plan("custom", (Workload(rw="randread", bs=4096, iodepth=1, numjobs=jobs, size=16 * MiB, runtime=3,
                                    ioengine="psync"),), runs=2)
    run = execute_run(store, RunRequest(target=ext4_loop, plan=plan))
    summaries = _summaries(run)
    assert all(s["pressure"]["cpu"] >= PRESSURE_LIMIT for s in summaries)  # fio made the pressure itself
    # fio's processes and the loop device's kernel workers serving them: half the machine and more
    assert all(s["procs"]["fio"] + s["procs"]["kernel"] >= 0.5 * (os.cpu_count() or 1) for s in summaries)
    for summary in summaries:
        if summary["procs"]["other"] < OTHER_CPU_LIMIT:
            assert not any("CPU" in phrase for phrase in disturbances(summary))
    for warning in run.warnings:
        if warning.code == WarningCode.DISTURBED and "CPU pressure" in warning.text:
            assert "while other processes used" in warning.text


@pytest.mark.slow
def test_the_cells_of_one_fio_process_share_its_seconds_and_leave_foreign_io_out(tmp_path: Path,
                                                                                  ext4_loop: Path) -> None:
    """synclat's and slog's rounds: one fio process, a stonewalled job per cell. The seconds are stored
    once per process; a job's window is known only to within fio's gaps between jobs, which moved the next
    job's bytes into it (a 64K job's writes counted as 5x foreign I/O of a 4K one), so foreign I/O is not
    judged there."""
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    workloads = tuple(Workload(rw="randwrite", bs=bs, iodepth=1, size=16 * MiB, runtime=1, direct=True)
                      for bs in (4096, 65536))
    run = execute_run(store, RunRequest(target=ext4_loop, plan=Plan("synclat", workloads, runs=2, one_process=True)))
    summaries = _summaries(run)
    assert len(summaries) == 4 and all("foreign" not in s for s in summaries)
    assert all("foreign (one fio process, several jobs)" in s["unavailable"] for s in summaries)
    assert all(s["seconds"] == pytest.approx(1, abs=0.2) for s in summaries)
    assert len(store.conditions_of(run.id)) == 2  # one per round's fio process
