"""The characters user text (labels, notes, paths, names) may hold, and how text from a store is shown.

Labels and notes are read by other people on terminals, in Markdown, spreadsheets and web pages. A few
kinds of characters make what they read differ from what was typed: control characters (a newline forges
a line, ESC drives the terminal), line and paragraph separators, and the invisible format characters
(bidi overrides and isolates such as U+202E, which reversed a label on the run page, zero-width spaces
and joiners, the byte order mark, Unicode tags). Unpaired surrogates cannot be written as UTF-8 at all.
Those are the Unicode categories Cc, Cf, Zl, Zp and Cs: `FORBIDDEN_CATEGORIES`.

- Every entry that stores such text refuses them (`forbidden_character`, with a one-line error naming the
  character: `describe_character`).
- Every output that shows stored text escapes them (`shown`): `\\u202e` instead of the character, so a
  store written before the rule, or edited by hand, cannot inject them either.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from stackbench.base.errors import UsageError

FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})

# What the refusals say the rule is, in one place.
RULE = ("control characters, line separators and invisible format characters (bidi overrides, zero-width "
        "characters) would make what others read differ from what was typed")


def is_forbidden(char: str) -> bool:
    return unicodedata.category(char) in FORBIDDEN_CATEGORIES


def forbidden_character(text: str) -> str | None:
    """The first character of `text` that user text may not hold, or None."""
    if text.isprintable():  # the usual case, in C: printable text has none of them
        return None
    return next((char for char in text if is_forbidden(char)), None)


def describe_character(char: str) -> str:
    """`U+202E (right-to-left override)`: a character named so that the message itself stays one line."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name.lower()})" if name else " (a control character)")


def refusal(what: str, text: str) -> str | None:
    """The one-line reason `text` cannot be `what` ("a label", "the note"), or None when it may."""
    char = forbidden_character(text)
    if char is None:
        return None
    return f"{what} cannot contain {describe_character(char)}: {RULE}"


def check(what: str, text: str | None, fix: str = "Type it without them") -> None:
    """Refuse `text` as `what` ("a label", "the note") with one line (UsageError) when it holds a forbidden
    character; the stores' own writes call it too, so no entry can forget."""
    reason = refusal(what, text) if text is not None else None
    if reason is not None:
        raise UsageError(reason, fix)


def escape_character(char: str) -> str:
    """`\\x0a`, `\\u202e`, `\\U000e0041`: the character as Python would write it in a string literal."""
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(text: str, keep: str = "") -> str:
    """`text` with every forbidden character but those in `keep` escaped (`escape_character`), for showing
    text that came from a store, a file or a request. Fast when there is nothing to escape."""
    if text.isprintable():
        return text
    return "".join(escape_character(char) if char not in keep and is_forbidden(char) else char for char in text)


def shown_in_template(value: Any) -> Any:
    """Jinja2's `finalize` for the web pages and the HTML report: every text a template prints, shown
    (newlines and tabs kept: a job file in a <pre>; elsewhere HTML shows them as a space). Markup, text a
    template trusts as HTML (a chart's SVG, which Figure.render has already shown), is a subclass of str
    and is left alone; so is anything that is not text."""
    return shown(value, keep="\n\t") if type(value) is str else value
