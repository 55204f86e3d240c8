"""What a command says on the terminal: results on stdout, progress, warnings and errors on stderr, as text or, with
``--log-format json``, one JSON object a line for a log shipper.

A line is said through ``say`` (Python ``logging``, under the ``offsetlake.<command>`` loggers); ``cli/main.py``
installs the one handler that writes them (``console_output``), once per command. Nothing else reaches the
terminal: the other libraries' logging goes to the debug log (``cli/errors.py``), Spark's JVM writes there too
(``pipelines/spark_session.py``). In JSON a line is ``{"time", "level", "logger", "message"}`` and the figures
``fields`` gives (a ``run`` cycle's records, rows per layer, freshness).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import sys
from collections.abc import Iterator
from typing import Any, TextIO

LOG_FORMATS = ("text", "json")
ROOT = "offsetlake"
_STDOUT = "offsetlake_stdout"
_FIELDS = "offsetlake_fields"
_SAID = "offsetlake_said"


def say(command: str, message: str, *, level: int = logging.INFO, stdout: bool = False,
        fields: dict[str, Any] | None = None) -> None:
    """One line of ``command`` (``offsetlake.<command>``'s logger): on stdout (``stdout``) or stderr. Without the
    handler (library code called outside ``cli.main``, e.g. by a test) it is printed as text."""
    logger = logging.getLogger(f"{ROOT}.{command}" if command else ROOT)
    if not any(isinstance(h, ConsoleHandler) for h in logging.getLogger(ROOT).handlers):
        print(message, file=sys.stdout if stdout else sys.stderr, flush=True)
        return
    if logger.level == logging.NOTSET or logger.level > level:
        logger.setLevel(min(level, logging.INFO))
    logger.log(level, message, extra={_STDOUT: stdout, _FIELDS: fields or {}, _SAID: True})


def said_on_console(record: logging.LogRecord) -> bool:
    """Whether ``record`` is one of ``say``'s lines (the debug log leaves them out: they are on the terminal)."""
    return bool(getattr(record, _SAID, False))


class ConsoleHandler(logging.Handler):
    """Writes ``say``'s lines to the streams of the moment (``sys.stdout``/``sys.stderr`` when the line is said:
    pytest's capture replaces them), flushed at once, as text or JSON."""

    def __init__(self, log_format: str = "text") -> None:
        super().__init__(logging.DEBUG)
        self.log_format = log_format
        self.addFilter(said_on_console)

    def emit(self, record: logging.LogRecord) -> None:
        stream: TextIO = sys.stdout if getattr(record, _STDOUT, False) else sys.stderr
        try:
            stream.write(self.render(record) + "\n")
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed terminal loses the line, not the command
            self.handleError(record)

    def render(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if self.log_format != "json":
            return message
        line = {"time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds")
                .replace("+00:00", "Z"), "level": record.levelname.lower(), "logger": record.name,
                "message": message}
        line.update(getattr(record, _FIELDS, {}) or {})
        return json.dumps(line, default=str)

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        pass


@contextlib.contextmanager
def console_output(log_format: str = "text") -> Iterator[ConsoleHandler]:
    """Within the block, ``say``'s lines go to stdout/stderr in ``log_format``; py4j's own logging (a line per
    gateway call at DEBUG, its connection notices at INFO) is kept at WARNING."""
    handler = ConsoleHandler(log_format)
    root = logging.getLogger(ROOT)
    root.addHandler(handler)
    py4j = logging.getLogger("py4j")
    py4j_level = py4j.level
    py4j.setLevel(logging.WARNING)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        py4j.setLevel(py4j_level)
