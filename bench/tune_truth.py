"""Does `stackbench tune` keep what helps, keep nothing that does not, and restore everything after a kill?

On a loop device with ext4 that this script creates (and removes), through the installed CLI:

Every session runs with `--force`: its calibration (4 A/A rounds, printed with each session) finds this
kind of machine too noisy for a 5 % change, and the goals are about what tune then keeps.

- planted: read-ahead set to 0 under a 4K sequential buffered read; `tune --knob blockdev.read_ahead_kb=128
  --apply` should keep the fix in every session (docs/tune.md, "Acceptance goals": 10/10, each
  <= 3 min), then `--rollback` brings the planted 0 back for the next session;
- null: read-ahead 128 -> 8192 under 4K random reads with O_DIRECT, which read-ahead does not touch: no
  session may keep it (G2: 0 keeps in 60);
- races: the same two with every candidate raced (`--knob blockdev.read_ahead_kb=128,512,2048,8192` from the
  planted 0; 512, 2048, 8192 from 128 under O_DIRECT random reads, all null): the winner of the planted race
  kept in every session (its proof's verdict), the null races' winners kept in none;
- kills: a session killed with SIGKILL at a random instant of its rounds, then the next stackbench command:
  the read-ahead must be back at its value before the session, the journal closed and the scratch
  directory empty (G5);
- race kills: a session racing 128, 512, 2048 and 8192 from the planted 0, killed with SIGKILL at a random
  instant of its race (after the candidates' reversibility checks, while it switches arms), then
  `tune --rollback SESSION`: every view of every snapshot the journal took must read as the snapshot, the
  journal closed, and after the next command no scratch file.

Prints each session and a summary to paste into bench/RESULTS.md. Root only (a loop device and a mount).

    python bench/tune_truth.py --planted 10 --null 60 --kills 25 --planted-races 10 --null-races 60 --race-kills 20
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLANTED = ["--rw", "read", "--bs", "4k", "--qd", "1", "--buffered"]
RACE = "blockdev.read_ahead_kb=128,512,2048,8192"
NULL = ["--rw", "randread", "--bs", "4k", "--qd", "16", "--direct"]


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stackbench", *args], capture_output=True, text=True,
                          env={**os.environ, **env})


def session(bench: Path, value: str, plan: list[str], common: list[str], env: dict[str, str]) -> tuple[dict, float]:
    clock = time.monotonic()
    done = cli("tune", "-t", str(bench), "--knob", f"blockdev.read_ahead_kb={value}", "--apply", "--json", "--force",
               *plan, *common, env=env)
    if done.returncode != 0:
        raise SystemExit(f"tune failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    return json.loads(done.stdout), time.monotonic() - clock


def race_kill(bench: Path, read_ahead: Path, common: list[str], env: dict[str, str], state: Path,
              longest: float) -> tuple[bool, bool, str]:
    """One race killed at a random instant of its rounds (up to `longest` seconds after the race's first
    switch), then rolled back by its session id: (restored, killed in the race, what was wrong)."""
    from stackbench.measure.tune_journal import read_records
    from stackbench.tune.knob import Subject
    from stackbench.tune.knobs import BY_ID

    read_ahead.write_text("0")
    directory = state / "stackbench" / "tune"
    before = set(directory.glob("*.jsonl"))
    process = subprocess.Popen([sys.executable, "-m", "stackbench", "tune", "-t", str(bench), "--knob", RACE,
                                "--apply", "--force", "--calibrate-rounds", "0", *PLANTED, *common],
                               env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal, give_up = None, time.monotonic() + 120
    while process.poll() is None and time.monotonic() < give_up:  # the race's first switch: a fifth apply
        journal = next(iter(set(directory.glob("*.jsonl")) - before), None)
        if journal is not None and sum(r["t"] == "intent" for r in read_records(journal)) > 4:
            break
        time.sleep(0.05)
    time.sleep(random.uniform(0.0, longest))
    in_race = process.poll() is None
    process.send_signal(signal.SIGKILL)
    process.wait()
    if journal is None:
        return False, in_race, "no journal was written"
    records = read_records(journal)
    back = cli("tune", "--rollback", records[0]["id"], env=env)
    cli("runs", "--db", str(state / "truth.db"), env=env)  # the next command settles the killed runs' scratch
    wrong = [f"{r['knob']} on {r['subject']['name']}: {now} instead of {r['state']}"
             for r in records if r["t"] == "snapshot"
             for now in [dict(BY_ID[r["knob"]].access.read(Subject.from_json(r["subject"])))] if now != r["state"]]
    if read_records(journal)[-1]["t"] != "closed":
        wrong.append("the journal is not closed")
    if any(bench.iterdir()):
        wrong.append(f"left in the scratch directory: {[p.name for p in bench.iterdir()]}")
    if back.returncode != 0:
        wrong.append(f"--rollback exited {back.returncode}: {back.stderr.strip()[-200:]}")
    return not wrong, in_race, "; ".join(wrong)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--planted", type=int, default=10)
    parser.add_argument("--null", type=int, default=60)
    parser.add_argument("--kills", type=int, default=25)
    parser.add_argument("--planted-races", type=int, default=10)
    parser.add_argument("--null-races", type=int, default=60)
    parser.add_argument("--race-kills", type=int, default=20)
    parser.add_argument("--race-kill-within", type=float, default=60.0,
                        help="seconds after the race's first switch within which each race is killed")
    parser.add_argument("--size", default="256M")
    parser.add_argument("--runtime", default="2")
    parser.add_argument("--ramp", default="0.5")
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    random.seed(args.seed)
    work = Path(tempfile.mkdtemp(prefix="tune-truth-", dir="/var/tmp"))
    state = Path(tempfile.mkdtemp(prefix="tune-truth-state-"))
    env = {"XDG_STATE_HOME": str(state)}
    common = ["--size", args.size, "--runtime", args.runtime, "--ramp", args.ramp, "--db", str(state / "truth.db")]
    image = work / "disk.img"
    with open(image, "wb") as handle:
        handle.truncate(2 * 1024**3)
    device = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True,
                            check=True).stdout.strip()
    mount = work / "mnt"
    mount.mkdir()
    read_ahead = Path(f"/sys/block/{Path(device).name}/queue/read_ahead_kb")
    original = read_ahead.read_text().strip()
    try:
        subprocess.run(["mkfs.ext4", "-q", device], check=True)
        subprocess.run(["mount", device, str(mount)], check=True)
        bench = mount / "bench"
        bench.mkdir()
        def sessions(name: str, count: int, start: str, value: str, plan: list[str]) -> tuple[int, list[float]]:
            """`count` sessions from read-ahead `start` trying `value`, each rolled back: how many kept it, and
            how long each took."""
            kept, seconds = 0, []
            for index in range(count):
                read_ahead.write_text(start)
                result, took = session(bench, value, plan, common, env)
                knob = result["knobs"][0]
                kept += knob["decision"] == "kept"
                seconds.append(took)
                compare = knob.get("compare") or {}  # a race whose every candidate was dropped proves nothing
                race = knob.get("race")
                raced = (f"race of {len(race['candidates'])}: {race['rounds']} rounds, "
                         f"{len(race['dropped'])} dropped, winner {race['winner']}; ") if race else ""
                print(f"{name} {index + 1}: {knob['decision']} ({compare.get('verdict', '-')}, "
                      f"{compare.get('geomean_ratio') or 0:.2f}x) after {raced}{knob['rounds']} rounds, {took:.0f} s "
                      f"({knob['stop']}; {result['calibration']['said']})", flush=True)
                cli("tune", "--rollback", result["session"], env=env)
            return kept, seconds

        kept, times = sessions("planted", args.planted, "0", "128", PLANTED)
        null_keeps, _ = sessions("null", args.null, "128", "8192", NULL)
        race_kept, race_times = sessions("planted race", args.planted_races, "0", "128,512,2048,8192", PLANTED)
        race_null_keeps, _ = sessions("null race", args.null_races, "128", "512,2048,8192", NULL)
        restored = 0
        for index in range(args.kills):
            read_ahead.write_text("0")
            process = subprocess.Popen([sys.executable, "-m", "stackbench", "tune", "-t", str(bench), "--knob",
                                        "blockdev.read_ahead_kb=128", "--apply", "--force", *PLANTED, *common],
                                       env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(random.uniform(1.0, 25.0))  # in the calibration (nothing changed yet) or the rounds
            process.send_signal(signal.SIGKILL)
            process.wait()
            after = cli("runs", "--db", str(state / "truth.db"), env=env)  # the next command restores
            journals = [json.loads(p.read_text().splitlines()[-1]) for p in (state / "stackbench" / "tune").glob("*.jsonl")]
            ok = (read_ahead.read_text().strip() == "0" and all(j["t"] == "closed" for j in journals)
                  and not any(bench.iterdir()))
            restored += ok
            print(f"kill {index + 1}: {'restored' if ok else 'NOT RESTORED'}"
                  f"{' (' + after.stderr.strip()[-200:] + ')' if not ok else ''}", flush=True)
        race_restored, in_race = 0, 0
        for index in range(args.race_kills):
            ok, killed_in_race, wrong = race_kill(bench, read_ahead, common, env, state, args.race_kill_within)
            race_restored += ok
            in_race += killed_in_race
            print(f"race kill {index + 1}: {'restored' if ok else 'NOT RESTORED: ' + wrong}"
                  f"{'' if killed_in_race else ' (the session had ended before the kill)'}", flush=True)
        print(f"\nplanted read_ahead_kb=0: kept in {kept}/{args.planted}, mean "
              f"{sum(times) / max(1, len(times)):.0f} s, longest {max(times, default=0):.0f} s")
        print(f"null read_ahead_kb 128 -> 8192 under O_DIRECT random reads: {null_keeps}/{args.null} kept")
        print(f"planted read_ahead_kb=0 raced over 128, 512, 2048, 8192: kept in {race_kept}/{args.planted_races}, "
              f"mean {sum(race_times) / max(1, len(race_times)):.0f} s, longest {max(race_times, default=0):.0f} s")
        print(f"null race 128 -> 512, 2048, 8192 under O_DIRECT random reads: {race_null_keeps}/{args.null_races} kept")
        print(f"kill -9 at a random instant, then the next command: restored {restored}/{args.kills}")
        print(f"kill -9 at a random instant of a race of 4, then --rollback: every view equal to its snapshot "
              f"{race_restored}/{args.race_kills} ({in_race} killed while running)")
    finally:
        read_ahead.write_text(original)
        subprocess.run(["umount", str(mount)], capture_output=True)
        subprocess.run(["losetup", "-d", device], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
