"""Map the library's known failures to one-line command errors; keep their details in the debug log.

A command's failure is one line on stderr, ``offsetlake: <what is wrong>`` and, when there is more to read (a
stack trace, the Spark JVM's output, librdkafka's log), `` (details: <the debug log>)``. The details go to
``Settings.debug_log_path`` (``debug_log``): ``cli/main.py`` sends Python's ``logging`` there for the command's
duration, and ``pipelines/spark_session.py`` the JVM's output.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import re
import traceback
from collections.abc import Iterator
from pathlib import Path


class CommandError(RuntimeError):
    """A failure the command reports as one line, with a non-zero exit status."""


#: A debug log larger than this is moved to ``<name>.1`` when a command starts (replacing the one there).
DEBUG_LOG_MAX_BYTES = 16 * 1024 * 1024


def first_line(exc: BaseException) -> str:
    """One line saying what ``exc`` is about.

    A JVM error (Py4J's ``Py4JJavaError``, PySpark's errors from the JVM such as ``AnalysisException`` or
    ``StreamingQueryException``) by its message and, when that does not say it already, its innermost cause, without
    Java class names or the JVM stack: "An error occurred while calling o75.save" says nothing, the file Delta could
    not read and why ("Unexpected end-of-input") do. A Kafka error by its text, an OS error by its reason and file;
    anything else by the first line of its message, else its type.
    """
    text = _jvm_error_line(exc)
    if text is None:
        text = _kafka_error_line(exc)
    if text is None and isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    if text is None:
        message = str(exc).strip()
        text = message.splitlines()[0] if message else type(exc).__name__
    return _without_sqlstate(text) or type(exc).__name__


def _jvm_error_line(exc: BaseException) -> str | None:
    module = type(exc).__module__
    if module.startswith("py4j") and hasattr(exc, "java_exception"):
        try:
            text = str(exc)  # asks the JVM for the stack, where each cause is a line
        except Exception:  # noqa: BLE001 - a JVM gone: Py4J's own summary
            text = getattr(exc, "errmsg", "") or ""
        causes = [m.group(1) for m in re.finditer(r"^(?:: |Caused by: )(.+)$", text, re.MULTILINE)]
        return _message_and_cause(causes[0], causes[-1]) if causes else None
    if module.startswith("pyspark.errors") and hasattr(exc, "_desc"):
        innermost = exc
        while getattr(innermost, "_cause", None) is not None and hasattr(innermost._cause, "_desc"):
            innermost = innermost._cause

        def line(error: BaseException) -> str:
            return next((text for text in str(error._desc).splitlines() if text.strip()), "")  # type: ignore[attr-defined]

        return _message_and_cause(line(exc), line(innermost)) or None
    return None


def _message_and_cause(message: str, cause: str) -> str:
    """``message: cause``, without Java class names, the cause left out when the message says it already."""
    message, cause = _without_sqlstate(_without_class(message)), _without_sqlstate(_without_class(cause))
    if not cause or cause in message:
        return message
    return f"{message.rstrip(' .:')}: {cause}" if message else cause


def _without_class(text: str) -> str:
    """``java.util.concurrent.ExecutionException: java.io.IOException: No space left on device`` -> ``No space left
    on device``."""
    return re.sub(r"^(?:[a-z][\w$]*(?:\.[\w$]+)+: )+", "", text.strip()) or text.strip()


def _without_sqlstate(text: str) -> str:
    return re.sub(r"\s*SQLSTATE: \w+\.?$", "", text.strip())


def _kafka_error_line(exc: BaseException) -> str | None:
    if not type(exc).__module__.startswith("cimpl") and not type(exc).__module__.startswith("confluent_kafka"):
        return None
    error = exc.args[0] if getattr(exc, "args", None) else exc
    text = error.str() if hasattr(error, "str") else str(error)
    return str(text)


def known_failure(exc: BaseException) -> str | None:
    """The one line of a failure the library describes itself, None for any other exception."""
    from confluent_kafka import KafkaException

    from broker.embedded import BrokerError
    from jvm.artifacts import ArtifactError
    from pipelines.kafka_clients import ClusterUnreachable
    from pipelines.offsets_topic_source import SourceTopicError
    from pipelines.spark_session import SparkStartError, WarehouseError

    if isinstance(exc, BrokerError | ArtifactError | SourceTopicError | ClusterUnreachable | SparkStartError
                  | WarehouseError):
        return str(exc)
    if isinstance(exc, KafkaException):
        return f"Kafka request failed: {first_line(exc)}"
    return None


@contextlib.contextmanager
def reported_as_command_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        known = known_failure(exc)
        if known is None:
            raise
        raise CommandError(known) from exc


class _DebugLogHandler(logging.FileHandler):
    """A debug log that cannot be written (a full disk, a read-only home) loses its lines, not the command's one
    line: no "--- Logging error ---" on stderr."""

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        pass

    def _open(self):  # type: ignore[no-untyped-def]
        """Its directory made with its first line: a command that logs nothing leaves nothing behind."""
        Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open()


@contextlib.contextmanager
def debug_log(path: Path) -> Iterator[None]:
    """Within the block, Python's ``logging`` (warnings and errors of every library, librdkafka's log lines through
    ``pipelines.kafka_clients``) goes to the debug log ``path``, not to stderr."""
    with contextlib.suppress(OSError):
        if path.stat().st_size > DEBUG_LOG_MAX_BYTES:
            path.replace(path.with_name(path.name + ".1"))
    from cli.console import said_on_console

    handler = _DebugLogHandler(path, delay=True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(lambda record: not said_on_console(record))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        handler.close()


def write_details(exc: BaseException, path: Path, command: str) -> str:
    """Append ``exc``'s traceback (its causes included, a JVM error's Java stack with it) to the debug log; return
    `` (details: <path>)`` for the command's one line, or "" when the log cannot be written."""
    stamp = dt.datetime.now().astimezone().isoformat(timespec="seconds")
    text = "".join(traceback.format_exception(exc))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"--- {stamp} pid {os.getpid()}: offsetlake {command} failed\n{text}\n")
    except OSError:
        return ""
    return f" (details: {path})"
