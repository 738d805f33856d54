"""Does `stackbench tune` keep what helps, keep nothing that does not, and restore everything after a kill?

On a loop device with ext4 that this script creates (and removes), through the installed CLI:

Every session runs with `--force`: its calibration (4 A/A rounds, printed with each session) finds this
kind of machine too noisy for a 5 % change, and the goals are about what tune then keeps.

- planted: read-ahead set to 0 under a 4K sequential buffered read; `tune --knob blockdev.read_ahead_kb=128
  --apply` should keep the fix in every session (docs/tune.md, "Acceptance goals": 10/10, each
  <= 3 min), then `--rollback` brings the planted 0 back for the next session;
- null: read-ahead 128 -> 8192 under 4K random reads with O_DIRECT, which read-ahead does not touch: no
  session may keep it (G2: 0 keeps in 60);
- true null: a user knob (`--knobs FILE.toml`) whose value goes to a file nothing reads, 1 -> 2, under the
  same O_DIRECT random reads: the `true` knob of G2, no session may keep it;
- races: the same two with every candidate raced (`--knob blockdev.read_ahead_kb=128,512,2048,8192` from the
  planted 0; 512, 2048, 8192 from 128 under O_DIRECT random reads, all null): the winner of the planted race
  kept in every session (its proof's verdict), the null races' winners kept in none;
- throttle: a controlled +10 %: tune runs inside a cgroup-v1 blkio child this script makes, whose read IOPS
  limit on the script's loop device is planted at `--throttle-iops` (1000); a user knob sets that limit, and
  the session tries 10 % more (1100) under 4K random O_DIRECT reads (the blkio throttle sees what a process
  submits, not the page cache's reads). Both arms run at their limit, far below what the device does, so
  the true ratio is 1.10. G4: kept in >= 80 % of the sessions whose calibration reports a noise <= 5 %;
  only those sessions count, and the summary says how many qualified;
- whole: the design's block-device session (G12): read-ahead raced over 128, 512, 2048, 8192 from a planted 0,
  the scheduler raced over every other one the device offers, and `nr_requests` one value, on a one-cell
  plan (4K sequential buffered read), with calibration and confirmation: its wall time against 10 minutes,
  then `--rollback` must bring back every view of the three;
- kills (G5, bench/tune_kills.py): a dry run (`tune` without `--apply`) must change no view and write no
  journal; then sessions are killed with SIGKILL: one-knob sessions (read-ahead 0 -> 128) at a random
  instant 1 to `--kill-within` s after their start (calibration, reversibility check, rounds or
  confirmation), followed by the next stackbench command (`stackbench runs`); races of 128, 512, 2048 and
  8192 from the planted 0 at a random instant of their race, followed by `tune --rollback SESSION`; and
  races killed at the injected crash points (after-intent, after-apply, mid-undo, at passes spread over
  1-8: different candidates, the reversibility checks and the race's switches; a mid-undo kill's first
  rollback is itself killed mid-undo, and a second finishes), followed by `--rollback`. After every kill,
  all of: every view of every subject the journal snapshotted equal to its snapshot (and the loop device's
  queue as before the session), no scratch file and no run's job directory left, no stray process (fio)
  in either, the session's journal closed. `G5: N/N` counts the kills that passed all four.

`--load` runs all of it under a background load the script starts and stops (bench/ab_truth.py's hogs:
two busy loops per CPU and a fio writing 64K O_DIRECT to a file of its own on the same loop device): G2 asks
for 0 keeps idle and loaded.

Never a host-wide setting: the read-ahead, scheduler and nr_requests of the script's own loop device (put
back as found before it is detached) and the throttle of its own cgroup (removed at the end).

Prints each session and a summary to paste into bench/RESULTS.md. Root only (a loop device, a mount, a
cgroup).

    python bench/tune_truth.py --planted 10 --null 60 --true-null 60 --kills 10 --race-kills 10 --injected 5 \\
        --planted-races 10 --null-races 60 --throttle 30 --whole 1
    python bench/tune_truth.py --load --planted 0 --null 60 --true-null 60 --kills 0 --planted-races 0 \\
        --null-races 0 --race-kills 0 --injected 0 --dry-runs 0 --throttle 0 --whole 0
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from ab_truth import start_hog, stop_hog
from claims_truth import CGROUP_ROOT, joiner, throttled_cgroup
from tune_kills import PLANTED, QUEUE_VIEWS, RACE, KillBench, injected_point, queue_state

NULL = ["--rw", "randread", "--bs", "4k", "--qd", "16", "--direct"]
WHOLE_GOAL_S = 600.0
CALM_NOISE = 0.05  # G4 counts a throttle session only when its calibration says the noise is at most this

# A user knob's read and apply: the value after PREFIX on a line of FILE ("0" when no line has it). The
# throttle's FILE is the cgroup's blkio.throttle.read_iops_device (PREFIX the device's MAJ:MIN; writing a
# limit of 0 removes it), the true null's a file in the work directory that nothing reads.
SETTING = """import sys
from pathlib import Path
path, prefix, verb = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
if verb == "get":
    lines = [line.split() for line in path.read_text().splitlines()]
    print(next((words[1] for words in lines if len(words) == 2 and words[0] == prefix), "0"))
