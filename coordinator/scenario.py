"""Scenario files: the cluster, the consumers and the timed actions of one simulated run.

A scenario is YAML (see ``conf/scenarios/*.yaml``)::

    name: rolling-restart
    description: what the run shows
    start: 2026-01-01T00:00:00Z      # or epoch ms; default 1767225600000 (that instant)
    duration: 10m                     # "250ms", "30s", "10m", "2h", "8d" or integer ms
    seed: 7                           # member-id UUIDs
    network_latency: 0ms              # one-way client <-> broker delay
    broker: {group.initial.rebalance.delay.ms: 3000}   # broker properties (see CoordinatorConfig)
    topics:
      - {name: orders, partitions: 6, produce_rate: 20}   # records/s per partition (+ initial_records)
    consumers:                        # declared once, started by a `join` action
      - {name: c1, group: g1, topics: [orders], group_instance_id: i1, ...}
    actions:
      - {at: 0s, action: join, consumer: c1}

Actions: ``join`` (start polling), ``leave`` (close: commit, LeaveGroup if dynamic), ``crash``
(stop silently), ``stall`` (no poll for ``duration``), ``commit`` (commitSync by a consumer, or by a
simple consumer/admin with ``group`` + ``offsets``, optionally with an old client's
``retention``), ``restart`` (close or crash, back after
``downtime``), ``subscribe`` (change topics), ``add_partitions``, ``delete_group`` and
``delete_offsets`` (admin requests).

A consumer with ``group_protocol: consumer`` (and ``group_remote_assignor: range``) joins a KIP-848
group (``coordinator/consumer_group.py``); it can ``join``, ``leave``, ``crash``, ``restart`` and
``subscribe``. A group's consumers all use one protocol.

Validation reports the first problem in one line: ``file: actions[3] (leave): consumer 'c9'
is not declared; expected one of c1, c2``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from coordinator.assignors import ASSIGNORS
from coordinator.client import ConsumerConfig
from coordinator.cluster import Topic
from coordinator.group_coordinator import CoordinatorConfig

DEFAULT_START_MS = 1767225600000  # 2026-01-01T00:00:00Z

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, None: 1}


class ScenarioError(ValueError):
    """A scenario that cannot run; the message is one line naming file, place, field and expectation."""


@dataclass(frozen=True)
class Action:
    at_ms: int
    action: str
    index: int
    consumer: str | None = None
    duration_ms: int | None = None
    group: str | None = None
    topic: str | None = None
    topics: tuple[str, ...] | None = None
    partitions: Any = None
    offsets: tuple[dict, ...] | None = None
    metadata: str = ""
    mode: str | None = None
    retention_ms: int | None = None


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    start_ms: int
    duration_ms: int
    seed: int
    network_latency_ms: int
    broker: CoordinatorConfig
    topics: tuple[Topic, ...]
    consumers: tuple[ConsumerConfig, ...]
    actions: tuple[Action, ...]
    source: str = "<scenario>"


# action name -> (required fields, optional fields)
ACTIONS: dict[str, tuple[set[str], set[str]]] = {
    "join": ({"consumer"}, set()),
    "leave": ({"consumer"}, set()),
    "crash": ({"consumer"}, set()),
    "stall": ({"consumer", "duration"}, set()),
    "commit": (set(), {"consumer", "group", "offsets", "metadata", "retention"}),
    "restart": ({"consumer"}, {"downtime", "mode"}),
    "subscribe": ({"consumer", "topics"}, set()),
    "add_partitions": ({"topic", "partitions"}, set()),
    "delete_group": ({"group"}, set()),
    "delete_offsets": ({"group", "topic", "partitions"}, set()),
}

# What a KIP-848 consumer (group_protocol: consumer) can do in a scenario (coordinator/consumer_group_client.py).
KIP848_ACTIONS = ("join", "leave", "crash", "restart", "subscribe")

_CONSUMER_FIELDS = {f.name for f in fields(ConsumerConfig)} - {"name", "group_id", "topics"}
_TOPIC_FIELDS = {"name", "partitions", "produce_rate", "initial_records", "leader_epoch", "topic_id"}
_TOP_FIELDS = {
    "name",
    "description",
    "start",
    "duration",
    "seed",
    "network_latency",
    "broker",
    "topics",
    "consumers",
    "actions",
}


class _Reader:
    """Field access with errors that say where they happened."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, where: str, message: str) -> ScenarioError:
        return ScenarioError(f"{self.source}: {where}: {message}")

    def mapping(self, value: Any, where: str) -> dict:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected a mapping, got {type(value).__name__}")
        return value

    def unknown(self, data: dict, allowed: set[str], where: str) -> None:
        extra = sorted(set(data) - allowed)
        if extra:
            raise self.fail(where, f"unknown field {extra[0]!r}; expected one of {', '.join(sorted(allowed))}")

    def string(self, data: dict, key: str, where: str, default: Any = ...) -> Any:
        if key not in data:
            if default is ...:
                raise self.fail(where, f"field {key!r} is missing; expected a string")
            return default
        value = data[key]
        if not isinstance(value, str) or not value:
            raise self.fail(where, f"field {key!r} = {value!r}; expected a non-empty string")
        return value

    def integer(self, data: dict, key: str, where: str, default: Any = ..., minimum: int | None = None) -> Any:
        if key not in data:
            if default is ...:
                raise self.fail(where, f"field {key!r} is missing; expected an integer")
            return default
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum):
            bound = f" >= {minimum}" if minimum is not None else ""
            raise self.fail(where, f"field {key!r} = {value!r}; expected an integer{bound}")
        return value

    def duration(self, data: dict, key: str, where: str, default: Any = ...) -> Any:
        if key not in data:
            if default is ...:
                raise self.fail(where, f"field {key!r} is missing; expected a duration like 30s, 5m or 1500 (ms)")
            return default
        return self.to_ms(data[key], f"field {key!r}", where)

    def to_ms(self, value: Any, what: str, where: str) -> int:
        if isinstance(value, bool):
            raise self.fail(where, f"{what} = {value!r}; expected a duration like 30s, 5m or 1500 (ms)")
        if isinstance(value, int) and value >= 0:
            return value
        if isinstance(value, str):
            match = _DURATION.match(value)
            if match:
                return int(round(float(match.group(1)) * _UNIT_MS[match.group(2)]))
        raise self.fail(where, f"{what} = {value!r}; expected a duration like 30s, 5m or 1500 (ms)")

    def string_list(self, data: dict, key: str, where: str) -> tuple[str, ...]:
        value = data.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            raise self.fail(where, f"field {key!r} = {value!r}; expected a non-empty list of names")
        return tuple(value)


