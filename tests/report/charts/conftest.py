"""Real runs for the chart tests, made once per session through the real CLI (fio, SQLite), and captured fio
outputs imported into a store. Expensive fixtures are session-scoped and only the slow tests use the
measured runs; the fast ones draw from the captured fixtures under tests/data/fio."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import DATA, Result, cli_here  # noqa: F401 - Result, cli_here: re-exported for the chart tests

FIO = DATA / "fio"
SVG = "{http://www.w3.org/2000/svg}"


@dataclass(frozen=True)
class Store:
    url: str
    runs: dict[str, str]  # label -> run id


def _import(url: str, label: str, *files: Path) -> str:
    result = cli_here("import", *map(str, files), "--label", label, "--db", url, "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    runs = data.get("runs") or [data]
    return runs[0]["run_id"]


@pytest.fixture(scope="session")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """Captured fio outputs (fio-3.33, tests/data/fio/CAPTURED.md) imported as runs."""
    url = f"sqlite:///{tmp_path_factory.mktemp('imported') / 'results.db'}"
    runs = {
        "jsonplus": _import(url, "jsonplus", FIO / "randwrite-fdatasync-libaio.jsonplus.json"),
        "seqplus": _import(url, "seqplus", FIO / "seqwrite-posixaio.jsonplus.json"),
        "twojobs": _import(url, "twojobs", FIO / "two-jobs-defaults.json"),
        "normal": _import(url, "normal", FIO / "text" / "normal-randwrite-fdatasync.txt"),
        "again": _import(url, "again", FIO / "randwrite-fdatasync-libaio.jsonplus.json"),
        "nopct": _import(url, "nopct", FIO / "clat-percentiles-off.json"),
        "rw-both": _import(url, "rw-both", FIO / "unified-rw-both.json"),
    }
    return Store(url, runs)


FAST = ["--runtime", "1", "--size", "16M"]


@pytest.fixture(scope="session")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """Small real runs made by `stackbench run` and `stackbench synclat` on a disk-backed directory:

    - `matrix`: 4K/64K x QD1/4 x randread/write, one fio run of 1 s each;
    - `timeline`: 4K QD4 randread, 2 separate fio runs of 1 s ramp + 4 s (8 samples: enough for the median's
      95 % interval, which needs 6);
    - `fast` and `capped`: 4K QD1 randread/randwrite, 3 runs each; `capped` at 500 IOPS (fio rate_iops),
      a known large loss for compare (revert) and layers (the biggest gap);
    - `sync-a`, `sync-b`: two synclat sweeps 4K..32K.
    """
    base = tmp_path_factory.mktemp("measured")
    scratch = base / "scratch"
    scratch.mkdir()
    url = f"sqlite:///{base / 'results.db'}"
    runs: dict[str, str] = {}

    def run(label: str, *args: str) -> None:
        result = cli_here(*args, "--label", label, "--db", url, "--json")
        assert result.returncode == 0, result.stderr
        runs[label] = json.loads(result.stdout)["run_id"]

    run("matrix", "run", "-t", str(scratch), "--bs", "4k,64k", "--qd", "1,4", "--rw", "randread,write", "--runs", "1",
        "--ramp", "0", *FAST)
    run("timeline", "run", "-t", str(scratch), "--bs", "4k", "--qd", "4", "--rw", "randread", "--runs", "2",
        "--ramp", "1", "--runtime", "4", "--size", "16M")
    cells = ["--bs", "4k", "--qd", "1", "--rw", "randread,randwrite", "--runs", "3", "--ramp", "0", *FAST]
    run("fast", "run", "-t", str(scratch), *cells)
    run("capped", "run", "-t", str(scratch), *cells, "--rate-iops", "500")
    for label in ("sync-a", "sync-b"):
        run(label, "synclat", str(scratch), "--sizes", "4k..32k", "--runtime", "0.3", "--size", "16M")
    return Store(url, runs)


def svg_tree(path: Path) -> ET.Element:
    return ET.parse(path).getroot()


def texts(root: ET.Element) -> list[str]:
    """Every text of the SVG (fonttype none keeps them as <text>), whitespace normalised."""
    return [" ".join("".join(node.itertext()).split()) for node in root.iter(f"{SVG}text")]


def ids(root: ET.Element, prefix: str) -> list[str]:
    """The SVG ids starting with `prefix`, one per artist (a bar series' other bars, `series-N.M`, are not
    counted: a bar series is one id)."""
    found = [node.get("id", "") for node in root.iter()]
    return [i for i in found if i.startswith(prefix) and "." not in i]


def chart(store: Store, out: Path, *args: str) -> Result:
    return cli_here("chart", *args, "-o", str(out), "--db", store.url)


def drawn(figure):  # noqa: ANN001, ANN201 - a charts Figure in, its matplotlib drawing out
    """The figure's drawing after a render, so that the layout and the tick labels exist."""
    figure.render("png")
    return figure.drawing


def lines(ax, prefix: str) -> list:  # noqa: ANN001 - a matplotlib Axes
    """The axes' lines whose SVG id starts with `prefix` (style.Gids), in the order they were drawn."""
    return [line for line in ax.get_lines() if (line.get_gid() or "").startswith(prefix)]


def inside(value: float, limits: tuple[float, float]) -> bool:
    """Whether `value` lies on an axis with these limits (either way round), to rounding."""
    low, high = sorted(limits)
    return low * (1 - 1e-9) <= value <= high * (1 + 1e-9)


NOISY = [4000.0, 9000.0, 600000.0]  # three runs of one cell on the busy 2-core machine of issue 27
