"""The librdkafka clients offsetlake makes (confluent-kafka), and how they fail: in bounded time, in one line.

Every librdkafka client offsetlake makes (admin clients, consumers, ``simulate``'s producer) takes ``client_config``:

* the connection settings (``KafkaSettings.librdkafka_config``, its pass-through map included);
* ``allow.auto.create.topics=false``: offsetlake never creates a topic. A Metadata request naming a topic that
  does not exist creates it on a broker with ``auto.create.topics.enable=true`` unless the request says otherwise
  (``AllowAutoTopicCreation``, MetadataRequest v4, Kafka 0.11); librdkafka's admin client and producer say
  "allow" by default, its consumer does not (the Java consumer's setting of the same name: KIP-361, Kafka 2.3);
* librdkafka's log through Python ``logging`` (``ClientLog``, confluent-kafka's ``logger`` option), not written
  to stderr by librdkafka's own threads: a cluster that does not answer made it print the same ``FAIL`` line for
  each reconnection. The CLI sends ``logging`` to its debug log.

``describe_topic`` and ``cluster_metadata`` are the cheap first requests a command makes before Spark starts: a
cluster that does not answer within ``kafka.timeout_seconds`` is ``ClusterUnreachable``, whose message names the
bootstrap address, the reason librdkafka logged last, and whether the TLS/SASL settings may be the cause.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from conf.settings import Settings

if TYPE_CHECKING:
    from confluent_kafka.admin import AdminClient, ClusterMetadata, TopicDescription

LOGGER = "offsetlake.librdkafka"
#: A log line repeated within this many seconds is counted, not logged again (``ClientLog``).
REPEAT_SECONDS = 60.0
#: librdkafka's defaults for the two timeouts that tell why a connection failed (CONFIGURATION.md): a connection
#: (TCP, TLS, SASL) set up within ``socket.connection.setup.timeout.ms``, the first request answered within
#: ``api.version.request.timeout.ms``. ``client_config`` keeps each within half of ``kafka.timeout_seconds``, so
#: that the reason is logged before the command gives up.
CONNECTION_SETUP_MS = 30_000
API_VERSION_REQUEST_MS = 10_000


class ClusterUnreachable(RuntimeError):
    """The cluster did not answer within ``kafka.timeout_seconds``; the message is one line naming it and why."""


class ClientLog:
    """One client's librdkafka log lines, to the ``offsetlake.librdkafka`` logger (confluent-kafka's ``logger``
    option: it calls ``log(level, format, facility, client name, text)`` with a ``logging`` level, when the client is
    polled).

    A line is logged once per ``REPEAT_SECONDS``; its repeats meanwhile are counted and said with its next
    appearance, or by ``close`` ("repeated 41 times"). Lines differing only in their "after 3ms" are the same line.
    ``reason``: why the cluster did not answer, as librdkafka saw it (its last ``FAIL`` line, else its last
    warning).
    """

    def __init__(self, logger: str = LOGGER, repeat_seconds: float = REPEAT_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._logger = logging.getLogger(logger)
        self._repeat_seconds = repeat_seconds
        self._clock = clock
        self._logged_at: dict[str, float] = {}
        self._repeats: dict[str, tuple[int, int, str]] = {}  # key -> (level, repeats, the line)
        self._failure: str | None = None
        self._warning: str | None = None

    @property
    def reason(self) -> str | None:
        return self._failure or self._warning

    def log(self, level: int, msg: str, *args: Any) -> None:
        text = msg % args if args else msg
        if level >= logging.WARNING:
            facility, line = (str(args[0]), str(args[-1])) if len(args) == 3 else ("", text)
            if facility == "FAIL":
                self._failure = line
            else:
                self._warning = line
        key = re.sub(r"\d+ms\b", "ms", text)
        now = self._clock()
        logged_at = self._logged_at.get(key)
        if logged_at is not None and now - logged_at < self._repeat_seconds:
            _, repeats, _ = self._repeats.get(key, (level, 0, text))
            self._repeats[key] = (level, repeats + 1, text)
            return
        _, repeats, _ = self._repeats.pop(key, (level, 0, text))
        self._logged_at[key] = now
        self._logger.log(level, "%s%s", text, f" (repeated {repeats} times since)" if repeats else "")

    def close(self) -> None:
        """Log the repeats not said yet."""
        for level, repeats, text in self._repeats.values():
            self._logger.log(level, "%s (repeated %d more times)", text, repeats)
        self._repeats.clear()


def client_config(settings: Settings, log: ClientLog | None = None) -> dict[str, Any]:
    """The configuration of a librdkafka client offsetlake makes (see the module's docstring)."""
    kafka = settings.kafka
    half_ms = max(1000, int(kafka.timeout_seconds * 500))
    return {
        "socket.connection.setup.timeout.ms": min(CONNECTION_SETUP_MS, half_ms),
        "api.version.request.timeout.ms": min(API_VERSION_REQUEST_MS, half_ms),
        **kafka.librdkafka_config(),
        "allow.auto.create.topics": False,
        "logger": log if log is not None else ClientLog(),
    }


@contextlib.contextmanager
def admin_client(settings: Settings) -> Iterator[tuple[AdminClient, ClientLog]]:
    """An admin client (``client_config``) and its log. An admin client logs only when polled: at the end of the
    block its log lines are logged (``poll``), their repeats said (``ClientLog.close``)."""
    from confluent_kafka.admin import AdminClient

    log = ClientLog()
    admin = AdminClient(client_config(settings, log))
    try:
        yield admin, log
    finally:
        admin.poll(0)
        log.close()


def describe_topic(settings: Settings, topic: str) -> TopicDescription | None:
    """The topic as the cluster describes it (Admin DescribeTopics, which never creates it), None if it does not
    exist; ``ClusterUnreachable`` when the cluster does not answer within ``kafka.timeout_seconds``. Other errors
    (no permission to describe it) are raised as confluent-kafka's ``KafkaException``."""
    from confluent_kafka import KafkaError, KafkaException, TopicCollection

    with admin_client(settings) as (admin, log):
        try:
            future = admin.describe_topics(TopicCollection([topic]),
                                           request_timeout=settings.kafka.timeout_seconds)[topic]
            return future.result()
        except KafkaException as exc:
            error = exc.args[0] if exc.args else None
            if isinstance(error, KafkaError) and error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                return None
            admin.poll(0)  # the log lines of the failure, to ``log``, before its message is made
            raise _unreachable_or(exc, settings, log) from exc


def cluster_metadata(settings: Settings) -> ClusterMetadata:
    """Every topic's metadata (a Metadata request for all topics, which creates none); ``ClusterUnreachable``
    when the cluster does not answer within ``kafka.timeout_seconds``."""
    from confluent_kafka import KafkaException

    with admin_client(settings) as (admin, log):
        try:
            return admin.list_topics(timeout=settings.kafka.timeout_seconds)
        except KafkaException as exc:
            admin.poll(0)  # the log lines of the failure, to ``log``, before its message is made
            raise _unreachable_or(exc, settings, log) from exc


def _unreachable_or(exc: Exception, settings: Settings, log: ClientLog) -> Exception:
    """``ClusterUnreachable`` for a request that timed out or found no broker to send to, else ``exc`` itself."""
    from confluent_kafka import KafkaError

    error = exc.args[0] if exc.args else None
    code = error.code() if isinstance(error, KafkaError) else None
    if code not in (KafkaError._TIMED_OUT, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN,
                    KafkaError._RESOLVE, KafkaError._AUTHENTICATION, KafkaError._SSL):
        return exc
    return ClusterUnreachable(unreachable_message(settings, log.reason, error.str() if error else str(exc)))


def unreachable_message(settings: Settings, failure: str | None, error: str) -> str:
    """One line: the cluster, the timeout, the reason (librdkafka's last failure line, else the request's error)
    and, where it may be the cause, the TLS/SASL settings."""
    kafka = settings.kafka
    reason = _reason(failure) if failure else error
    secured = (kafka.security_protocol != "PLAINTEXT" or kafka.sasl_mechanism or kafka.ssl_ca_location
               or any(key.startswith(("ssl.", "sasl.")) for key in kafka.librdkafka))
    security = ", ".join(f"kafka.{key} = {value}" for key, value in (
        ("security_protocol", kafka.security_protocol), ("sasl_mechanism", kafka.sasl_mechanism)) if value)
    if secured:
        hint = f"; the TLS/SASL settings may be the cause ({security}): check that the listener takes them"
    elif re.search(r"SSL|SASL|ApiVersion", reason):
        listener = "if it is a Kafka listener, it" if "(ApiVersions)" in reason else "the listener"
        hint = f"; {listener} may expect TLS or SASL, which {security} does not use"
    else:
        hint = ""
    return (f"Kafka cluster {kafka.bootstrap_servers} did not answer within {kafka.timeout_seconds:g} s "
            f"(kafka.timeout_seconds): {reason}{hint}")


def _reason(failure: str) -> str:
    """librdkafka's failure line without its thread, broker and timing, e.g. "Connect to ipv4#127.0.0.1:9092
    failed: Connection refused"."""
    text = re.sub(r"^\[thrd:[^\]]*\]:\s*", "", failure.strip())
    text = re.sub(r"^\S+/(bootstrap|\d+):\s*", "", text)
    text = re.sub(r"\s*\(after \d+ms in state \w+\)$", "", text).rstrip(" :")
    if "ApiVersionRequest failed" in text and "Timed out" in text:
        # librdkafka guesses an old broker ("probably due to broker version < 0.10"); offsetlake needs a newer
        # one anyway, so the likelier cause is said instead.
        return "it accepted the connection but never answered Kafka's first request (ApiVersions)"
    return text
