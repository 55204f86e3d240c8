"""pipelines/offsets_topic_source.py: the topic to read must exist, and nothing offsetlake does creates it, on a
broker that creates topics on request (the session's broker has ``auto.create.topics.enable=true``)."""

from __future__ import annotations

import uuid

import pytest

from broker.workload import create_topic
from conf.settings import KafkaSettings, Settings
from pipelines.kafka_clients import ClusterUnreachable, cluster_metadata
from pipelines.offsets_topic_source import SourceTopicError, check_source_topic, kafka_source_options, topic_partitions
from tests.edges import closed_address


def test_a_topic_that_does_not_exist_is_one_line_naming_it_and_the_cluster_and_stays_absent(settings_for) -> None:  # type: ignore[no-untyped-def]
    settings = settings_for()
    topic = f"no-such-topic-{uuid.uuid4().hex[:8]}"
    with pytest.raises(SourceTopicError) as raised:
        check_source_topic(settings, topic)
    assert str(raised.value) == (f"topic {topic} does not exist on cluster test ({settings.kafka.bootstrap_servers}); "
                                 "offsetlake never creates a topic: check its name")
    assert topic not in cluster_metadata(settings).topics


def test_an_existing_topic_gives_its_partitions(settings_for) -> None:  # type: ignore[no-untyped-def]
    settings = settings_for()
    topic = f"three-partitions-{uuid.uuid4().hex[:8]}"
    create_topic(settings.kafka.librdkafka_config(), topic, partitions=3)
    assert topic_partitions(settings, topic) == [0, 1, 2]
    check_source_topic(settings, topic)


def test_a_cluster_that_does_not_answer_is_unreachable_not_a_missing_topic() -> None:
    with closed_address() as address, pytest.raises(ClusterUnreachable, match=f"Kafka cluster {address} did not"):
        check_source_topic(Settings(kafka=KafkaSettings(bootstrap_servers=address, timeout_seconds=1.0)), "orders")


def test_sparks_java_consumer_is_told_not_to_create_the_topic() -> None:
    options = kafka_source_options(Settings(), "orders")  # a plain topic: subscribed, nothing asked of the cluster
    assert options["subscribe"] == "orders"
    assert options["kafka.allow.auto.create.topics"] == "false"