def _start_ms(reader: _Reader, data: dict) -> int:
    value = data.get("start", DEFAULT_START_MS)
    if isinstance(value, bool):
        raise reader.fail("start", f"{value!r}; expected epoch milliseconds or an ISO-8601 time with a zone")
    if isinstance(value, int):
        return value
    if isinstance(value, datetime) and value.tzinfo is not None:
        return int(value.timestamp() * 1000)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            if parsed.tzinfo is not None:
                return int(parsed.timestamp() * 1000)
        except ValueError:
            pass
    raise reader.fail("start", f"{value!r}; expected epoch milliseconds or an ISO-8601 time with a zone")


def _broker(reader: _Reader, data: Any) -> CoordinatorConfig:
    data = reader.mapping(data or {}, "broker")
    reader.unknown(data, set(CoordinatorConfig.PROPERTY_NAMES), "broker")
    values = {}
    for prop, value in data.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise reader.fail("broker", f"{prop} = {value!r}; expected a non-negative integer")
        values[CoordinatorConfig.PROPERTY_NAMES[prop]] = value
    config = CoordinatorConfig(**values)
    if config.offsets_topic_num_partitions < 1 or config.group_max_size < 1:
        raise reader.fail("broker", "offsets.topic.num.partitions and group.max.size must be >= 1")
    return config


