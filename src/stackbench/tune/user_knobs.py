"""User knobs: a program's own setting declared in a TOML file (`tune --knobs FILE.toml`), made into the same
`Knob` record the catalogue's are, so that the plan, the reversibility check, the journal, the rounds, the
rollback and the stored session treat it as a built-in one (docs/tune.md, "User knobs").

The file is the user's code, as `ab --a` is: stackbench runs what it declares. What stackbench adds is never
shell: every command is an argv list run without a shell, and a value is put into the one argv element that
holds its placeholder (`{value}` in `apply`, `{original}` in an undo argv), never split, quoted or read as
anything else. A value may not hold a newline, a NUL or another control character, so that what the plan
shows is what runs. An apply that sets what tune never tries (`zfs set sync={value}`) is refused as a
catalogue knob's value would be: its command is read with the same table (`_SettingsOf`).

Why the declaration goes into the journal: after kill -9 the next stackbench command, whatever it is and
wherever it runs, must undo the change without the TOML file (moved, edited, or never named on that command
line). Each change's intent carries the knob's declaration as parsed (`declaration`); the rollback rebuilds
the knob from it (`from_journal`) and checks it with the same rules as the file.

Every problem is one line naming the file, the knob and the key, with the fix (`KnobFileError`, exit 2).
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Mapping

from stackbench.base.errors import UsageError
from stackbench.base.inputs import TUNE_KNOB_FILE, read_input_text
from stackbench.model.unsafe_settings import settings_in_command
from stackbench.tune import actions
from stackbench.tune.knob import Action, Cost, Knob, Persistence, Safety, Scope, State, Subject, Undo, Values
from stackbench.tune.subjects import everywhere

VIEW = "value"
KEYS_REQUIRED = ("id", "read", "apply", "undo", "values", "safety", "cost")
KEYS_OPTIONAL = ("title", "doc", "verify", "persistence", "affects")
VERIFY = ("equal", "number")  # how a read is compared with the value set: as text, or as a number (8 == 8.0)
AFFECTS = ("read", "write", "sync-write", "metadata")
_ID = re.compile(r"^[a-z][a-z0-9_-]{0,31}(\.[a-z0-9][a-z0-9_-]{0,31}){1,3}$")
_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_KNOBS, MAX_VALUES, MAX_ARGV, MAX_TEXT = 64, 64, 64, 4096


class KnobFileError(UsageError):
    """A knob file that cannot be used: nothing was run."""


def _builtin_namespaces() -> frozenset[str]:
    from stackbench.tune.knobs import BY_ID, INTERNAL
    from stackbench.tune.knobs.forbidden import FORBIDDEN

    ids = [*BY_ID, *INTERNAL, *(entry.id for entry in FORBIDDEN)]
    return frozenset(knob_id.split(".", 1)[0] for knob_id in ids)


@dataclass(frozen=True)
class UserCommands:
    """The access of a user knob: one view, `value`, the stripped stdout of `read`; `apply` with `{value}`;
    the undo is `apply` with the original value (`set-original`) or the file's own argv (`custom`)."""

    read_argv: tuple[str, ...]
    apply_argv: tuple[str, ...]
    undo_argv: tuple[str, ...] | None
    verify: str
    declaration: dict[str, Any]  # the knob as parsed: what the journal keeps to undo without the file

    views = (VIEW,)
    undo_strategies = frozenset({Undo.SET_ORIGINAL, Undo.CUSTOM})

    def read(self, subject: Subject) -> dict[str, str]:
        return self.parse_output(subject, actions.output_of(self.read_argv))

    def parse_output(self, subject: Subject, text: str) -> dict[str, str]:
        return {VIEW: self.normalised(text.strip())}

    def normalised(self, text: str) -> str:
        return _number_text(text) or text if self.verify == "number" else text

    def apply(self, subject: Subject, value: str, original: State) -> list[Action]:
        return [Action(argv=_substituted(self.apply_argv, "{value}", value))]

    def undo(self, strategy: Undo, subject: Subject, original: State) -> list[Action]:
        if self.undo_argv is None:
            return self.apply(subject, original[VIEW], original)
        return [Action(argv=_substituted(self.undo_argv, "{original}", original[VIEW]))]

    def expected(self, subject: Subject, value: str, original: State) -> dict[str, str]:
        return {VIEW: value}

    def value_of(self, state: State) -> str:
        return state.get(VIEW, "?")

    def offered(self, subject: Subject, state: State) -> tuple[str, ...] | None:
        return None


def _substituted(argv: tuple[str, ...], placeholder: str, value: str) -> tuple[str, ...]:
    """The value inside the elements that name its placeholder, each still one element."""
    return tuple(word.replace(placeholder, value) for word in argv)


