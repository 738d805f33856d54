"""Every line the server logs is one line, with share tokens left out.

Requests put text of the client's choosing into log records: a path is percent-decoded before anyone
logs it, so `/%0d%0aFAKE` carried a carriage return and a newline into the access log and forged a
line; `%1b[2J` would have cleared the terminal of whoever tails it. So no log line is written raw: every
handler the server configures formats its records with a `OneLineFormatter`, which escapes every control,
separator and invisible format character of the finished line (usertext.shown: `\\x0d`, `\\x0a`,
`\\u202e`), tracebacks included (they become one line too: one record, one line). That holds for the
access log, uvicorn's error log, and any other library's warning that reaches Python's last-resort
handler; in every worker process as well, since uvicorn configures each worker's logging from
`log_config()`.

Share tokens never reach a log: the access log writes `/s/[token]` (web/headers.py), and `CleanRecords` on
the server's loggers and handlers replaces any share-link path in a record that still holds one.
"""

from __future__ import annotations

import logging
import re
import sys
from typing import Any

from stackbench.base.usertext import shown

ACCESS_LOGGER = "stackbench.web.access"
_TOKEN_ANYWHERE = re.compile(r"/s/[A-Za-z0-9_-]+")


class OneLineFormatter(logging.Formatter):
    """A formatter whose every line is one line of text: the whole formatted record (message, traceback,
    stack) with its control and format characters escaped. No colours, which would be control characters."""

    def format(self, record: logging.LogRecord) -> str:
        return shown(super().format(record))


class OneLineUvicornFormatter(OneLineFormatter):
    """uvicorn's error log (`INFO:     Uvicorn running on ...`) in one line per record, without colours:
    what uvicorn's own default formatter writes, escaped."""

    def __init__(self, fmt: str | None = None, datefmt: str | None = None, style: Any = "%",
                 use_colors: bool | None = None) -> None:
        from uvicorn.logging import DefaultFormatter

        super().__init__(fmt, datefmt, style)
        self._uvicorn = DefaultFormatter(fmt, datefmt, style, use_colors=False)

    def format(self, record: logging.LogRecord) -> str:
        return shown(self._uvicorn.format(record))


class CleanRecords(logging.Filter):
    """On the server's loggers and handlers: a record's message and text arguments without share tokens
    (`/s/[token]`) and with their control characters escaped, before any handler sees it. On the loggers
    it is defence in depth for a handler someone else attaches (pytest does, to uvicorn's access log,
    which then logs), whose formatter is not ours."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_clean(a) if isinstance(a, str) else a for a in record.args)
        if isinstance(record.msg, str):
            record.msg = _clean(record.msg)
        return True


def _clean(text: str) -> str:
    return shown(_TOKEN_ANYWHERE.sub("/s/[token]", text))


class CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler on the stderr of the moment it writes, not the one of the moment it was made (a replaced
    stderr, as under a test harness or a daemon manager, may since have been closed)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def log_config() -> dict[str, Any]:
    """The server's logging, as uvicorn applies it (`uvicorn.Config(log_config=...)`) in the serving
    process and again in each worker: the access log and uvicorn's logs on stderr, every handler one line
    per record and token-free."""
    here = __name__
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "default": {"()": f"{here}.OneLineUvicornFormatter", "fmt": "%(levelprefix)s %(message)s"},
            "access": {"()": f"{here}.OneLineFormatter", "fmt": "%(asctime)s %(message)s"},
        },
        "filters": {"clean": {"()": f"{here}.CleanRecords"}},
        "handlers": {
            "default": {"class": f"{here}.CurrentStderr", "formatter": "default", "filters": ["clean"]},
            "access": {"class": f"{here}.CurrentStderr", "formatter": "access", "filters": ["clean"]},
        },
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": "INFO", "propagate": False, "filters": ["clean"]},
            "uvicorn.error": {"level": "INFO", "filters": ["clean"]},
            "uvicorn.access": {"handlers": ["access"], "level": "INFO", "propagate": False, "filters": ["clean"]},
            ACCESS_LOGGER: {"handlers": ["access"], "level": "INFO", "propagate": True, "filters": ["clean"]},
        },
    }


def install_last_resort() -> None:
    """Warnings of loggers nobody configured (asyncio's, a library's) go to Python's last-resort handler,
    which writes the message raw: make it one line per record too."""
    if not isinstance(logging.lastResort, CurrentStderr):
        handler = CurrentStderr()
        handler.setLevel(logging.WARNING)
        handler.setFormatter(OneLineFormatter("%(levelname)s %(name)s: %(message)s"))
        handler.addFilter(CleanRecords())
        logging.lastResort = handler
