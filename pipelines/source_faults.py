"""How the long-running job takes a failure of its source, the Kafka cluster: it waits out what passes and ends on
what does not.

What passes: a broker restarted or unreachable for a while, a partition's leader moving, ``__consumer_offsets`` not
made yet (the broker creates it when a group first asks for its coordinator: ``FindCoordinator``, KIP-848's
``GroupCoordinatorService`` as the classic one, with ``offsets.topic.num.partitions``). The job says so once, backs
off (tenacity: 1 s doubling to 30 s), and goes on; the ingest's query starts again from its checkpoint, which keeps
it exactly once (``pipelines/ingest.py``). What does not pass ends the job with one line: bad settings, missing
permissions (SASL authentication, ``TOPIC_AUTHORIZATION_FAILED``, ``GROUP_AUTHORIZATION_FAILED``: Kafka's
``Errors``), a checkpoint that no longer matches its query, and any failure not known to pass.

``classify`` reads an exception and its causes (a Py4J error's Java stack, PySpark's streaming query errors, the
librdkafka clients' ``KafkaError`` names) and is pure: its test runs over error texts captured from a real broker.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from conf.settings import ConfigError, Settings

T = TypeVar("T")

#: The first wait after a transient fault, doubled at each further one up to ``BACKOFF_MAX_SECONDS``.
BACKOFF_FIRST_SECONDS = 1.0
BACKOFF_MAX_SECONDS = 30.0
#: How often a wait looks at the stop flag.
STOP_POLL_SECONDS = 0.5

FaultKind = Literal["fatal", "unreachable", "waiting"]


@dataclass(frozen=True)
class SourceFault:
    """What a failure means to a long-running job: ``fatal`` ends it; ``unreachable`` (the cluster or a partition's
    leader does not answer) and ``waiting`` (the source topic is not made yet) are waited out."""

    kind: FaultKind
    reason: str  # one line

    @property
    def transient(self) -> bool:
        return self.kind != "fatal"


#: Error texts that end the job whatever else the chain says, with what the line calls them. Kafka's error names
#: (``org.apache.kafka.common.protocol.Errors``), their Java exception classes and librdkafka's codes.
FATAL_MARKERS: tuple[tuple[str, str], ...] = (
    ("SaslAuthenticationException", "authentication failed"),
    ("SASL_AUTHENTICATION_FAILED", "authentication failed"),
    ("Authentication failed", "authentication failed"),
    ("_AUTHENTICATION", "authentication failed"),
    ("SslAuthenticationException", "TLS handshake failed"),
    ("TopicAuthorizationException", "not authorized to read the topic"),
    ("TOPIC_AUTHORIZATION_FAILED", "not authorized to read the topic"),
    ("Not authorized to access topics", "not authorized to read the topic"),
    ("GroupAuthorizationException", "not authorized for the group"),
    ("GROUP_AUTHORIZATION_FAILED", "not authorized for the group"),
    ("ClusterAuthorizationException", "not authorized on the cluster"),
    ("CLUSTER_AUTHORIZATION_FAILED", "not authorized on the cluster"),
    # The checkpoint of a query that no longer matches it (another topic, another stateful plan).
    ("STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA", "the checkpoint does not match the query"),
    ("STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE", "the checkpoint does not match the query"),
    ("STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE", "the checkpoint does not match the query"),
    ("INCOMPATIBLE_DATA_FOR", "the checkpoint does not match the query"),
    ("OffsetOutOfRangeException", "offsets out of range"),
)

#: Error texts of a cluster, broker or partition leader that does not answer now and may later.
UNREACHABLE_MARKERS: tuple[str, ...] = (
    "org.apache.kafka.common.errors.TimeoutException",
    "TimeoutException",
    "Timeout of ",
    "DisconnectException",
    "NetworkException",
    "NotLeaderOrFollowerException",
    "LeaderNotAvailableException",
    "BrokerNotAvailableException",
    "NotCoordinatorException",
    "CoordinatorNotAvailableException",
    "Connection refused",
    "Broker may not be available",
    "Cannot fetch record",
    "_TRANSPORT",
    "_ALL_BROKERS_DOWN",
    "_TIMED_OUT",
    "did not answer within",
)


def classify(exc: BaseException) -> SourceFault:
    """What ``exc`` (with its causes) means to a long-running job; see the module's docstring."""
    from pipelines.kafka_clients import ClusterUnreachable
    from pipelines.offsets_topic_source import OFFSETS_TOPIC, TopicNotFound

    chain = causes(exc)
    if any(isinstance(e, ConfigError) for e in chain):
        return SourceFault("fatal", f"bad settings: {exc}")
    text = "\n".join(error_text(e) for e in chain)
    for marker, meaning in FATAL_MARKERS:
        if marker in text:
            return SourceFault("fatal", f"{meaning}: {line_with(text, marker)}")
    for error in chain:
        if isinstance(error, TopicNotFound) and error.topic == OFFSETS_TOPIC:
            return SourceFault("waiting", f"{OFFSETS_TOPIC} does not exist yet")
        if isinstance(error, ClusterUnreachable):
            return SourceFault("unreachable", str(error))
    for marker in UNREACHABLE_MARKERS:
        if marker in text:
            return SourceFault("unreachable", line_with(text, marker))
    innermost = str(chain[-1]).strip().splitlines()
    return SourceFault("fatal", _plain(innermost[0]) if innermost else type(chain[-1]).__name__)


def causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and its causes (``__cause__``, else ``__context__``), outermost first, each once."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def error_text(exc: BaseException) -> str:
    """All an exception says: its message and, for a JVM error, the Java stack with its causes (Py4J's
    ``java_exception``, PySpark's captured ``_stackTrace``); a librdkafka ``KafkaError`` by its name and text."""
    parts = [type(exc).__name__]
    for arg in getattr(exc, "args", ()):
        if hasattr(arg, "name") and hasattr(arg, "str") and callable(arg.str):  # confluent-kafka's KafkaError
            parts.append(f"{arg.name()}: {arg.str()}")
    try:
        parts.append(str(exc))
    except Exception:  # noqa: BLE001 - a JVM gone: what Python holds
        parts.append(repr(getattr(exc, "args", ())))
    stack = getattr(exc, "_stackTrace", None)
    if isinstance(stack, str):
        parts.append(stack)
    return "\n".join(parts)


def line_with(text: str, marker: str) -> str:
    """The last line of ``text`` holding ``marker`` (the innermost cause's; the last line for ""), without Java
    class names, cut to a readable length."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("at ")]
    return _plain(next((candidate for candidate in reversed(lines) if marker in candidate), marker or "unknown"))


def _plain(line: str) -> str:
    import re

    line = re.sub(r"^(?:Caused by: )?(?:[a-z][\w$]*(?:\.[\w$]+)+: )+", "", line)
    line = re.sub(r"\s*SQLSTATE: \w+\.?$", "", line)
    return line if len(line) <= 300 else line[:297] + "..."


class SourceState:
    """What the job last said about its source, so that each change of state is said once: "broker unreachable
    (<why>); retrying in 1s" or "waiting for __consumer_offsets to appear on <bootstrap> (no group has committed
    yet)" when a fault begins, "connected again" or "__consumer_offsets is there; starting" when the source answers
    again."""

    def __init__(self, on_state: Callable[[str], None], settings: Settings | None = None) -> None:
        self._on_state = on_state
        self._where = f" on {settings.kafka.bootstrap_servers}" if settings is not None else ""
        self.kind: FaultKind | None = None  # the fault being waited out, None while the source answers

    def failed(self, fault: SourceFault, retry_in: float) -> None:
        if fault.kind == self.kind:
            return
        self.kind = fault.kind
        if fault.kind == "waiting":
            from pipelines.offsets_topic_source import OFFSETS_TOPIC

            self._on_state(f"waiting for {OFFSETS_TOPIC} to appear{self._where} (no group has committed yet)")
        else:
            self._on_state(f"broker unreachable ({fault.reason}); retrying in {retry_in:g}s")

    def answered(self) -> None:
        if self.kind is None:
            return
        from pipelines.offsets_topic_source import OFFSETS_TOPIC

        self._on_state(f"{OFFSETS_TOPIC} is there; starting" if self.kind == "waiting" else "connected again")
        self.kind = None


def run_through_faults(run: Callable[[], T], *, probe: Callable[[], None], should_stop: Callable[[], bool],
                       state: SourceState, sleep: Callable[[float], None] = time.sleep) -> T | None:
    """``run()`` until it returns, waiting out transient faults; None when ``should_stop()`` turned true meanwhile.

    After a transient fault (said through ``state``), back off (tenacity), then ``probe()`` (a cheap request: the
    source topic described) until the cluster answers, then ``run()`` again. A fatal fault is raised as it came.
    """
    from tenacity import Retrying, retry_if_exception, wait_exponential

    def attempt() -> T:
        if state.kind is not None:
            probe()
            state.answered()
        return run()

    def before_sleep(retry_state) -> None:  # type: ignore[no-untyped-def]
        failure = retry_state.outcome.exception() if retry_state.outcome else None
        if failure is not None:
            state.failed(classify(failure), retry_state.upcoming_sleep)

    def interruptible(seconds: float) -> None:
        left = seconds
        while left > 0 and not should_stop():
            chunk = min(STOP_POLL_SECONDS, left)
            sleep(chunk)
            left -= chunk

    retrying = Retrying(
        retry=retry_if_exception(lambda exc: classify(exc).transient and not should_stop()),
        wait=wait_exponential(multiplier=BACKOFF_FIRST_SECONDS, min=BACKOFF_FIRST_SECONDS, max=BACKOFF_MAX_SECONDS),
        stop=lambda retry_state: should_stop(), sleep=interruptible, before_sleep=before_sleep, reraise=True)
    try:
        return retrying(attempt)
    except Exception as exc:
        if should_stop() and classify(exc).transient:
            return None
        raise


class StallWatch:
    """Tells a streaming query waiting on a cluster that does not answer from one that is busy, while it runs.

    Spark's Kafka source with consumer-based offset fetching (``KafkaOffsetReaderConsumer``, which offsetlake
    needs for ``__consumer_offsets``) asks for the latest offsets with ``KafkaConsumer.poll(long)``, which waits for
    metadata without a timeout (KAFKA-5697): with the broker down the query neither fails nor reports progress, and
    goes on by itself once the broker is back. So a query that has reported no progress (an idle one reports one
    every ``spark.sql.streaming.noDataProgressEventInterval``) for ``stall_seconds`` has the cluster probed;
    a probe that fails is said through ``state``, and the probes go on with the backoff until one answers or the
    query progresses again. Called from the thread that waits on the query (``run_ingest``'s ``on_wait``).
    """

    def __init__(self, probe: Callable[[], None], state: SourceState, stall_seconds: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._probe = probe
        self._state = state
        self._stall_seconds = stall_seconds
        self._clock = clock
        self._last_progress: object = None
        self._progressed_at = clock()
        self._next_probe = self._progressed_at + stall_seconds
        self._backoff = BACKOFF_FIRST_SECONDS

    def __call__(self, last_progress: dict | None) -> None:
        now = self._clock()
        marker = (last_progress or {}).get("timestamp")
        if marker != self._last_progress:
            self._last_progress, self._progressed_at = marker, now
            self._next_probe = now + self._stall_seconds
            self._backoff = BACKOFF_FIRST_SECONDS
            self._state.answered()
            return
        if now < self._next_probe:
            return
        try:
            self._probe()
        except Exception as exc:  # noqa: BLE001 - classified: only a transient fault is waited out here
            fault = classify(exc)
            if not fault.transient:
                raise
            self._state.failed(fault, self._backoff)
            self._next_probe = self._clock() + self._backoff
            self._backoff = min(BACKOFF_MAX_SECONDS, self._backoff * 2)
            return
        self._state.answered()
        self._next_probe = self._clock() + self._stall_seconds
        self._backoff = BACKOFF_FIRST_SECONDS


def wait_for_source_topic(settings: Settings, topic: str, *, should_stop: Callable[[], bool],
                          on_state: Callable[[str], None]) -> bool:
    """Until the cluster answers and holds ``topic`` (``check_source_topic``), saying once what is awaited; False
    when ``should_stop()`` turned true first. A topic other than ``__consumer_offsets`` that does not exist is not
    awaited: offsetlake never creates one, and its name may be a typo (``SourceTopicError``)."""
    from pipelines.offsets_topic_source import check_source_topic

    def check() -> bool:
        check_source_topic(settings, topic)
        return True

    return bool(run_through_faults(check, probe=lambda: check_source_topic(settings, topic), should_stop=should_stop,
                                   state=SourceState(on_state, settings)))


def stall_seconds(settings: Settings) -> float:
    """How long a query may report no progress before the cluster is probed: twice the cluster's answer time, and
    more than an idle query's progress interval (Spark's noDataProgressEventInterval, 10 s)."""
    return max(20.0, 2 * settings.kafka.timeout_seconds)