@dataclass(frozen=True)
class _SettingsOf:
    """The settings of model/unsafe_settings.py an apply sets with a value (`zfs set sync={value} tank` with
    `disabled`), read as `ab`'s commands are: a user knob cannot try what tune never tries (knobs/forbidden.py)."""

    apply_argv: tuple[str, ...]

    def __call__(self, value: str) -> list[tuple[str, str]]:
        command = shlex.join(_substituted(self.apply_argv, "{value}", value))
        return [(found.setting, found.value) for found in settings_in_command(command)]


def _number_text(text: str) -> str | None:
    """A number written one way (8, 8.0, 8e0 -> 8; 0.50 -> 0.5), or None for text that is not a finite one."""
    try:
        number = Decimal(text)
    except InvalidOperation:
        return None
    return format(number.normalize(), "f") if number.is_finite() else None


class _Where:
    """Where a problem is, for its one line: the file, the knob (its id, or its position), the key."""

    def __init__(self, source: str, index: int, knob_id: str | None = None, *, journal: bool = False) -> None:
        self.source, self.index, self.knob_id, self.journal = source, index, knob_id, journal

    def error(self, key: str | None, problem: str, fix: str) -> KnobFileError:
        knob = f"knob {self.knob_id}" if self.knob_id else f"knob #{self.index + 1}"
        at = f", key {key!r}" if key else ""
        return KnobFileError(f"{self.source}: {knob}{at}: {problem}", fix)


def load(path: Path) -> tuple[Knob, ...]:
    """The knobs of a `--knobs` file (read through the bounded reader; at most MAX_KNOBS of them)."""
    return parse(read_input_text(path, TUNE_KNOB_FILE), str(path))


