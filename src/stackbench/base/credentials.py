"""Credentials out of whatever stackbench keeps or shows of a user's words (SECURITY.md, "Secrets").

A run keeps the command line that made it (`facts.command`), an `ab` session the shell commands it ran, an
audit what the configs it read say, a store's error message the URL it could not open. Any of these can
hold a credential: `--db postgresql://alice:s3cret@db/bench`, `--push https://bench?token=...`,
`ab --a "PGPASSWORD=... psql ..."`, `curl -H 'Authorization: Bearer ...'`. What is stored is pushed to a
server, shown to everyone a run is shared with and written into reports, so a credential never gets that
far: `scrub` replaces it with `***` and keeps the rest, which says what was run.

Recognised, in any text (an argument, a shell command, a config line, a JSON document as text):

- the password of a URL's user information (`scheme://user:PASSWORD@host`, any scheme) and of an ssh-style
  `user:PASSWORD@host`;
- the value of a name that names a secret (below), written `name=VALUE` (a query parameter, a libpq
  keyword, an option `--name=VALUE`, a shell variable), `--name VALUE`, `name: VALUE` (a header, YAML) or
  `"name": "VALUE"` (JSON); `Authorization: Bearer VALUE` keeps its scheme word;
- stackbench's own API tokens (`sbt_` and 43 characters) wherever they are.

In a command line given as a list of arguments, the argument after an option that names a secret
(`--token VALUE`) is replaced whole; in a JSON value, the string under a key that names a secret.

A name names a secret when it holds password, passwd, passphrase, secret, token, credential, apikey,
accesskey, privatekey, s3key, signature, authorization, cookie or sessionid (case and `-`, `_`, `.` ignored,
so PGPASSWORD, X-Amz-Signature and api_key do), or one of its words is pass, pwd, pw, auth or sig; not when
its last word says it names a place or a kind of the secret rather than the secret (`--token-file`,
`--password-stdin`, `auth-method`). What is not recognised stays: a password given as a bare word of a
program's own syntax (`mysql -pSECRET`, `sshpass -p SECRET`) cannot be told from any other word. Replacing
too much is the safe side: a value that only looks like a secret is masked too.

The scrubbed text is a fixed point: scrubbing it again changes nothing.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

MASK = "***"

_SECRET_PARTS = ("password", "passwd", "passphrase", "secret", "token", "credential", "apikey", "accesskey",
                 "privatekey", "s3key", "signature", "authorization", "cookie", "sessionid")
_SECRET_WORDS = frozenset({"pass", "pwd", "pw", "auth", "sig"})
# A last word that makes the name say where a secret is, or what kind it is, not the secret itself.
_NOT_THE_SECRET = frozenset({"file", "files", "path", "dir", "stdin", "fd", "env", "cmd", "command", "method",
                             "mode", "type", "length", "expires", "scope", "url", "uri"})
_WORDS = re.compile(r"[A-Za-z][a-z0-9]*|[A-Z0-9]+(?![a-z])|[0-9]+")

_QUOTED = r"\"[^\"]*\"|'[^']*'"
_NAME = r"[A-Za-z_][A-Za-z0-9_.-]*"
_URL_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)([^\s/@:'\"]*):([^\s'\"]*)@")
_SSH_USERINFO = re.compile(r"(?<![\w.+/:-])([A-Za-z_][\w.-]{0,63}):([^\s@/'\":]+)@(?=[A-Za-z0-9\[])")
_ISCSI_USERINFO = re.compile(r"(\biscsi://)([^\s/@%:'\"]*)%([^\s'\"]*)@", re.IGNORECASE)  # QEMU's user%password
_QUERY_PARAMETER = re.compile(rf"(?<=[?&;])(?P<name>{_NAME})=(?P<value>[^&#;\s'\"]*)")
_ASSIGNED = re.compile(rf"(?<![\w.?&;-])(?P<name>-{{0,2}}{_NAME})=(?P<value>{_QUOTED}|[^\s'\"]*)")
_JSON_PAIR = re.compile(rf"(?P<q>[\"'])(?P<name>{_NAME})(?P=q)(?P<sep>\s*:\s*)(?P<value>{_QUOTED})")
_COLON_PAIR = re.compile(rf"(?<![\w.-])(?P<name>{_NAME}):(?P<space>[ \t]+)"
                         rf"(?P<scheme>(?:bearer|basic|token|digest|negotiate)[ \t]+)?(?P<value>{_QUOTED}|[^\s'\"]+)",
                         re.IGNORECASE)
_SPACED_OPTION = re.compile(rf"(?<![\w.-])(?P<name>--?{_NAME})(?P<space>[ \t]+)(?P<value>{_QUOTED}|[^\s'\"-][^\s'\"]*)")
_OPTION = re.compile(rf"--?({_NAME})")
# Every secret name holds one of these (a part or a word of the rule, before its separators are dropped): a
# text without any is spared the name patterns, which are most of the cost.
_MAY_NAME_A_SECRET = re.compile(r"pass|pw|secret|token|credential|key|sig|auth|cookie|session", re.IGNORECASE)
_STACKBENCH_TOKEN = re.compile(r"\bsbt_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])")


def is_secret_name(name: str) -> bool:
    """Whether an option, parameter, variable, header or key of this name holds a secret (the rule above)."""
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words or words[-1] in _NOT_THE_SECRET:
        return False
    joined = "".join(words)
    return any(part in joined for part in _SECRET_PARTS) or any(w in _SECRET_WORDS for w in words)


def _masked(value: str) -> str:
    """`value` replaced by the mask, its quotes kept."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[0] + MASK + value[0]
    return MASK