else:
    path.write_text(f"{prefix} {sys.argv[4]}\\n")
"""


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stackbench", *args], capture_output=True, text=True,
                          env={**os.environ, **env})


def session(bench: Path, knobs: list[str], plan: list[str], common: list[str], env: dict[str, str],
            preexec: Callable[[], None] | None = None) -> tuple[dict, float]:
    clock = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "stackbench", "tune", "-t", str(bench), *knobs, "--apply", "--json",
                           "--force", *plan, *common], capture_output=True, text=True, env={**os.environ, **env},
                          preexec_fn=preexec)
    if done.returncode != 0:
        raise SystemExit(f"tune failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    return json.loads(done.stdout), time.monotonic() - clock


def described(knob: dict) -> str:
    """One knob of a session's JSON as a line: its decision, the proof's verdict and ratio, the race."""
    compare = knob.get("compare") or {}  # a race whose every candidate was dropped proves nothing
    race = knob.get("race")
    raced = (f"race of {len(race['candidates'])}: {race['rounds']} rounds, "
             f"{len(race['dropped'])} dropped, winner {race['winner']}; ") if race else ""
    return (f"{knob['knob']} {knob['from']} -> {knob['to']}: {knob['decision']} ({compare.get('verdict', '-')}, "
            f"{compare.get('geomean_ratio') or 0:.2f}x) after {raced}{knob['rounds']} rounds ({knob['stop']})")


def confirmed(result: dict) -> str:
    """What the session left: the confirmation's decision where one ran (a knob's `kept` is provisional until
    the kept set is proven against the original afresh), and what is set at the end."""
    confirmation = result.get("confirmation")
    said = f"confirmation: {confirmation['decision']}" if confirmation else "no confirmation"
    return f"{said}, left set: {', '.join(result['now_set']) or 'nothing'}"


def user_knob(path: Path, knob_id: str, setting: Path, prefix: str, values: list[int], helper: Path) -> Path:
    """A TOML file declaring one user knob over SETTING's line PREFIX, read and written by `helper`."""
    words = [sys.executable, str(helper), str(setting), prefix]
    path.write_text(f"""[[knob]]
id = "{knob_id}"
read = {json.dumps([*words, "get"])}
apply = {json.dumps([*words, "set", "{value}"])}
undo = "set-original"
values = {json.dumps(values)}
verify = "number"
safety = "safe"
cost = "instant"
""")
    return path


def restore_queue(device: str, state: dict[str, str]) -> None:
    """Put back what `queue_state` read: the scheduler first, since writing it resets nr_requests. A loop
    device keeps its queue settings after it is detached, so the next user of the device would see them."""
    queue = Path(f"/sys/block/{Path(device).name}/queue")
    scheduler = state["scheduler"].split("[")[-1].split("]")[0]
    if queue_state(device)["scheduler"] != state["scheduler"]:
        (queue / "scheduler").write_text(scheduler)
    for view in ("nr_requests", "read_ahead_kb"):
        (queue / view).write_text(state[view])


