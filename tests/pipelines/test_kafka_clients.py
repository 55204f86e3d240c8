"""pipelines/kafka_clients.py: a cluster that does not answer is one line within ``kafka.timeout_seconds``, naming
its address and why; librdkafka's log goes through ``logging``, each repeated line once, with its count; no client
creates a topic. Against real sockets (tests/edges.py) and the session's broker."""

from __future__ import annotations

import logging
import time

import pytest

from conf.settings import KafkaSettings, Settings
from pipelines.kafka_clients import (
    LOGGER,
    ClientLog,
    ClusterUnreachable,
    client_config,
    cluster_metadata,
    describe_topic,
    unreachable_message,
)
from tests.edges import closed_address, silent_server

TIMEOUT = 2.0
#: What a failed request may take beyond ``kafka.timeout_seconds`` (the client's start, the log served after it).
SLACK = 2.0


def settings_at(address: str, **kafka: object) -> Settings:
    return Settings(kafka=KafkaSettings(bootstrap_servers=address, timeout_seconds=TIMEOUT, **kafka))  # type: ignore[arg-type]


def unreachable(settings: Settings) -> tuple[str, float]:
    started = time.monotonic()
    with pytest.raises(ClusterUnreachable) as raised:
        describe_topic(settings, "orders")
    return str(raised.value), time.monotonic() - started


def test_a_refused_connection_is_unreachable_within_the_timeout_naming_the_address(caplog) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.INFO, logger=LOGGER)
    with closed_address() as address:
        message, seconds = unreachable(settings_at(address))
    assert seconds < TIMEOUT + SLACK
    assert message == (f"Kafka cluster {address} did not answer within 2 s (kafka.timeout_seconds): "
                       f"Connect to ipv4#{address} failed: Connection refused")
    # librdkafka retried the connection dozens of times in those seconds: its line is logged once, then its count.
    failures = [record.getMessage() for record in caplog.records if record.name == LOGGER]
    assert len(failures) == 2, failures
    assert failures[1].startswith(failures[0]) and failures[1].endswith("more times)")


def test_a_server_that_accepts_and_never_answers_is_unreachable_within_the_timeout() -> None:
    with silent_server() as address:
        message, seconds = unreachable(settings_at(address))
    assert seconds < TIMEOUT + SLACK
    assert message == (f"Kafka cluster {address} did not answer within 2 s (kafka.timeout_seconds): it accepted the "
                       "connection but never answered Kafka's first request (ApiVersions); if it is a Kafka listener, "
                       "it may expect TLS or SASL, which kafka.security_protocol = PLAINTEXT does not use")


def test_sasl_settings_against_a_plaintext_listener_are_named_as_the_likely_cause(kafka_broker) -> None:  # type: ignore[no-untyped-def]
    settings = settings_at(kafka_broker.bootstrap_servers, security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                           sasl_username="offsetlake", sasl_password="secret")
    message, seconds = unreachable(settings)
    assert seconds < TIMEOUT + SLACK
    assert message.startswith(f"Kafka cluster {kafka_broker.bootstrap_servers} did not answer within 2 s")
    assert "SASL PLAIN mechanism handshake failed" in message
    assert message.endswith("; the TLS/SASL settings may be the cause (kafka.security_protocol = SASL_PLAINTEXT, "
                            "kafka.sasl_mechanism = PLAIN): check that the listener takes them")
    assert "secret" not in message


def test_a_topic_that_does_not_exist_is_none_and_asking_does_not_create_it(kafka_broker) -> None:  # type: ignore[no-untyped-def]
    settings = settings_at(kafka_broker.bootstrap_servers)
    assert describe_topic(settings, "kafka-clients-no-such-topic") is None
    assert "kafka-clients-no-such-topic" not in cluster_metadata(settings).topics  # the broker auto-creates topics


def test_no_client_offsetlake_makes_creates_a_topic_not_even_when_the_pass_through_asks() -> None:
    settings = settings_at("127.0.0.1:9092")
    pass_through = settings.kafka.model_copy(update={"librdkafka": {"allow.auto.create.topics": "true",
                                                                   "client.id": "mine"}})
    config = client_config(settings.model_copy(update={"kafka": pass_through}))
    assert config["allow.auto.create.topics"] is False and config["client.id"] == "mine"
    assert isinstance(config["logger"], ClientLog)


def test_the_timeouts_that_say_why_a_connection_failed_fit_within_the_commands_timeout() -> None:
    short = client_config(settings_at("127.0.0.1:9092"))
    assert short["socket.connection.setup.timeout.ms"] == 1000 and short["api.version.request.timeout.ms"] == 1000
    default = client_config(settings_at("127.0.0.1:9092").model_copy(update={"kafka": KafkaSettings()}))
    # librdkafka's own defaults, when half the timeout is longer
    assert default["socket.connection.setup.timeout.ms"] == 15_000
    assert default["api.version.request.timeout.ms"] == 10_000


def test_a_repeated_log_line_is_logged_once_per_interval_with_its_count(caplog) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.INFO, logger=LOGGER)
    now = [0.0]
    log = ClientLog(repeat_seconds=60.0, clock=lambda: now[0])
    line = "[thrd:b:9092/bootstrap]: b:9092/bootstrap: Connect to ipv4#10.0.0.1:9092 failed: Connection refused " \
           "(after {}ms in state CONNECT)"
    for ms in range(5):
        log.log(logging.ERROR, "%s [%s] %s", "FAIL", "rdkafka#consumer-1", line.format(ms))
    now[0] = 61.0
    log.log(logging.ERROR, "%s [%s] %s", "FAIL", "rdkafka#consumer-1", line.format(7))
    log.log(logging.INFO, "%s [%s] %s", "CONNECT", "rdkafka#consumer-1", "connecting")
    log.log(logging.INFO, "%s [%s] %s", "CONNECT", "rdkafka#consumer-1", "connecting")
    log.close()
    assert [record.getMessage() for record in caplog.records] == [
        f"FAIL [rdkafka#consumer-1] {line.format(0)}",
        f"FAIL [rdkafka#consumer-1] {line.format(7)} (repeated 4 times since)",
        "CONNECT [rdkafka#consumer-1] connecting",
        "CONNECT [rdkafka#consumer-1] connecting (repeated 1 more times)",
    ]
    assert log.reason == line.format(7)


def test_a_failure_without_a_log_line_is_told_by_the_requests_error() -> None:
    message = unreachable_message(settings_at("b-1:9092,b-2:9092", security_protocol="SSL"), None,
                                  "Failed while waiting for controller: Local: Timed out")
    assert message == ("Kafka cluster b-1:9092,b-2:9092 did not answer within 2 s (kafka.timeout_seconds): Failed "
                       "while waiting for controller: Local: Timed out; the TLS/SASL settings may be the cause "
                       "(kafka.security_protocol = SSL): check that the listener takes them")
