"""Map the library's known failures to one-line command errors."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class CommandError(RuntimeError):
    """A failure the command reports as one line, with a non-zero exit status."""


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (a JVM error's is followed by its stack), else its type."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextlib.contextmanager
def reported_as_command_errors() -> Iterator[None]:
    from confluent_kafka import KafkaException

    from broker.embedded import BrokerError
    from jvm.artifacts import ArtifactError
    from pipelines.offsets_topic_source import SourceTopicError

    try:
        yield
    except (BrokerError, ArtifactError, SourceTopicError) as exc:
        raise CommandError(str(exc)) from exc
    except KafkaException as exc:
        raise CommandError(f"Kafka request failed: {exc.args[0] if exc.args else exc}") from exc