def _topics(reader: _Reader, data: Any) -> tuple[Topic, ...]:
    if not isinstance(data, list) or not data:
        raise reader.fail("topics", "expected a non-empty list of topics")
    topics = []
    for i, raw in enumerate(data):
        where = f"topics[{i}]"
        item = reader.mapping(raw, where)
        reader.unknown(item, _TOPIC_FIELDS, where)
        rate = item.get("produce_rate", 0)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate < 0:
            raise reader.fail(where, f"field 'produce_rate' = {rate!r}; expected records per second >= 0")
        topics.append(
            Topic(
                name=reader.string(item, "name", where),
                partitions=reader.integer(item, "partitions", where, minimum=1),
                produce_rate=float(rate),
                leader_epoch=reader.integer(item, "leader_epoch", where, default=0, minimum=0),
                initial_records=reader.integer(item, "initial_records", where, default=0, minimum=0),
                topic_id=reader.string(item, "topic_id", where, default=None),
            )
        )
    names = [t.name for t in topics]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise reader.fail("topics", f"topic {duplicate!r} is declared twice")
    return tuple(topics)


def _consumers(reader: _Reader, data: Any, topic_names: set[str]) -> tuple[ConsumerConfig, ...]:
    if not isinstance(data, list) or not data:
        raise reader.fail("consumers", "expected a non-empty list of consumers")
    consumers = []
    for i, raw in enumerate(data):
        where = f"consumers[{i}]"
        item = reader.mapping(raw, where)
        reader.unknown(item, _CONSUMER_FIELDS | {"name", "group", "topics"}, where)
        name = reader.string(item, "name", where)
        where = f"consumers[{i}] ({name})"
        topics = reader.string_list(item, "topics", where)
        for t in topics:
            if t not in topic_names:
                raise reader.fail(
                    where, f"topic {t!r} is not declared; expected one of {', '.join(sorted(topic_names))}"
                )
        options: dict[str, Any] = {}
        for key in sorted(set(item) & _CONSUMER_FIELDS):
            value = item[key]
            if key.endswith("_ms"):
                options[key] = reader.to_ms(value, f"field {key!r}", where)
            elif key == "enable_auto_commit" or key == "commit_topic_ids":
                if not isinstance(value, bool):
                    raise reader.fail(where, f"field {key!r} = {value!r}; expected true or false")
                options[key] = value
            elif key == "assignors":
                if not isinstance(value, list) or not value or any(v not in ASSIGNORS for v in value):
                    raise reader.fail(
                        where, f"field 'assignors' = {value!r}; expected a list from {', '.join(ASSIGNORS)}"
                    )
                options[key] = tuple(value)
            elif key == "group_protocol":
                if value not in ("classic", "consumer"):
                    raise reader.fail(where, f"field 'group_protocol' = {value!r}; expected classic or consumer")
                options[key] = value
            elif key == "group_remote_assignor":
                if value != "range":
                    raise reader.fail(where, f"field 'group_remote_assignor' = {value!r}; expected range (the only "
                                             "server assignor modelled, coordinator/consumer_group.py)")
                options[key] = value
            elif key == "auto_offset_reset":
                if value not in ("latest", "earliest"):
                    raise reader.fail(where, f"field 'auto_offset_reset' = {value!r}; expected latest or earliest")
                options[key] = value
            else:
                options[key] = reader.string(item, key, where)
        config = ConsumerConfig(name=name, group_id=reader.string(item, "group", where), topics=topics, **options)
        if config.group_protocol == "consumer" and config.group_remote_assignor is None:
            raise reader.fail(where, "a consumer with group_protocol consumer needs group_remote_assignor: range "
                                     "(the broker's default, uniform, is not modelled)")
        if config.group_protocol == "classic" and config.group_remote_assignor is not None:
            raise reader.fail(where, "group_remote_assignor is for group_protocol consumer (KIP-848) only")
        if config.heartbeat_interval_ms >= config.session_timeout_ms:
            raise reader.fail(where, "heartbeat_interval_ms must be lower than session_timeout_ms (Heartbeat.java)")
        consumers.append(config)
    names = [c.name for c in consumers]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise reader.fail("consumers", f"consumer {duplicate!r} is declared twice")
    protocols: dict[str, set[str]] = {}
    for c in consumers:
        protocols.setdefault(c.group_id, set()).add(c.group_protocol)
    mixed = next((g for g, p in protocols.items() if len(p) > 1), None)
    if mixed:  # a classic member in a consumer group (online upgrade/downgrade) is not modelled
        raise reader.fail("consumers", f"group {mixed!r} has classic and consumer (KIP-848) members; "
                                       "expected one group_protocol per group")
    return tuple(consumers)