def parse(text: str, source: str) -> tuple[Knob, ...]:
    """The knobs declared in TOML text; KnobFileError naming the file, the knob and the key otherwise."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise KnobFileError(f"{source} is not valid TOML: {' '.join(str(error).split())}",
                            "Fix the TOML there (https://toml.io); each knob is a [[knob]] table") from None
    unknown = sorted(set(document) - {"knob"})
    if unknown:
        raise KnobFileError(f"{source}: unknown top-level key {unknown[0]!r}",
                            "The file holds only [[knob]] tables; put every key inside one")
    tables = document.get("knob")
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise KnobFileError(f"{source} declares no knob as a [[knob]] table",
                            "Declare each knob as a [[knob]] table with id, read, apply, undo, values, safety, cost")
    if len(tables) > MAX_KNOBS:
        raise KnobFileError(f"{source} declares {len(tables)} knobs, more than {MAX_KNOBS}",
                            "Split it into files of the knobs each session tries")
    knobs: list[Knob] = []
    for index, table in enumerate(tables):
        knob = knob_from_table(table, _Where(source, index))
        if any(k.id == knob.id for k in knobs):
            raise _Where(source, index, knob.id).error("id", "is declared twice in the file", "Give each knob its own id")
        knobs.append(knob)
    return tuple(knobs)


def from_journal(declaration: Mapping[str, Any], journal: str) -> Knob:
    """The user knob a journal's intent declared, checked by the file's rules (the rollback's knob)."""
    if not isinstance(declaration, dict):
        raise KnobFileError(f"{journal}: a user knob's declaration is not a table", "Restore it by hand from the intent")
    return knob_from_table(declaration, _Where(f"the journal {journal}", 0, journal=True))


def knob_from_table(table: dict[str, Any], where: _Where) -> Knob:
    """One `[[knob]]` table checked key by key, as a Knob."""
    knob_id = table.get("id")
    if isinstance(knob_id, str) and _ID.match(knob_id):
        where.knob_id = knob_id
    for key in sorted(set(KEYS_REQUIRED) - set(table)):
        raise where.error(key, "is missing", f"Add it: {_EXAMPLE[key]}")
    for key in sorted(set(table) - set(KEYS_REQUIRED) - set(KEYS_OPTIONAL)):
        raise where.error(key, "is not a key of a knob",
                          f"Use only: {', '.join(KEYS_REQUIRED + KEYS_OPTIONAL)}")
    _check_id(knob_id, where)
    read = _argv(table["read"], "read", where, placeholders=())
    apply = _argv(table["apply"], "apply", where, placeholders=("{value}",))
    if not any("{value}" in word for word in apply):
        raise where.error("apply", "does not use {value}", 'Put "{value}" where the value goes: ["prog", "set", "{value}"]')
    undo_text = table["undo"]
    undo_argv = None if undo_text == "set-original" else _argv(undo_text, "undo", where, placeholders=("{original}",),
                                                               word='"set-original" or')
    safety = Safety(_one_of(table["safety"], "safety", [s.value for s in Safety], where))
    cost = Cost(_one_of(table["cost"], "cost", [c.value for c in Cost], where))
    verify = _one_of(table.get("verify", "equal"), "verify", list(VERIFY), where)
    persistence = Persistence(_one_of(table.get("persistence", Persistence.PERSISTENT.value), "persistence",
                                      [p.value for p in Persistence], where))
    affects = _affects(table.get("affects", list(AFFECTS)), where)
    values = _values(table["values"], verify, where)
    title = _text(table["title"], "title", where, one_line=True) if "title" in table else f"declared in {where.source}"
    doc = _text(table.get("doc", ""), "doc", where, one_line=False)
    declaration = {"id": knob_id, "title": title, "doc": doc, "read": list(read), "apply": list(apply),
                   "undo": "set-original" if undo_argv is None else list(undo_argv), "values": list(values),
                   "safety": safety.value, "cost": cost.value, "verify": verify, "persistence": persistence.value,
                   "affects": list(affects)}
    access = UserCommands(read, apply, undo_argv, verify, declaration)
    return Knob(
        id=str(knob_id), title=title, scope=Scope.USER, access=access,
        undo=Undo.SET_ORIGINAL if undo_argv is None else Undo.CUSTOM, values=Values(values), safety=safety, cost=cost,
        persistence=persistence, affects=affects, subjects=everywhere, settings=_SettingsOf(apply),
        source=where.source,
        doc=doc or f"A user knob declared in {where.source}, read with {shlex.join(read)}.",
    )


_EXAMPLE = {
    "id": 'id = "mydb.io_threads" (your own namespace, a dot, a name)',
    "read": 'read = ["mydbctl", "get", "io_threads"] (prints the value now)',
    "apply": 'apply = ["mydbctl", "set", "io_threads", "{value}"]',
    "undo": 'undo = "set-original" (apply with the value read before), or an argv list with {original}',
    "values": "values = [4, 8, 16]",
    "safety": 'safety = "safe" (or semantic, tradeoff, restart, forbidden)',
    "cost": 'cost = "instant" (or new-writes, remount, vm-restart)',
}


def _check_id(knob_id: Any, where: _Where) -> None:
    if not isinstance(knob_id, str):
        raise where.error("id", f"is {_kind(knob_id)}, not a string", f"Write it as {_EXAMPLE['id']}")
    if not _ID.match(knob_id):
        raise where.error("id", f"{_shown(knob_id)} is not a namespaced id",
                          "Use lower-case letters, digits, _ and -, in 2 to 4 parts joined by dots: mydb.io_threads")
    namespace = knob_id.split(".", 1)[0]
    if namespace in _builtin_namespaces() and not where.journal:  # a journal's knob is never looked up by id
        raise where.error("id", f"{knob_id} is in the namespace {namespace}. of stackbench's own knobs",
                          "Choose a namespace of your own (the program's name: mydb.io_threads); "
                          "stackbench tune --list-knobs lists the built-in ones")


def _argv(value: Any, key: str, where: _Where, *, placeholders: tuple[str, ...], word: str = "") -> tuple[str, ...]:
    """An argv list: strings, the first a program, no control character, only the key's placeholders."""
    if isinstance(value, str):
        try:
            suggested = json.dumps(shlex.split(value))
        except ValueError:
            suggested = '["program", "argument", ...]'
        raise where.error(key, f"is a shell string ({_shown(value)}): tune runs argv lists, never a shell string",
                          f"Write it as {word} an argv list: {key} = {suggested}"
                          + ("; for shell syntax, run [\"sh\", \"-c\", \"...\"] yourself" if word == "" else ""))
    if not isinstance(value, list) or not value:
        raise where.error(key, f"is {_kind(value)}, not an argv list", f"Write it as {_EXAMPLE[key]}")
    if len(value) > MAX_ARGV:
        raise where.error(key, f"has {len(value)} words, more than {MAX_ARGV}", "Put the long part in a script of yours")
    for position, item in enumerate(value):
        if not isinstance(item, str):
            raise where.error(key, f"word {position + 1} is {_kind(item)}, not a string",
                              f"Quote it: {json.dumps(str(item))}")
        if _CONTROL.search(item) or len(item) > MAX_TEXT:
            raise where.error(key, f"word {position + 1} holds a newline, NUL or other control character, or is too long",
                              "Each word is one argument: split it, or put it in a script of yours")
        for found in _PLACEHOLDER.findall(item):
            if found not in placeholders:
                allowed = f"only {', '.join(placeholders)}" if placeholders else "none"
                raise where.error(key, f"word {position + 1} uses the placeholder {found}, which {key} does not have",
                                  f"Use {allowed} in {key}")
    if not value[0]:
        raise where.error(key, "names no program (its first word is empty)", "Start it with the program to run")
    return tuple(value)


def _one_of(value: Any, key: str, choices: list[str], where: _Where) -> str:
    if not isinstance(value, str) or value not in choices:
        shown = _shown(value) if isinstance(value, str) else _kind(value)
        raise where.error(key, f"is {shown}, not one of {', '.join(choices)}", f"Use one of: {', '.join(choices)}")
    return value


def _affects(value: Any, where: _Where) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or any(not isinstance(v, str) or v not in AFFECTS for v in value):
        raise where.error("affects", "is not a list of the cells the knob can move",
                          f"Use a list of: {', '.join(AFFECTS)}")
    return tuple(dict.fromkeys(value))


def _values(value: Any, verify: str, where: _Where) -> tuple[str, ...]:
    """The candidates as text: a string as written, an integer or a float as TOML gives it, a boolean as
    true/false; with verify = "number" each written the one way a read is compared (8.0 -> 8)."""
    if not isinstance(value, list) or not value:
        raise where.error("values", f"is {_kind(value)}, not a list of values", f"Write it as {_EXAMPLE['values']}")
    if len(value) > MAX_VALUES:
        raise where.error("values", f"has {len(value)} values, more than {MAX_VALUES}", "Try fewer values per session")
    texts: list[str] = []
    for position, item in enumerate(value):
        if isinstance(item, bool):
            text = "true" if item else "false"
        elif isinstance(item, (int, float, str)):
            text = item if isinstance(item, str) else str(item)
        else:
            raise where.error("values", f"value {position + 1} is {_kind(item)}", "Use strings or numbers")
        if isinstance(item, float) and not _number_text(text):
            raise where.error("values", f"value {position + 1} is {text}, not a finite number", "Use a finite number")
        if _CONTROL.search(text):
            raise where.error("values", f"value {position + 1} holds a newline, NUL or other control character",
                              "A value is one line of printable text")
        if not text or text != text.strip() or len(text) > 256:
            raise where.error("values", f"value {position + 1} ({_shown(text)}) is empty, longer than 256 characters, "
                              "or starts or ends with white space", "A read's output is compared stripped: write it so")
        if verify == "number":
            number = _number_text(text)
            if number is None:
                raise where.error("values", f"value {position + 1} ({_shown(text)}) is not a number, and verify is number",
                                  'Use numbers, or verify = "equal"')
            text = number
        if text in texts:
            raise where.error("values", f"value {position + 1} ({_shown(text)}) is listed twice", "List each value once")
        texts.append(text)
    return tuple(texts)


def _text(value: Any, key: str, where: _Where, *, one_line: bool) -> str:
    if not isinstance(value, str):
        raise where.error(key, f"is {_kind(value)}, not a string", "Write it as a string")
    bad = _CONTROL.sub("", value) != value if one_line else re.search(r"[\x00-\x08\x0b-\x1f\x7f]", value)
    if bad or len(value) > MAX_TEXT:
        raise where.error(key, "holds a control character or is longer than 4096 characters",
                          "Write plain text" + (" on one line" if one_line else ""))
    return value


def _kind(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}
    return names.get(type(value), f"a {type(value).__name__}")


def _shown(text: str) -> str:
    """User text in a message: quoted, escapes visible, cut."""
    shown = json.dumps(text)
    return shown if len(shown) <= 60 else shown[:57] + '..."'


def declaration_of(knob: Knob) -> dict[str, Any] | None:
    """What the journal keeps of a user knob (None for a built-in one, which this version of stackbench knows)."""
    return knob.access.declaration if isinstance(knob.access, UserCommands) else None


def knob_json(knob: Knob) -> dict[str, Any]:
    """A knob as `--list-knobs --json` and `--explain-knob --json` give it: a user knob with its declaration."""
    declared = declaration_of(knob)
    return knob.to_json() | ({"declared": declared} if declared is not None else {})


def command_lines(knob: Knob) -> list[str]:
    """A user knob's commands as `--explain-knob` shows them (none for a built-in one: its examples show them)."""
    declared = declaration_of(knob)
    if declared is None:
        return []
    undo = declared["undo"]
    return [f"a user knob of {knob.source}: its commands run as written there, without a shell, the value as one "
            "argument", f"  read:  {shlex.join(declared['read'])}", f"  apply: {shlex.join(declared['apply'])}",
            f"  undo:  {shlex.join(undo) if isinstance(undo, list) else 'apply with the value read before the change'}"]
