"""pipelines/source_faults.py: which failures of the source a long-running job waits out and which end it, over
error texts a real broker and Spark's Kafka source gave; one line per change of state; backoff capped.

The texts marked "captured" were copied from a debug log of ``offsetlake run`` against the embedded broker (the
broker stopped under a running ingest) or from confluent-kafka's exception against a closed port; the
authorization and authentication texts are the messages Kafka's own exceptions carry (``Errors``:
``TopicAuthorizationException``, ``SaslAuthenticationException``) as the Java client raises them."""

from __future__ import annotations

import pytest

from conf.settings import ConfigError, KafkaSettings, Settings
from pipelines.kafka_clients import ClusterUnreachable, describe_topic
from pipelines.offsets_topic_source import TopicNotFound
from pipelines.source_faults import (
    BACKOFF_MAX_SECONDS,
    SourceState,
    StallWatch,
    classify,
    run_through_faults,
)
from tests.edges import closed_address

#: Captured: Spark's Kafka source, the broker stopped while the ingest's query asked for the latest offsets.
POSITION_TIMEOUT = ("org.apache.kafka.common.errors.TimeoutException: Timeout of 5000ms expired before the position "
                    "for partition __consumer_offsets-0 could be determined")
#: Kafka's messages for a principal without Describe/Read on the topic, or refused at SASL authentication.
TOPIC_AUTHORIZATION = ("org.apache.kafka.common.errors.TopicAuthorizationException: Not authorized to access topics: "
                       "[__consumer_offsets]")
SASL_FAILED = ("org.apache.kafka.common.errors.SaslAuthenticationException: Authentication failed during "
               "authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512")
GROUP_AUTHORIZATION = ("org.apache.kafka.common.errors.GroupAuthorizationException: Not authorized to access group: "
                       "spark-kafka-source-1")
#: Spark's error for a checkpoint whose stateful operators are not the query's.
CHECKPOINT_MISMATCH = ("[STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA] Streaming stateful operator name "
                       "does not match with the operator in state metadata. SQLSTATE: 42K03")


class IngestFailed(RuntimeError):
    """Stands for ``IngestError`` raised from the streaming query's exception (its first line, then the cause)."""


def failure(text: str) -> BaseException:
    try:
        try:
            raise RuntimeError(f"[STREAM_FAILED] Query [id = 1] terminated with exception: {text.splitlines()[0]}\n"
                               f"{text}")
        except RuntimeError as cause:
            raise IngestFailed("Query terminated with exception") from cause
    except IngestFailed as exc:
        return exc


def test_a_kafka_timeout_of_the_ingests_query_is_waited_out_and_named_without_java_classes() -> None:
    fault = classify(failure(POSITION_TIMEOUT))
    assert fault.kind == "unreachable"
    assert fault.reason == ("Timeout of 5000ms expired before the position for partition __consumer_offsets-0 could "
                            "be determined")


def test_a_cluster_that_refuses_the_connection_is_waited_out() -> None:
    with closed_address() as address:
        settings = Settings(kafka=KafkaSettings(bootstrap_servers=address, timeout_seconds=1.0))
        with pytest.raises(ClusterUnreachable) as raised:
            describe_topic(settings, "__consumer_offsets")
    fault = classify(raised.value)
    assert fault.kind == "unreachable" and f"Connect to ipv4#{address} failed: Connection refused" in fault.reason


def test_missing_permissions_and_a_checkpoint_that_no_longer_matches_end_the_job() -> None:
    assert classify(failure(TOPIC_AUTHORIZATION)).reason == (
        "not authorized to read the topic: Not authorized to access topics: [__consumer_offsets]")
    assert classify(failure(GROUP_AUTHORIZATION)).kind == "fatal"
    assert classify(failure(SASL_FAILED)).reason.startswith("authentication failed: Authentication failed during")
    # An authorization failure that the client then reports as a timeout is still an authorization failure.
    assert classify(failure(f"{POSITION_TIMEOUT}\nCaused by: {TOPIC_AUTHORIZATION}")).kind == "fatal"
    assert classify(failure(CHECKPOINT_MISMATCH)).kind == "fatal"


def test_bad_settings_and_an_unknown_failure_end_the_job() -> None:
    assert classify(ConfigError("kafka.timeout_seconds", -1, "a number of seconds > 0", "environment")).kind == "fatal"
    unknown = classify(failure("java.io.IOException: No space left on device"))
    assert unknown.kind == "fatal" and "No space left on device" in unknown.reason