def _named(match: re.Match[str]) -> str:
    """A `name VALUE` pair of any of the patterns: everything before the value kept, the value masked."""
    if not is_secret_name(match["name"].lstrip("-")):
        return match[0]
    value = match["value"]
    return match[0][: match.start("value") - match.start()] + (_masked(value) if value else value)


def scrub_text(text: str) -> str:
    """`text` with every credential the rules above recognise replaced by `***`."""
    if not text:
        return text
    text = _URL_USERINFO.sub(lambda m: f"{m[1]}{m[2]}:{MASK}@", text)
    text = _ISCSI_USERINFO.sub(lambda m: f"{m[1]}{m[2]}%{MASK}@", text)
    text = _SSH_USERINFO.sub(lambda m: f"{m[1]}:{MASK}@", text)
    if _MAY_NAME_A_SECRET.search(text):
        for pattern in (_QUERY_PARAMETER, _ASSIGNED, _JSON_PAIR, _COLON_PAIR, _SPACED_OPTION):
            text = pattern.sub(_named, text)
    return _STACKBENCH_TOKEN.sub("sbt_" + MASK, text)


def scrub_argv(argv: Sequence[str]) -> list[str]:
    """A command line as a list of arguments, scrubbed: each argument as text, and the argument after an
    option that names a secret (`--token VALUE`) whole."""
    scrubbed: list[str] = []
    value_of_secret = False
    for arg in argv:
        if value_of_secret and not arg.startswith("--"):
            scrubbed.append(MASK)
            value_of_secret = False
            continue
        scrubbed.append(scrub_text(arg))
        option = _OPTION.fullmatch(arg)
        value_of_secret = option is not None and is_secret_name(option[1])
    return scrubbed


def scrub(value: Any) -> Any:
    """A JSON-like value with every credential replaced: strings as text, lists of strings as command
    lines, and the string under a key that names a secret whole. Numbers, booleans and keys stay."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {key: MASK if isinstance(item, str) and item and is_secret_name(str(key)) else scrub(item)
                for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(item, str) for item in value):
            return scrub_argv(value)
        return [scrub(item) for item in value]
    return value


__all__ = ["MASK", "is_secret_name", "scrub", "scrub_argv", "scrub_text"]
