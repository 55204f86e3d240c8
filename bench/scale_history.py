"""A cluster's `__consumer_offsets` history at scale, for ``bench/scale.py``: pure Python, no Spark.

Why templates: the reference coordinator (``coordinator/``) writes a group's records as Kafka's would —
joins, SyncGroup, cooperative revocations, KIP-848 epochs, every field — but simulating 10,000 groups over a
week with heartbeats is hours of Python. So each *kind* of group (an archetype: its size, assignor, protocol
and what happens to it) is simulated once, a few minutes of simulated time in a handful of episodes (start,
a restart, a member leaving, it coming back; a storm for the storm kind), and every group of that kind gets
the template's records with its own group id, its own topic, and the episodes moved to its own moments of
the week. The records are re-encoded by the project's encoders (``decoders.encode_record``, byte-exact
with Kafka's serializers), never patched in place, except the consumer-protocol bytes inside GroupMetadata
(``subscription_raw``/``assignment_raw``), where the topic name is swapped as a length-prefixed string
(ConsumerProtocol v0-v3 strings are int16-length-prefixed, ``ConsumerProtocolSubscription.json``).

Commits are not the templates' (the simulation commits every few seconds for the minutes it runs): a real
group commits all the time, so ``steady_commits`` writes OffsetCommit records for every partition of a
group's topic in rounds spread over the week and densely in its last two hours, with offsets that follow
the topic's produce rate (and fall behind it, for the groups meant to lag). ``commit_value_v3`` packs the
value with ``struct`` (10M of them through the generic encoder would take minutes); its bytes are checked
against ``encode_record`` in ``tests/bench/test_scale_history.py``.

End offsets (``snapshot_partitions``) are derived from the same produce rates, so gold.consumer_lag sees
lag that is small for healthy groups and grows through the last hour for lagging ones.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from coordinator.consumer_group import topic_id_for
from coordinator.simulation import simulate
from decoders import decode_record, encode_record
from decoders.wire import Uuid

TEMPLATE_GROUP = "tmpl-group"
TEMPLATE_TOPIC = "tmpl-topic"
TEMPLATE_START_MS = 1_767_225_600_000  # the scenarios' default start, 2026-01-01T00:00:00Z
EPISODE_MS = 120_000
"""Template time between two episodes' first actions: every record of episode i is in [i, i+1) x EPISODE_MS."""
HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS

OffsetsRecord = tuple[bytes, bytes | None, int]
"""A record to produce: key, value (None: tombstone), timestamp (ms)."""


@dataclass(frozen=True)
class Archetype:
    """A kind of group. ``share`` is its fraction of all groups; ``per_topic`` groups read each topic."""

    name: str
    members: int
    partitions: int
    share: float
    protocol: str = "range"  # a classic assignor, or "consumer" for KIP-848 (the broker's range assignor)
    per_topic: int = 4
    storm: bool = False


ARCHETYPES: tuple[Archetype, ...] = (
    Archetype("range-small", members=3, partitions=12, share=0.40),
    Archetype("cooperative-small", members=5, partitions=16, share=0.30, protocol="cooperative-sticky"),
    Archetype("kip848-small", members=4, partitions=12, share=0.25, protocol="consumer"),
    Archetype("range-medium", members=20, partitions=60, share=0.0447, per_topic=2),
    Archetype("cooperative-big", members=200, partitions=1000, share=0.002, protocol="cooperative-sticky",
              per_topic=1),
    Archetype("range-big", members=100, partitions=500, share=0.002, per_topic=1),
    Archetype("storm", members=8, partitions=16, share=0.0013, storm=True, per_topic=1),
)
"""Most groups 1-10 members; a few hundred of 20; some of 100-500 on topics of up to 1,000 partitions; range,
cooperative-sticky and KIP-848; rebalance storms in a few: the mix of a large shared cluster."""