def test_no_offsets_topic_yet_is_waited_for_but_a_missing_topic_of_another_name_is_not() -> None:
    assert classify(TopicNotFound("__consumer_offsets", "topic __consumer_offsets does not exist")).kind == "waiting"
    assert classify(TopicNotFound("orderz", "topic orderz does not exist")).kind == "fatal"


def test_transient_faults_are_said_once_each_backed_off_and_the_recovery_said_once() -> None:
    said: list[str] = []
    slept: list[float] = []
    outcomes: list[BaseException | None] = [failure(POSITION_TIMEOUT), failure(POSITION_TIMEOUT), None]
    probes: list[BaseException | None] = [ClusterUnreachable("Kafka cluster x did not answer within 5 s"), None,
                                          None]

    def run() -> str:
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome
        return "done"

    def probe() -> None:
        outcome = probes.pop(0)
        if outcome is not None:
            raise outcome

    result = run_through_faults(run, probe=probe, should_stop=lambda: False, state=SourceState(said.append),
                                sleep=slept.append)
    assert result == "done"
    assert said == ["broker unreachable (Timeout of 5000ms expired before the position for partition "
                    "__consumer_offsets-0 could be determined); retrying in 1s", "connected again",
                    "broker unreachable (Timeout of 5000ms expired before the position for partition "
                    "__consumer_offsets-0 could be determined); retrying in 4s", "connected again"]
    assert sum(slept) == pytest.approx(1 + 2 + 4)  # doubling from 1 s


def test_a_fatal_fault_is_raised_at_once_without_a_retry() -> None:
    said: list[str] = []
    calls: list[int] = []

    def run() -> None:
        calls.append(1)
        raise failure(TOPIC_AUTHORIZATION)

    with pytest.raises(IngestFailed):
        run_through_faults(run, probe=lambda: None, should_stop=lambda: False, state=SourceState(said.append))
    assert calls == [1] and said == []


def test_waiting_for_the_offsets_topic_is_said_once_with_the_address_then_its_appearance() -> None:
    said: list[str] = []
    missing = TopicNotFound("__consumer_offsets", "topic __consumer_offsets does not exist")
    outcomes: list[BaseException | None] = [missing, missing, missing, None, None]

    def describe() -> bool:  # the check is its own probe (wait_for_source_topic)
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome
        return True

    settings = Settings(kafka=KafkaSettings(bootstrap_servers="127.0.0.1:9092"))
    assert run_through_faults(describe, probe=describe, should_stop=lambda: False,
                              state=SourceState(said.append, settings), sleep=lambda seconds: None)
    assert said == ["waiting for __consumer_offsets to appear on 127.0.0.1:9092 (no group has committed yet)",
                    "__consumer_offsets is there; starting"]


def test_a_stop_while_waiting_ends_the_wait_quietly() -> None:
    stopped: list[bool] = []

    def run() -> None:
        stopped.append(True)  # the stop arrives with the first fault
        raise failure(POSITION_TIMEOUT)

    assert run_through_faults(run, probe=lambda: None, should_stop=lambda: bool(stopped),
                              state=SourceState(lambda line: None)) is None


def test_a_query_without_progress_has_the_cluster_probed_with_a_capped_backoff_and_each_change_said_once() -> None:
    now = [0.0]
    said: list[str] = []
    probed_at: list[float] = []

    def probe() -> None:
        probed_at.append(now[0])
        if len(probed_at) > 1:  # the first probe answers; then the cluster is gone
            raise ClusterUnreachable("Kafka cluster x did not answer within 5 s: Connection refused")

    watch = StallWatch(probe, SourceState(said.append), stall_seconds=20.0, clock=lambda: now[0])
    progress = {"timestamp": "2026-11-27T10:00:00.000Z"}
    for second in range(0, 200):  # no new progress after the first: a busy query, then a stalled one
        now[0] = float(second)
        watch(progress)
    # Probed once stalled (20 s without progress): it answers, so 20 s more; then each failure doubles the wait,
    # up to 30 s.
    assert probed_at == [20, 40, 41, 43, 47, 55, 71, 101, 131, 161, 191]
    assert said == ["broker unreachable (Kafka cluster x did not answer within 5 s: Connection refused); retrying in "
                    "1s"]
    watch({"timestamp": "2026-11-27T10:03:20.000Z"})  # the query progressed: the cluster answers again
    assert said[-1] == "connected again" and len(said) == 2 and BACKOFF_MAX_SECONDS == 30.0