def _offsets(reader: _Reader, value: Any, where: str, topics: dict[str, Topic]) -> tuple[dict, ...]:
    if not isinstance(value, list) or not value:
        raise reader.fail(where, f"field 'offsets' = {value!r}; expected a list of {{topic, partition, offset}}")
    result = []
    for j, raw in enumerate(value):
        at = f"{where} offsets[{j}]"
        item = reader.mapping(raw, at)
        reader.unknown(item, {"topic", "partition", "offset", "metadata", "leader_epoch"}, at)
        topic = reader.string(item, "topic", at)
        if topic not in topics:
            raise reader.fail(at, f"topic {topic!r} is not declared; expected one of {', '.join(sorted(topics))}")
        result.append(
            {
                "topic": topic,
                "partition": reader.integer(item, "partition", at, minimum=0),
                "offset": reader.integer(item, "offset", at, minimum=0),
                "metadata": item.get("metadata", ""),
                "leader_epoch": reader.integer(item, "leader_epoch", at, default=-1, minimum=-1),
            }
        )
    return tuple(result)


def _actions(
    reader: _Reader, data: Any, consumers: dict[str, ConsumerConfig], topics: dict[str, Topic]
) -> tuple[Action, ...]:
    if not isinstance(data, list) or not data:
        raise reader.fail("actions", "expected a non-empty list of actions")
    actions = []
    groups = {c.group_id for c in consumers.values()}
    kip848_groups = {c.group_id for c in consumers.values() if c.group_protocol == "consumer"}
    for i, raw in enumerate(data):
        item = reader.mapping(raw, f"actions[{i}]")
        kind = item.get("action")
        if kind not in ACTIONS:
            raise reader.fail(f"actions[{i}]", f"field 'action' = {kind!r}; expected one of {', '.join(ACTIONS)}")
        where = f"actions[{i}] ({kind})"
        required, optional = ACTIONS[kind]
        reader.unknown(item, required | optional | {"at", "action"}, where)
        for key in sorted(required):
            if key not in item:
                raise reader.fail(where, f"field {key!r} is missing")
        at_ms = reader.duration(item, "at", where)
        consumer = item.get("consumer")
        if consumer is not None and consumer not in consumers:
            raise reader.fail(where, f"consumer {consumer!r} is not declared; expected one of {', '.join(consumers)}")
        group = item.get("group")
        if group is not None and not isinstance(group, str):
            raise reader.fail(where, f"field 'group' = {group!r}; expected a group id")
        topic = item.get("topic")
        if topic is not None and topic not in topics:
            raise reader.fail(where, f"topic {topic!r} is not declared; expected one of {', '.join(sorted(topics))}")
        if consumer is not None and consumers[consumer].group_protocol == "consumer" and kind not in KIP848_ACTIONS:
            raise reader.fail(where, f"consumer {consumer!r} uses group_protocol consumer (KIP-848); expected one of "
                                     f"{', '.join(KIP848_ACTIONS)}")
        if group is not None and group in kip848_groups:
            raise reader.fail(where, f"group {group!r} is a KIP-848 group; {kind} is modelled for classic groups only")
        action = Action(at_ms=at_ms, action=kind, index=i, consumer=consumer, group=group, topic=topic)
        if kind == "stall":
            action = replace(action, duration_ms=reader.duration(item, "duration", where))
        elif kind == "restart":
            mode = item.get("mode", "close")
            if mode not in ("close", "crash"):
                raise reader.fail(where, f"field 'mode' = {mode!r}; expected close or crash")
            action = replace(action, duration_ms=reader.duration(item, "downtime", where, default=0), mode=mode)
        elif kind == "subscribe":
            chosen = reader.string_list(item, "topics", where)
            missing = [t for t in chosen if t not in topics]
            if missing:
                raise reader.fail(
                    where, f"topic {missing[0]!r} is not declared; expected one of {', '.join(sorted(topics))}"
                )
            action = replace(action, topics=chosen)
        elif kind == "commit":
            if consumer is None and (group is None or "offsets" not in item):
                raise reader.fail(
                    where, "give 'consumer' (commitSync) or 'group' and 'offsets' (simple consumer commit)"
                )
            if "offsets" in item:
                action = replace(action, offsets=_offsets(reader, item["offsets"], where, topics))
            metadata = item.get("metadata", "")
            if not isinstance(metadata, str):
                raise reader.fail(where, f"field 'metadata' = {metadata!r}; expected a string")
            action = replace(action, metadata=metadata)
            if "retention" in item:
                if consumer is not None:
                    raise reader.fail(
                        where, "'retention' (OffsetCommit v2-v4 RetentionTimeMs) is for simple commits only"
                    )
                action = replace(action, retention_ms=reader.duration(item, "retention", where))
        elif kind == "add_partitions":
            action = replace(action, partitions=reader.integer(item, "partitions", where, minimum=1))
        elif kind == "delete_offsets":
            parts = item["partitions"]
            if not isinstance(parts, list) or not parts or not all(isinstance(p, int) and p >= 0 for p in parts):
                raise reader.fail(where, f"field 'partitions' = {parts!r}; expected a list of partition numbers")
            action = replace(action, partitions=tuple(parts))
        if kind in ("delete_group", "delete_offsets") and group not in groups:
            # Allowed (the request simply fails), but almost always a typo: say so.
            raise reader.fail(
                where, f"group {group!r} has no declared consumer; expected one of {', '.join(sorted(groups))}"
            )
        actions.append(action)
    return tuple(sorted(actions, key=lambda a: (a.at_ms, a.index)))