@contextmanager
def background_load(enabled: bool, directory: Path) -> Iterator[str]:
    """bench/ab_truth.py's CPU and I/O hogs, started here and stopped whatever happens; what they are."""
    if not enabled:
        yield "idle"
        return
    directory.mkdir(exist_ok=True)
    hogs = start_hog("cpu", str(directory))
    try:
        hogs += start_hog("io", str(directory))
        yield f"under load: {len(hogs) - 1} busy loops and a fio writing 64K O_DIRECT on the same loop device"
    finally:
        stop_hog(hogs, str(directory))


def whole_session(bench: Path, device: str, common: list[str], env: dict[str, str]) -> tuple[dict, float, str]:
    """G12: three block knobs, two of them raced, from a planted read-ahead of 0, then `--rollback`: the
    session, its wall time, and what the rollback did not bring back ("" when every view is back)."""
    queue = Path(f"/sys/block/{Path(device).name}/queue")
    (queue / "read_ahead_kb").write_text("0")
    planted = queue_state(device)
    requests = "64" if planted["nr_requests"] != "64" else "32"  # lower than a loop's 128: valid whatever scheduler
    result, took = session(bench, ["--knob", "blockdev.read_ahead_kb", "--knob", "blockdev.scheduler",
                                   "--knob", f"blockdev.nr_requests={requests}"], PLANTED, common, env)
    back = cli("tune", "--rollback", result["session"], env=env)
    now = queue_state(device)
    wrong = [f"{view} {now[view]} instead of {planted[view]}" for view in QUEUE_VIEWS if now[view] != planted[view]]
    if back.returncode != 0:
        wrong.append(f"--rollback exited {back.returncode}: {back.stderr.strip()[-200:]}")
    return result, took, "; ".join(wrong)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--planted", type=int, default=10)
    parser.add_argument("--null", type=int, default=60)
    parser.add_argument("--true-null", type=int, default=60)
    parser.add_argument("--kills", type=int, default=10, help="one-knob sessions killed at a random instant")
    parser.add_argument("--kill-within", type=float, default=60.0,
                        help="seconds after its start within which each one-knob session is killed (from 1)")
    parser.add_argument("--planted-races", type=int, default=10)
    parser.add_argument("--null-races", type=int, default=60)
    parser.add_argument("--race-kills", type=int, default=10, help="races killed at a random instant")
    parser.add_argument("--race-kill-within", type=float, default=60.0,
                        help="seconds after the race's first switch within which each race is killed")
    parser.add_argument("--injected", type=int, default=5,
                        help="races killed at an injected crash point (after-intent, after-apply, mid-undo in turn)")
    parser.add_argument("--dry-runs", type=int, default=1,
                        help="dry runs checked to change nothing and write no journal")
    parser.add_argument("--throttle", type=int, default=30, help="sessions of the controlled +10 %% effect")
    parser.add_argument("--throttle-iops", type=int, default=1000,
                        help="the planted read IOPS limit; the session tries 10 %% more")
    parser.add_argument("--whole", type=int, default=1, help="whole block-device sessions (G12)")
    parser.add_argument("--load", action="store_true", help="run everything under a background CPU and I/O load")
    parser.add_argument("--size", default="256M")
    parser.add_argument("--runtime", default="2")
    parser.add_argument("--ramp", default="0.5")
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    if args.throttle and not (CGROUP_ROOT / "blkio.throttle.read_iops_device").exists():
        raise SystemExit(f"Error: no cgroup-v1 blkio hierarchy at {CGROUP_ROOT}: the throttle sessions need one; "
                         "run with --throttle 0 to leave them out")
    random.seed(args.seed)
    work = Path(tempfile.mkdtemp(prefix="tune-truth-", dir="/var/tmp"))
    state = Path(tempfile.mkdtemp(prefix="tune-truth-state-"))
    env = {"XDG_STATE_HOME": str(state)}
    common = ["--size", args.size, "--runtime", args.runtime, "--ramp", args.ramp, "--db", str(state / "truth.db")]
    helper = work / "setting.py"
    helper.write_text(SETTING)
    image = work / "disk.img"
    with open(image, "wb") as handle:
        handle.truncate(2 * 1024**3)
    device = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True,
                            check=True).stdout.strip()
    mount = work / "mnt"
    mount.mkdir()
    read_ahead = Path(f"/sys/block/{Path(device).name}/queue/read_ahead_kb")
    original = queue_state(device)
    try:
        subprocess.run(["mkfs.ext4", "-q", device], check=True)
        subprocess.run(["mount", device, str(mount)], check=True)
        bench = mount / "bench"
        bench.mkdir()

        def sessions(name: str, count: int, plant: Callable[[], None], knobs: list[str], plan: list[str],
                     preexec: Callable[[], None] | None = None) -> list[tuple[dict, float]]:
            """`count` sessions, each from the state `plant` makes and rolled back after: their JSON and time."""
            done = []
            for index in range(count):
                plant()
                result, took = session(bench, knobs, plan, common, env, preexec)
                done.append((result, took))
                print(f"{name} {index + 1}: {described(result['knobs'][0])}; {confirmed(result)}, {took:.0f} s "
                      f"({result['calibration']['said']})", flush=True)
                cli("tune", "--rollback", result["session"], env=env)
            return done

        def read_ahead_at(value: str) -> Callable[[], None]:
            return lambda: read_ahead.write_text(value)

        def kept(done: list[tuple[dict, float]], of: int) -> str:
            """Sessions that left the knob set at their end (after the confirmation) out of `of`, and how many
            more the knob's own rounds kept but the confirmation undid: a knob's `kept` alone is not the
            session's."""
            final = sum(bool(result["now_set"]) for result, _ in done)
            undone = sum(result["knobs"][0]["decision"] == "kept" and not result["now_set"] for result, _ in done)
            return f"{final}/{of}" + (f" ({undone} more kept by the knob's rounds, undone by the confirmation)"
                                      if undone else "")

        def times(done: list[tuple[dict, float]]) -> str:
            seconds = [took for _, took in done]
            return f"mean {sum(seconds) / max(1, len(seconds)):.0f} s, longest {max(seconds, default=0):.0f} s"

        with background_load(args.load, mount / "load") as condition:
            print(f"condition: {condition}", flush=True)
            planted = sessions("planted", args.planted, read_ahead_at("0"), ["--knob", "blockdev.read_ahead_kb=128"],
                               PLANTED)
            null = sessions("null", args.null, read_ahead_at("128"), ["--knob", "blockdev.read_ahead_kb=8192"], NULL)
            noop = work / "noop"
            noop_knobs = user_knob(work / "noop.toml", "truth.noop", noop, "noop", [1, 2], helper)
            true_null = sessions("true null", args.true_null, lambda: noop.write_text("noop 1\n"),
                                 ["--knobs", str(noop_knobs), "--knob", "truth.noop=2"], NULL)
            races = sessions("planted race", args.planted_races, read_ahead_at("0"), ["--knob", RACE], PLANTED)
            null_races = sessions("null race", args.null_races, read_ahead_at("128"),
                                  ["--knob", "blockdev.read_ahead_kb=512,2048,8192"], NULL)
            throttled: list[tuple[dict, float]] = []
            if args.throttle:
                read_ahead.write_text(original["read_ahead_kb"])
                rdev = os.stat(device).st_rdev
                node, more = f"{os.major(rdev)}:{os.minor(rdev)}", round(args.throttle_iops * 1.1)
                with throttled_cgroup(device, 0, args.throttle_iops) as group:
                    limits = group / "blkio.throttle.read_iops_device"
                    knobs = user_knob(work / "throttle.toml", "truth.throttle", limits, node,
                                      [args.throttle_iops, more], helper)
                    throttled = sessions("throttle", args.throttle,
                                         lambda: limits.write_text(f"{node} {args.throttle_iops}\n"),
                                         ["--knobs", str(knobs), "--knob", f"truth.throttle={more}"], NULL,
                                         preexec=joiner(group))
            wholes = []
            for index in range(args.whole):
                result, took, wrong = whole_session(bench, device, common, env)
                wholes.append((took, wrong))
                print(f"whole {index + 1}: {took:.0f} s; " + "; ".join(described(k) for k in result["knobs"])
                      + f"; confirmation: {(result['confirmation'] or {}).get('decision', 'none')}"
                      + f"; rollback: {wrong or 'every view back'}", flush=True)
            kills = KillBench(bench, device, state, state / "tmp", common)
            kills.tmp.mkdir()
            dry = [kills.dry_run() for _ in range(args.dry_runs)]
            for index, wrong in enumerate(dry):
                said = "nothing changed, no journal" if not wrong else "CHANGED: " + "; ".join(wrong)
                print(f"dry run {index + 1}: {said}", flush=True)
            g5 = []
            for name, count, kill in (
                    ("kill", args.kills, lambda _: kills.random_kill(args.kill_within)),
                    ("race kill", args.race_kills, lambda _: kills.race_kill(args.race_kill_within)),
                    ("injected kill", args.injected, lambda index: kills.injected_kill(injected_point(index)))):
                for index in range(count):
                    wrong, how = kill(index)
                    g5.append((name, not wrong, "the session had ended" not in how))
                    said = "restored" if not wrong else "NOT RESTORED: " + "; ".join(wrong)
                    print(f"{name} {index + 1} ({how}): {said}", flush=True)
        print(f"\n{condition}")
        print(f"planted read_ahead_kb=0: kept in {kept(planted, args.planted)}, {times(planted)}")
        print(f"null read_ahead_kb 128 -> 8192 under O_DIRECT random reads: kept in {kept(null, args.null)}")
        print(f"true null (a value nothing reads) 1 -> 2 under O_DIRECT random reads: "
              f"kept in {kept(true_null, args.true_null)}")
        print(f"planted read_ahead_kb=0 raced over 128, 512, 2048, 8192: kept in {kept(races, args.planted_races)}, "
              f"{times(races)}")
        print(f"null race 128 -> 512, 2048, 8192 under O_DIRECT random reads: "
              f"kept in {kept(null_races, args.null_races)}")
        if args.throttle:
            calm = [(result, took) for result, took in throttled if result["calibration"]["noise"] <= CALM_NOISE]
            print(f"controlled +10 % (read IOPS limit {args.throttle_iops} -> {round(args.throttle_iops * 1.1)} in "
                  f"the bench's cgroup): kept in {kept(calm, len(calm))} sessions whose calibration reported noise "
                  f"<= {CALM_NOISE:.0%} ({len(calm)} of {args.throttle} qualified; goal >= 80 %); "
                  f"kept in {kept(throttled, args.throttle)} of all")
        for index, (took, wrong) in enumerate(wholes):
            print(f"whole block-device session {index + 1} (3 knobs, 2 raced, one cell): {took:.0f} s "
                  f"(goal <= {WHOLE_GOAL_S:.0f} s: {'met' if took <= WHOLE_GOAL_S else 'NOT met'}), "
                  f"rollback: {wrong or 'every view back'}")
        if args.dry_runs:
            print(f"dry run (tune without --apply): changed nothing and wrote no journal in "
                  f"{sum(not wrong for wrong in dry)}/{args.dry_runs}")
        for name, count, what in (("kill", args.kills, "at a random instant of a one-knob session"),
                                  ("race kill", args.race_kills, "at a random instant of a race of 4"),
                                  ("injected kill", args.injected, "at an injected crash point of a race of 4")):
            if count:
                mine = [(ok, ran) for kind, ok, ran in g5 if kind == name]
                print(f"kill -9 {what}: restored {sum(ok for ok, _ in mine)}/{count} "
                      f"({sum(ran for _, ran in mine)} killed while running)")
        if g5:
            print(f"G5: {sum(ok for _, ok, _ in g5)}/{len(g5)} kills left every view equal to its snapshot, no "
                  "scratch file, no stray process, the journal closed")
    finally:
        restore_queue(device, original)
        subprocess.run(["umount", str(mount)], capture_output=True)
        subprocess.run(["losetup", "-d", device], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