def scenario(kind: Archetype) -> dict[str, Any]:
    """The reference coordinator's scenario for one archetype: four episodes, EPISODE_MS apart.

    Episode 0: the members join one after another. 1: one member restarts (a deploy). 2: the last member
    leaves (scale-in). 3: it joins again. A storm kind instead crashes, restarts and re-joins members a
    second apart in every episode (``conf/scenarios/rebalance-storm.yaml`` in short)."""
    names = [f"c{i}" for i in range(kind.members)]
    consumers = []
    for name in names:
        consumer: dict[str, Any] = {"name": name, "group": TEMPLATE_GROUP, "topics": [TEMPLATE_TOPIC],
                                    "enable_auto_commit": False}
        if kind.protocol == "consumer":
            consumer.update(group_protocol="consumer", group_remote_assignor="range")
            del consumer["enable_auto_commit"]
        else:
            consumer["assignors"] = [kind.protocol]
        consumers.append(consumer)
    step_ms = max(20, min(200, 20_000 // kind.members))
    actions: list[dict[str, Any]] = [{"at": f"{i * step_ms}ms", "action": "join", "consumer": n}
                                     for i, n in enumerate(names)]
    if kind.storm:
        for episode in range(1, 4):
            at = episode * EPISODE_MS
            for i, name in enumerate(names[:6]):
                actions.append({"at": f"{at + i * 1500}ms", "action": "restart", "consumer": name,
                                "downtime": "1s"})
    else:
        actions += [
            {"at": f"{EPISODE_MS}ms", "action": "restart", "consumer": names[0], "downtime": "1s"},
            {"at": f"{2 * EPISODE_MS}ms", "action": "leave", "consumer": names[-1]},
            {"at": f"{3 * EPISODE_MS}ms", "action": "join", "consumer": names[-1]},
        ]
    return {"name": f"scale-{kind.name}", "duration": f"{4 * EPISODE_MS}ms", "seed": 17, "network_latency": "5ms",
            "broker": {"group.initial.rebalance.delay.ms": 1000},
            "topics": [{"name": TEMPLATE_TOPIC, "partitions": kind.partitions}],
            "consumers": consumers, "actions": actions}


@dataclass(frozen=True)
class Template:
    """One archetype's group records as the reference coordinator wrote them (commits left out)."""

    kind: Archetype
    records: tuple[tuple[Any, int], ...]  # (DecodedRecord, template timestamp ms)


def simulate_template(kind: Archetype) -> Template:
    result = simulate(scenario(kind))
    records = []
    for r in result.records:
        decoded = decode_record(r.key, r.value)
        if getattr(decoded, "type", None) in (None, "offset_commit"):
            continue
        records.append((decoded, r.timestamp))
    return Template(kind, tuple(records))


@dataclass(frozen=True)
class GroupPlan:
    """One group of the generated cluster: its archetype, topic, when its episodes happen, and its lag."""

    group: str
    kind: Archetype
    topic: str
    episodes: tuple[int, ...]  # epoch ms of each episode's start, increasing
    lagging: bool = False  # commits fall behind through the last hour


@dataclass(frozen=True)
class ClusterPlan:
    groups: tuple[GroupPlan, ...]
    topics: dict[str, int] = field(default_factory=dict)  # name -> partitions
    start_ms: int = 0
    end_ms: int = 0

    def rate(self, topic: str) -> int:
        """Records per second the topic receives on every partition (1-20: topics differ)."""
        return 1 + (sum(topic.encode()) % 20)


def plan_cluster(groups: int, end_ms: int, days: float = 7.0, seed: int = 17,
                 archetypes: tuple[Archetype, ...] = ARCHETYPES) -> ClusterPlan:
    """``groups`` groups split by the archetypes' shares (every archetype at least one group), each with
    four episodes at random moments of the ``days`` before ``end_ms`` — the last within the final 24 hours
    for one group in five, so "rebalances in the last 24 h" has answers — and one group in twenty lagging."""
    rng = random.Random(seed)
    start_ms = end_ms - int(days * DAY_MS)
    counts = [max(1, round(groups * k.share)) for k in archetypes]
    counts[0] += groups - sum(counts)
    plans: list[GroupPlan] = []
    topics: dict[str, int] = {}
    for kind, count in zip(archetypes, counts, strict=True):
        for i in range(count):
            topic = f"{kind.name}.events-{i // kind.per_topic:05d}"
            topics[topic] = kind.partitions
            last = end_ms - rng.randrange(HOUR_MS, DAY_MS) if rng.random() < 0.2 else \
                end_ms - rng.randrange(DAY_MS, int(days * DAY_MS) - HOUR_MS)
            first = start_ms + rng.randrange(0, max(1, (last - start_ms) // 4))
            middle = sorted(rng.randrange(first + EPISODE_MS * 2, last - EPISODE_MS * 2) for _ in range(2))
            episodes = (first, middle[0], max(middle[1], middle[0] + EPISODE_MS * 2), last)
            plans.append(GroupPlan(f"{kind.name}-{i:05d}", kind, topic, episodes, lagging=rng.random() < 0.05))
    return ClusterPlan(tuple(plans), topics, start_ms, end_ms)


def _moved(at: int, episodes: tuple[int, ...]) -> int:
    """Template time -> the group's time: an episode keeps its inner timing and starts at the group's moment."""
    offset = at - TEMPLATE_START_MS
    episode = min(len(episodes) - 1, max(0, offset // EPISODE_MS))
    return episodes[episode] + offset - episode * EPISODE_MS


def _protocol_string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def _renamed(value: Any, names: dict[str, str], raw: tuple[bytes, bytes], ids: dict[Uuid, Uuid],
             episodes: tuple[int, ...], key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _renamed(v, names, raw, ids, episodes, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, names, raw, ids, episodes, key) for v in value]
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, Uuid):
        return ids.get(value, value)
    if isinstance(value, bytes) and key.endswith("_raw"):
        return value.replace(*raw)
    if isinstance(value, int) and key.endswith("timestamp") and value >= TEMPLATE_START_MS:
        return _moved(value, episodes)
    return value


def group_records(template: Template, plan: GroupPlan) -> Iterator[OffsetsRecord]:
    """The template's records as the coordinator would have written them for ``plan``'s group."""
    names = {TEMPLATE_GROUP: plan.group, TEMPLATE_TOPIC: plan.topic}
    raw = (_protocol_string(TEMPLATE_TOPIC), _protocol_string(plan.topic))
    ids = {Uuid.from_string(topic_id_for(TEMPLATE_TOPIC)): Uuid.from_string(topic_id_for(plan.topic))}
    for record, at in template.records:
        key = _renamed(record.key, names, raw, ids, plan.episodes)
        value = None if record.value is None else _renamed(record.value, names, raw, ids, plan.episodes)
        key_bytes, value_bytes = encode_record(record.type, key, value, record.value_version)
        yield key_bytes, value_bytes, _moved(at, plan.episodes)


# --- commits ----------------------------------------------------------------------------------------

def commit_key(group: str, topic: str, partition: int) -> bytes:
    """OffsetCommitKey (type 1): int16 type, then group, topic (int16-length strings), int32 partition."""
    return struct.pack(">h", 1) + _protocol_string(group) + _protocol_string(topic) + struct.pack(">i", partition)


_VALUE_V3_HEAD = struct.Struct(">hqi")
_VALUE_V3_TAIL = struct.Struct(">q")


def commit_value_v3(offset: int, leader_epoch: int, commit_timestamp: int, metadata: str = "") -> bytes:
    """OffsetCommitValue v3 (what brokers before 4.0 write): offset, leader epoch, metadata, commit time."""
    return _VALUE_V3_HEAD.pack(3, offset, leader_epoch) + _protocol_string(metadata) + \
        _VALUE_V3_TAIL.pack(commit_timestamp)


def commit_rounds(plan: ClusterPlan, commits: int) -> tuple[int, ...]:
    """Times (ms) at which every group commits all its partitions: half spread evenly over the whole
    history, half every few minutes through its last two hours, so that ``commits`` are written in all."""
    partitions = sum(g.kind.partitions for g in plan.groups)
    rounds = max(4, -(-commits // max(1, partitions)))  # at least ``commits``
    recent = rounds // 2
    spread = rounds - recent
    old_end = plan.end_ms - 2 * HOUR_MS
    early = [plan.start_ms + (old_end - plan.start_ms) * i // spread for i in range(spread)]
    late = [old_end + 2 * HOUR_MS * (i + 1) // recent - 1000 for i in range(recent)]
    return tuple(early + late)


def committed_offset(plan: ClusterPlan, group: GroupPlan, at: int) -> int:
    """Where ``group`` has read its topic at ``at``: close behind the end, or (lagging) falling behind at
    half the produce rate through the last hour."""
    end = end_offset(plan, group.topic, at)
    if group.lagging and at > plan.end_ms - HOUR_MS:
        end -= (at - (plan.end_ms - HOUR_MS)) // 1000 * plan.rate(group.topic) // 2
    return max(0, end - plan.rate(group.topic) * 3)


def end_offset(plan: ClusterPlan, topic: str, at: int) -> int:
    return (at - plan.start_ms) // 1000 * plan.rate(topic)


def steady_commits(plan: ClusterPlan, group: GroupPlan, rounds: tuple[int, ...]) -> Iterator[OffsetsRecord]:
    """Every partition of the group's topic, committed at every round (1 ms apart within a round)."""
    keys = [commit_key(group.group, group.topic, p) for p in range(group.kind.partitions)]
    for at in rounds:
        offset = committed_offset(plan, group, at)
        for p, key in enumerate(keys):
            yield key, commit_value_v3(offset + p, 0, at + p % 1000), at + p % 1000


def merged(*streams: Iterator[OffsetsRecord]) -> Iterator[OffsetsRecord]:
    """The records of one group from several generators, in time order (as its coordinator appends them)."""
    import heapq

    return heapq.merge(*streams, key=lambda r: r[2])


# --- end offsets ---------------------------------------------------------------------------------------

def snapshot_times(plan: ClusterPlan) -> tuple[int, ...]:
    """Every 5 minutes through the last hour, and hourly through the five before it."""
    hourly = [plan.end_ms - HOUR_MS * h for h in range(6, 1, -1)]
    recent = [plan.end_ms - HOUR_MS + 5 * 60_000 * i for i in range(13)]
    return tuple(hourly + recent)


def snapshot_partitions(plan: ClusterPlan, at: int) -> Iterator[tuple[str, int, int, int, str]]:
    """(topic, partition, earliest, latest, topic id) of every partition at ``at``."""
    for topic, partitions in plan.topics.items():
        latest = end_offset(plan, topic, at)
        topic_id = topic_id_for(topic)
        for p in range(partitions):
            yield topic, p, 0, latest + p, topic_id
