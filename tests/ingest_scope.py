"""Where a test's first ingest of ``__consumer_offsets`` starts: at the topic's end when the test begins."""

from __future__ import annotations

import json

from conf.settings import Settings


def from_now_on(settings: Settings) -> Settings:
    """``settings`` whose first ingest starts where ``__consumer_offsets`` ends now.

    A test that generates real traffic and then ingests reads its own groups' records (and whatever
    else is written meanwhile), not every earlier test's: its cost and its tables do not depend on
    which tests ran before it. On a broker where no group has committed yet the topic does not
    exist (the coordinator creates it on the first FindCoordinator): everything in it will be new,
    so the ingest starts at the earliest offsets.
    """
    from confluent_kafka.admin import AdminClient

    from pipelines.offsets_topic_source import OFFSETS_TOPIC, topic_end_offsets

    existing = AdminClient(settings.kafka.librdkafka_config()).list_topics(timeout=30).topics
    if OFFSETS_TOPIC not in existing:
        return settings.model_copy(update={"kafka": settings.kafka.model_copy(update={"starting_offsets": "earliest"})})
    ends = topic_end_offsets(settings, OFFSETS_TOPIC)
    start = json.dumps({str(partition): offset for partition, offset in sorted(ends.items())})
    return settings.model_copy(update={"kafka": settings.kafka.model_copy(update={"starting_offsets": start})})
