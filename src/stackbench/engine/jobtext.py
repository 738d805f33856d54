"""Values that go into a fio job file, checked so that fio reads exactly what we meant.

A job file is text fio parses line by line, and it cannot quote anything. Measured with fio 3.33:

- a newline (or any control character) in a value starts a new line, which fio reads as another option
  or a new `[section]`;
- `;` and `#` start a comment anywhere in a line, so `filename=/srv/a;b/x` opens `/srv/a`;
- `$` introduces substitutions: `${VAR}` from the environment, and `$ncpus`, `$mb_memory`, `$pagesize`;
- `:` separates several file names in `filename=` (it is written as `\\:`); a backslash is otherwise kept
  as it is, so it must not be doubled;
- leading and trailing blanks of a value are dropped.

So a value with any of those characters is refused with one line that says which character and what to
do, never rewritten into something fio would read differently. `verify` reads a finished job file back the
way fio does and checks that the only file it names is the approved one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stackbench.base.errors import UsageError
from stackbench.base.usertext import describe_character as describe_unicode, is_forbidden

_COMMENT = (";", "#")
_FORBIDDEN = {";": "a semicolon", "#": "a hash sign", "$": "a dollar sign"}


def describe_character(char: str) -> str:
    """A printable name for a character, so an error about a newline does not itself break the line."""
    return _FORBIDDEN.get(char) or describe_unicode(char)


def unsafe_character(value: str) -> str | None:
    """The first character fio would not read literally in an option value, or None when there is none."""
    for char in value:
        if char in _FORBIDDEN or is_forbidden(char):  # control, separator and format characters (usertext)
            return char
    return None


def check_value(option: str, value: str, *, what: str | None = None) -> str:
    """Return `value` when fio reads it literally as the value of `option`; otherwise refuse it.

    `what` names the value for the user (`--target path`), defaulting to the fio option.
    """
    subject = what or f"fio option {option}"
    if value != value.strip():
        raise UsageError(
            f"{subject} {value.strip()!r} begins or ends with a blank, which fio drops",
            "Use a path or value without leading or trailing spaces",
        )
    if not value:
        raise UsageError(f"{subject} is empty", "Give a value")
    char = unsafe_character(value)
    if char is not None:
        shown = value.encode("unicode_escape").decode("ascii")
        raise UsageError(
            f"{subject} {shown!r} contains {describe_character(char)}, which a fio job file cannot carry "
            "literally (newlines start options, ; and # start comments, $ expands variables)",
            "Rename it, or point a symlink without such characters at it and pass that",
        )
    return value


def render(comment: str, sections: Sequence[tuple[str, Sequence[tuple[str, object]]]]) -> str:
    """A job file from `(section, [(option, value), ...])`, every value checked.

    `filename` values are given unescaped; they are escaped here. The finished text is read back the way
    fio reads it and must give exactly the options we meant, which is what makes the file fio opens the
    file the safety checks approved.
    """
    safe_comment = "".join(" " if unsafe_character(c) is not None else c for c in comment)
    lines = [f"; {' '.join(safe_comment.split())}"]
    intended: list[tuple[str, str, str]] = []
    for name, options in sections:
        check_value("section name", name)
        if any(c in name for c in "[]="):
            raise UsageError(f"fio section name {name!r} contains [, ] or =", "Use a plain name")
        if len(lines) > 1:
            lines.append("")
        lines.append(f"[{name}]")
        for option, value in options:
            text = check_value(option, str(value))
            intended.append((name, option, text))
            lines.append(f"{option}={text.replace(':', chr(92) + ':') if option == 'filename' else text}")
    job = "\n".join(lines) + "\n"
    read = [(s, o, tuple(split_filenames(v)) if o == "filename" else v) for s, o, v in read_back(job)]
    if read != [(s, o, (v,) if o == "filename" else v) for s, o, v in intended]:
        raise UsageError("fio would read this job file differently from what stackbench wrote", "Report this as a bug")
    return job


def opened_files(text: str) -> list[str]:
    """The files a job file makes fio open, as fio splits them."""
    return [name for _, option, value in read_back(text) if option == "filename" for name in split_filenames(value)]


_SECTION = re.compile(r"^\[(?P<name>[^\]]*)\]\s*$")


def read_back(text: str) -> list[tuple[str, str, str]]:
    """`(section, option, value)` as fio reads the job file: comments cut, blanks stripped."""
    section = ""
    entries = []
    for raw in text.split("\n"):
        line = raw
        for mark in _COMMENT:
            at = line.find(mark)
            if at != -1:
                line = line[:at]
        line = line.strip()
        if not line:
            continue
        match = _SECTION.match(line)
        if match:
            section = match.group("name")
            continue
        option, _, value = line.partition("=")
        entries.append((section, option.strip(), value.strip()))
    return entries


def split_filenames(value: str) -> list[str]:
    """fio's split of a `filename=` value on unescaped `:`."""
    names, current, index = [], "", 0
    while index < len(value):
        if value.startswith("\\:", index):
            current += ":"
            index += 2
            continue
        if value[index] == ":":
            names.append(current)
            current = ""
        else:
            current += value[index]
        index += 1
    names.append(current)
    return names
