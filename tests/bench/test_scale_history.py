"""bench/scale_history.py: the generated history is what Kafka's coordinator would have written, moved to each group."""

from __future__ import annotations

import dataclasses

from bench.scale_history import (
    ARCHETYPES,
    EPISODE_MS,
    HOUR_MS,
    TEMPLATE_GROUP,
    TEMPLATE_START_MS,
    TEMPLATE_TOPIC,
    commit_key,
    commit_rounds,
    commit_value_v3,
    committed_offset,
    end_offset,
    group_records,
    plan_cluster,
    simulate_template,
    snapshot_partitions,
    steady_commits,
)
from coordinator.consumer_group import topic_id_for
from decoders import decode_record, encode_record
from decoders.wire import Uuid

END = 1_790_000_000_000
KINDS = {kind.name: kind for kind in ARCHETYPES}


def small(name: str, **changes: object) -> object:
    return dataclasses.replace(KINDS[name], **changes)


def test_the_commit_encoder_writes_the_bytes_kafkas_serializer_does() -> None:
    for offset, epoch, at, metadata in ((0, 0, END, ""), (2**40 + 7, 12, END + 1, "checkpoint:é"), (5, -1, 1, "x")):
        key, value = encode_record("offset_commit", {"group": "billing", "topic": "orders", "partition": 7},
                                   {"offset": offset, "leader_epoch": epoch, "metadata": metadata,
                                    "commit_timestamp": at}, 3)
        assert commit_key("billing", "orders", 7) == key
        assert commit_value_v3(offset, epoch, at, metadata) == value


def test_a_groups_records_are_the_templates_with_its_name_its_topic_and_its_moments() -> None:
    kind = small("cooperative-small", members=3, partitions=6)
    template = simulate_template(kind)
    plan = plan_cluster(1, END, archetypes=(dataclasses.replace(kind, share=1.0),))
    group = plan.groups[0]

    records = list(group_records(template, group))

    assert len(records) == len(template.records) > 3
    for (key, value, at), (original, template_at) in zip(records, template.records, strict=True):
        decoded = decode_record(key, value)
        assert decoded.type == original.type == "group_metadata" and decoded.key == {"group": group.group}
        # episode i of the template (i x EPISODE_MS after its start) starts at the group's i-th moment
        episode, into = divmod(template_at - TEMPLATE_START_MS, EPISODE_MS)
        assert at == group.episodes[episode] + into
        assert decoded.value["generation"] == original.value["generation"]
        for member, was in zip(decoded.value["members"], original.value["members"], strict=True):
            assert member["member_id"] == was["member_id"]
            assert member["subscription"]["topics"] == [group.topic]
            assert member["assignment"]["partitions"] == [
                {**p, "topic": group.topic} for p in was["assignment"]["partitions"]]
            assert member["subscription"]["user_data"] == was["subscription"]["user_data"]
        # the state's time keeps its distance to the record's (moved with the episode it falls in)
        assert decoded.value["current_state_timestamp"] - at == original.value["current_state_timestamp"] - template_at


def test_a_kip848_groups_records_name_its_topic_by_its_topic_id() -> None:
    kind = small("kip848-small", members=2, partitions=4)
    template = simulate_template(kind)
    group = plan_cluster(1, END, archetypes=(dataclasses.replace(kind, share=1.0),)).groups[0]
    ours, theirs = Uuid.from_string(topic_id_for(group.topic)), Uuid.from_string(topic_id_for(TEMPLATE_TOPIC))

    decoded = [decode_record(k, v) for k, v, _ in group_records(template, group)]

    assert {r.key["group_id"] for r in decoded} == {group.group}
    values = [r for r in decoded if r.value is not None]  # a member's leaving is a tombstone
    ids = {p["topic_id"] for r in values if r.type == "consumer_group_current_member_assignment"
           for p in r.value["assigned_partitions"]}
    assert ids == {ours} and ours != theirs
    assert {t for r in values if r.type == "consumer_group_member_metadata"
            for t in r.value["subscribed_topic_names"]} == {group.topic}
    assert TEMPLATE_GROUP not in repr([r.value for r in decoded])


def test_the_plan_mixes_the_kinds_of_group_and_puts_each_groups_episodes_in_the_week_in_order() -> None:
    plan = plan_cluster(2000, END)

    assert len(plan.groups) == 2000 and len({g.group for g in plan.groups}) == 2000
    counts = {kind.name: sum(g.kind == kind for g in plan.groups) for kind in ARCHETYPES}
    assert counts["range-small"] > counts["cooperative-small"] > counts["kip848-small"] > counts["range-medium"] > 0
    assert min(counts.values()) >= 1
    for g in plan.groups:
        assert plan.start_ms <= g.episodes[0] and g.episodes[-1] < END - HOUR_MS + 1
        assert all(b - a >= EPISODE_MS for a, b in zip(g.episodes, g.episodes[1:], strict=False))
        assert plan.topics[g.topic] == g.kind.partitions
    assert 0 < sum(g.lagging for g in plan.groups) < 200


def test_commits_reach_the_asked_number_and_a_lagging_group_falls_behind_through_the_last_hour() -> None:
    plan = plan_cluster(200, END)
    rounds = commit_rounds(plan, 100_000)
    commits = sum(1 for g in plan.groups for _ in steady_commits(plan, g, rounds))
    assert 100_000 <= commits < 100_000 + sum(g.kind.partitions for g in plan.groups)
    assert list(rounds) == sorted(rounds) and rounds[-1] < END

    lagging = next(g for g in plan.groups if g.lagging)
    healthy = dataclasses.replace(lagging, lagging=False)
    hour_ago, now = END - HOUR_MS, END - 1000
    behind = [end_offset(plan, lagging.topic, t) - committed_offset(plan, g, t)
              for g in (healthy, lagging) for t in (hour_ago, now)]
    assert behind[0] == behind[1] == behind[2] < behind[3]


def test_a_snapshot_lists_every_partition_of_every_planned_topic_with_its_kafka_topic_id() -> None:
    plan = plan_cluster(300, END)
    rows = list(snapshot_partitions(plan, END))
    assert len(rows) == sum(plan.topics.values())
    topic, partition, earliest, latest, topic_id = rows[0]
    assert earliest == 0 and latest == end_offset(plan, topic, END) + partition
    assert topic_id == topic_id_for(topic)