def parse_scenario(data: Any, source: str = "<scenario>") -> Scenario:
    """Validate a scenario given as a mapping (e.g. loaded YAML)."""
    reader = _Reader(source)
    data = reader.mapping(data, "scenario")
    reader.unknown(data, _TOP_FIELDS, "scenario")
    topics = _topics(reader, data.get("topics"))
    topic_map = {t.name: t for t in topics}
    consumers = _consumers(reader, data.get("consumers"), set(topic_map))
    consumer_map = {c.name: c for c in consumers}
    actions = _actions(reader, data.get("actions"), consumer_map, topic_map)
    duration_ms = reader.duration(data, "duration", "scenario")
    late = next((a for a in actions if a.at_ms > duration_ms), None)
    if late is not None:
        raise reader.fail(
            f"actions[{late.index}] ({late.action})",
            f"at {late.at_ms} ms is after the scenario's duration {duration_ms} ms",
        )
    grown = next((a for a in actions if a.action == "add_partitions"), None)
    if grown is not None and any(c.group_protocol == "consumer" for c in consumers):
        raise reader.fail(f"actions[{grown.index}] (add_partitions)",
                          "topic metadata changes are not modelled for KIP-848 groups; keep them to classic scenarios")
    seed = reader.integer(data, "seed", "scenario", default=0)
    return Scenario(
        name=reader.string(data, "name", "scenario"),
        description=str(data.get("description", "")).strip(),
        start_ms=_start_ms(reader, data),
        duration_ms=duration_ms,
        seed=seed,
        network_latency_ms=reader.duration(data, "network_latency", "scenario", default=0),
        broker=_broker(reader, data.get("broker")),
        topics=topics,
        consumers=consumers,
        actions=actions,
        source=source,
    )


def load_scenario(source: str | Path | dict | Scenario) -> Scenario:
    """A :class:`Scenario` from a YAML path, an already-loaded mapping, or a Scenario."""
    if isinstance(source, Scenario):
        return source
    if isinstance(source, dict):
        return parse_scenario(source)
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read scenario: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "YAML"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ScenarioError(f"{path}: {where}: invalid YAML: {problem}") from None
    return parse_scenario(data, str(path))


__all__ = ["ACTIONS", "Action", "Scenario", "ScenarioError", "load_scenario", "parse_scenario"]
