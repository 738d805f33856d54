"""Every command driven with Hypothesis-generated arguments: the exit code is one of the documented ones,
there is never a traceback or an internal error, an error is exactly one `Error:` line (the last), and
nothing is written to the target.

Commands run in-process (one Python, so hundreds of examples take seconds). fio is pointed at a path that
does not exist, so no example ever measures: what is exercised is every check up to the point where
stackbench would start fio, which is where bad input must be caught. Shell commands of `ab` are `true`.
`serve` runs every check it makes (options, host, port, store) and builds uvicorn's configuration, then,
instead of serving forever, returns: `web.server.serve` (which runs uvicorn, with one process or a
supervisor of several) is replaced by a no-op here, the one fake of this test.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
import typer.main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA
from stackbench.cli import app
from stackbench.cli import run_app

DOCUMENTED_EXITS = {0, 1, 2, 3}
COMMAND = typer.main.get_command(app)
LEAVES = []
for name, command in COMMAND.commands.items():
    for sub, leaf in getattr(command, "commands", {name: command}).items():
        LEAVES.append(([name, sub] if sub != name else [name], leaf))

PATH_OPTIONS = {"--target", "--from", "--vm-config", "--storage-cfg", "--cpuinfo", "--pool-dataset", "--hosts-file",
                "--token-file", "--ca-file", "--ssh-config"}  # hostile files go in a capped child: test_hostile_inputs
PATH_ARGUMENTS = {"target", "paths", "files", "candidates"}
SHELL_OPTIONS = {"--a", "--b", "--prepare"}
VALUES = ["0", "-1", "1", "3", "5", "16", "1e9", "100000", "nan", "inf", "4k", "3k", "1m", "64G", "abc", "",
          "[/x]", "a\nb", "quick", "blog", "json", "csv", "xml", "randread", "4k,64k", "1,4", "warn", "aes"]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    (root / "scratch").mkdir()
    return root


def _paths(root: Path) -> st.SearchStrategy[str]:
    return st.sampled_from([
        str(root / "scratch"), str(root / "new-file"), "", "rel/dir", "[/x]", "a\nb", "$HOME/x", "x;y",
        str(root / "missing" / "deep"), str(DATA / "fio" / "randread-psync.json"),
        str(DATA / "zfs" / "openzfs-2.3.2-probe"), str(DATA / "pve" / "101-good.conf"),
    ])


@st.composite
def invocations(draw: st.DrawFn, root: Path) -> list[str]:
    words, leaf = draw(st.sampled_from(LEAVES))
    argv = list(words)
    for param in leaf.params:
        if not draw(st.booleans()):
            continue
        if param.param_type_name == "argument":
            count = draw(st.integers(1, 2))
            for _ in range(count):
                argv.append(draw(_paths(root)) if param.name in PATH_ARGUMENTS else draw(st.sampled_from(VALUES)))
            continue
        option = param.opts[0]
        if getattr(param, "is_flag", False):
            argv.append(option)
        elif option in SHELL_OPTIONS:
            argv += [option, "true"]
        elif option == "--db":
            argv += [option, draw(st.sampled_from([str(root / "r.db"), "", str(root / "scratch"), "x://y"]))]
        elif option in PATH_OPTIONS:
            argv += [option, draw(_paths(root))]
        else:
            argv += [option, draw(st.one_of(st.sampled_from(VALUES), st.text(max_size=12)))]
    return argv


@pytest.mark.slow  # ~1.5 min: some examples run the live audit probe or cryptsetup
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=st.data())
def test_every_command_with_generated_arguments_fails_cleanly_or_succeeds(
    data: st.DataObject, sandbox: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = data.draw(invocations(sandbox))
    monkeypatch.setenv("STACKBENCH_FIO", str(sandbox / "no-such-fio"))
    monkeypatch.setenv("HOME", str(sandbox / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(sandbox / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(sandbox / "state"))
    monkeypatch.delenv("STACKBENCH_DB", raising=False)
    monkeypatch.chdir(sandbox)
    monkeypatch.setattr("stackbench.web.server.serve", lambda config: None)
    access = logging.getLogger("stackbench.web.access")  # serve configures it: undone after the test
    monkeypatch.setattr(access, "handlers", list(access.handlers))
    monkeypatch.setattr(access, "level", access.level)
    capsys.readouterr()
    try:
        run_app(argv)
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    captured = capsys.readouterr()
    assert code in DOCUMENTED_EXITS, (argv, code, captured.err)
    assert "Traceback" not in captured.err and "internal error" not in captured.err, (argv, captured.err)
    if code in (1, 2):
        lines = [line for line in captured.err.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("Error:")]
        assert len(errors) == 1 and lines[-1] == errors[0], (argv, captured.err)
    assert os.listdir(sandbox / "scratch") == [], argv


@pytest.mark.parametrize("argv", [["export", "--openmetrics", "\x00"], ["show", "a\x00b"],
                                  ["run", "--target", "/tmp/x\x00y", "--dry-run"]])
def test_an_argument_with_a_nul_is_one_usage_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the test above in CI: a path option's os.stat raised ValueError on a NUL (exit 70)."""
    with pytest.raises(SystemExit) as done:
        run_app(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2
    assert [line for line in err.splitlines() if line.strip()] == [line for line in err.splitlines()
                                                                    if line.startswith("Error:")]
    assert "NUL" in err and "internal error" not in err


def test_every_float_option_refuses_nan_and_inf() -> None:
    """click checks a float option's range by comparing, and every comparison with nan is false: `compare
    --alpha nan` passed and ended in an internal error (exit 70). Every float option is a FiniteRange."""
    from stackbench.cli.common import FiniteRange, click_types

    floats = [(path, param) for path, leaf in LEAVES for param in leaf.params
              if isinstance(param.type, click_types.FloatParamType)]
    assert len(floats) >= 5, "float options missing: the walk over the commands is broken"
    for path, param in floats:
        assert isinstance(param.type, FiniteRange), (path, param.opts)


@pytest.mark.parametrize("argv", [["compare", "a", "b", "--alpha", "nan"], ["compare", "a", "b", "--min-effect", "NaN"],
                                  ["ab", "--a", "true", "--b", "true", "-t", "/nonexistent", "--alpha", "nan"],
                                  ["smallblocks", "/nonexistent", "--metadata-share", "inf"],
                                  ["run", "-t", "/nonexistent", "--ci-target", "nan", "--dry-run"]])
def test_nan_or_inf_for_a_number_is_one_usage_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        run_app(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.startswith("Error: Invalid value for '--") and err.count("\n") == 1, err
    assert "internal error" not in err
