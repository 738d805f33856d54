"""`stackbench smallblocks` starts its walk before the CLI loads (`walker.start_early`): what to walk, read from
the command line without the CLI framework.

Only a command line this module understands entirely starts early: the options of `smallblocks` (kept equal to
cli/smallblocks.py's by tests/cli/test_smallblocks.py), `--name=value` forms, and paths. Anything else
(`--help`, an unknown or misspelt option, `--`) starts nothing, and the command runs as it always does, Typer
reading the command line and reporting what is wrong with it. The CLI then asks for its walk with what Typer
read; `walk_histogram` takes the early walk over only when the two readings agree, so a reading here that
differed would cost time, never a wrong histogram.
"""

from __future__ import annotations

# smallblocks' options that take a value, and its flags (each option's every name).
VALUE_OPTIONS = {"--special-size", "--metadata-share", "--recordsize", "--workers", "--db", "--label", "-l",
                 "--chart", "--format", "-f"}
FLAGS = {"--one-file-system", "-x", "--keep-identifiers", "--force", "--json"}


def walk_arguments(args: list[str]) -> tuple[list[str], int | None, bool] | None:
    """(paths, --workers, --one-file-system) of `smallblocks ARGS`, or None when the command line is not
    plainly one this module can read."""
    paths: list[str] = []
    workers: int | None = None
    one_file_system = False
    words = iter(args)
    for word in words:
        if not word.startswith("-") or word == "-":
            paths.append(word)
            continue
        name, equals, value = word.partition("=")
        if name in VALUE_OPTIONS:
            if not equals:
                value = next(words, None)  # type: ignore[assignment]
                if value is None:
                    return None
            if name == "--workers":
                if not value.isdigit() or int(value) < 1:
                    return None
                workers = int(value)
        elif word in FLAGS:
            one_file_system = one_file_system or word in ("-x", "--one-file-system")
        else:
            return None
    return (paths, workers, one_file_system) if paths else None
