"""Run a scenario: build the cluster, the broker's coordinator and the consumers, play the actions.

:func:`simulate` is the library entry point (the CLI's ``offsetlake simulate`` calls it). The run
is deterministic: the same scenario, seed and Kafka version give the same bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from coordinator.client import Consumer, Network
from coordinator.clock import SimulatedClock
from coordinator.cluster import Cluster
from coordinator.consumer_group import ConsumerGroupConfig, ConsumerGroupCoordinator, topic_id_for
from coordinator.consumer_group_client import ConsumerGroupConsumer
from coordinator.group_coordinator import GroupCoordinator
from coordinator.records import CoordinatorRecord, KafkaVersion, encode
from coordinator.requests import OffsetCommitPartition, OffsetCommitRequest
from coordinator.scenario import Action, Scenario, load_scenario
from coordinator.timeline import TABLES, TimelineRecorder
from coordinator.topic_partition import TopicPartition


@dataclass(frozen=True)
class OffsetsTopicRecord:
    """One record as the broker appends it to ``__consumer_offsets`` (value None = tombstone)."""

    key: bytes
    value: bytes | None
    partition: int
    timestamp: int

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key.hex(),
            "value": None if self.value is None else self.value.hex(),
            "partition": self.partition,
            "timestamp": self.timestamp,
        }


@dataclass(frozen=True)
class SimulationResult:
    records: list[OffsetsTopicRecord]
    timeline: dict[str, Any]
    tables: dict[str, list[dict[str, Any]]]

    def write(self, out_dir: str | Path) -> Path:
        """Write ``records.jsonl`` (hex key/value), ``timeline.json`` and one ``<table>.jsonl`` per table."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with (out / "records.jsonl").open("w", encoding="utf-8") as fh:
            for record in self.records:
                fh.write(json.dumps(record.as_json(), sort_keys=True) + "\n")
        (out / "timeline.json").write_text(json.dumps(self.timeline, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        for name in TABLES:
            with (out / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
                for row in self.tables[name]:
                    fh.write(json.dumps(row, sort_keys=True) + "\n")
        return out


class Simulation:
    """One run of a scenario; kept as an object so tests can inspect the live engine."""

    def __init__(self, scenario: Scenario, kafka_version: str = "4.2"):
        self.scenario = scenario
        self.kafka_version = KafkaVersion.parse(kafka_version)
        self.clock = SimulatedClock(scenario.start_ms)
        self.cluster = Cluster(
            [replace(t, created_at=[]) for t in scenario.topics],
            scenario.start_ms,
        )
        self.recorder = TimelineRecorder(
            self._partition_for, {topic_id: name for name, (topic_id, _) in self._topic_ids().items()}
        )
        self.coordinator = GroupCoordinator(
            self.clock,
            scenario.broker,
            self.kafka_version,
            events=self.recorder,
            offset_events=self.recorder,
            seed=scenario.seed,
            known_topics=self.cluster.partition_counts,
        )
        self.network = Network(self.clock, scenario.network_latency_ms)
        self.consumers: dict[str, Consumer | ConsumerGroupConsumer] = {
            c.name: Consumer(c, self.clock, self.network, self.coordinator, self.cluster, self.recorder)
            for c in scenario.consumers
            if c.group_protocol == "classic"
        }
        kip848 = [c for c in scenario.consumers if c.group_protocol == "consumer"]
        self.consumer_groups: ConsumerGroupCoordinator | None = None
        if kip848:
            self.consumer_groups = ConsumerGroupCoordinator(
                self.clock,
                self.kafka_version,
                self._topic_ids,
                self._append,
                ConsumerGroupConfig(
                    scenario.broker.group_consumer_session_timeout_ms,
                    scenario.broker.group_consumer_heartbeat_interval_ms,
                ),
                events=self.recorder,
            )
            names = {topic_id: name for name, (topic_id, _) in self._topic_ids().items()}
            for c in kip848:
                self.consumers[c.name] = ConsumerGroupConsumer(
                    c, self.clock, self.network, self.consumer_groups, names, scenario.seed, self.recorder
                )
        for action in scenario.actions:
            self.clock.at(scenario.start_ms + action.at_ms, lambda a=action: self._perform(a))

    def _partition_for(self, group_id: str) -> int:
        return self.coordinator.partition_for(group_id)

    def _topic_ids(self) -> dict[str, tuple[str, int]]:
        """The cluster's topics as KIP-848 groups see them: name -> (topic id, partition count)."""
        return {name: (topic_id_for(name, t.topic_id), t.partitions) for name, t in self.cluster.topics.items()}

    def _append(self, group_id: str, records: list[CoordinatorRecord]) -> None:
        """A KIP-848 group's write: appended to its ``__consumer_offsets`` partition now."""
        partition = self.coordinator.partition_for(group_id)
        for r in records:
            self.coordinator.log.append(replace(r, partition=partition, timestamp=self.clock.now))

    def run(self) -> SimulationResult:
        self.clock.run_until(self.scenario.start_ms + self.scenario.duration_ms)
        return self.result()

    def result(self) -> SimulationResult:
        records = [OffsetsTopicRecord(*encode(r), r.partition, r.timestamp) for r in self.coordinator.log]
        timeline = {
            "scenario": self.scenario.name,
            "description": self.scenario.description,
            "kafka_version": str(self.kafka_version),
            "start_ms": self.scenario.start_ms,
            "end_ms": self.scenario.start_ms + self.scenario.duration_ms,
            "seed": self.scenario.seed,
            "offsets_topic_partitions": self.scenario.broker.offsets_topic_num_partitions,
            "network_latency_ms": self.scenario.network_latency_ms,
            "record_count": len(records),
            **self.recorder.timeline(),
        }
        return SimulationResult(records, timeline, self.recorder.tables())

    # -- actions -----------------------------------------------------------------------------------
    def _perform(self, action: Action) -> None:
        now = self.clock.now
        consumer = self.consumers.get(action.consumer) if action.consumer else None
        self.recorder.scenario_event(
            now, action.action, index=action.index, consumer=action.consumer, group=action.group
        )
        if action.action == "join":
            if not consumer.running:
                consumer.start()
        elif action.action == "leave":
            consumer.close()
        elif action.action == "crash":
            if consumer.running:
                consumer.crash()
        elif action.action == "stall":
            consumer.stall(action.duration_ms)
        elif action.action == "restart":
            if action.mode == "crash":
                consumer.crash()
            else:
                consumer.close()
            self.clock.after(action.duration_ms or 0, consumer.start)
        elif action.action == "subscribe":
            consumer.subscribe(list(action.topics))
        elif action.action == "commit":
            self._commit(action, consumer)
        elif action.action == "add_partitions":
            self.cluster.add_partitions(action.topic, action.partitions, now)
        elif action.action == "delete_group":
            result = self.coordinator.delete_groups([action.group])
            self.recorder.scenario_event(
                now, "delete_group_result", group=action.group, error=result[action.group].name
            )
        elif action.action == "delete_offsets":
            result = self.coordinator.delete_offsets(action.group, [(action.topic, p) for p in action.partitions])
            summary = (
                result.name if not isinstance(result, dict) else {f"{t}-{p}": e.name for (t, p), e in result.items()}
            )
            self.recorder.scenario_event(now, "delete_offsets_result", group=action.group, result=summary)

    def _commit(self, action: Action, consumer: Consumer | None) -> None:
        if consumer is not None:
            offsets = None
            if action.offsets:
                offsets = {TopicPartition(o["topic"], o["partition"]): o["offset"] for o in action.offsets}
            consumer.commit_sync(offsets, metadata=action.metadata)
            return
        # A consumer without group management (or the admin client): generation -1, no member id.
        request = OffsetCommitRequest(
            group_id=action.group,
            member_id="",
            generation_id=-1,
            group_instance_id=None,
            partitions=tuple(
                OffsetCommitPartition(
                    o["topic"], o["partition"], o["offset"], o["leader_epoch"], o["metadata"] or action.metadata
                )
                for o in action.offsets
            ),
            retention_time_ms=action.retention_ms if action.retention_ms is not None else -1,
        )
        response = self.coordinator.commit_offsets(request)
        self.recorder.scenario_event(
            self.clock.now,
            "simple_commit_result",
            group=action.group,
            error=response.error.name,
            partitions={f"{t}-{p}": e.name for t, p, e in response.partition_errors},
        )


def simulate(scenario: str | Path | dict | Scenario, kafka_version: str = "4.2") -> SimulationResult:
    """Run a scenario (a YAML path, a loaded mapping or a :class:`~coordinator.scenario.Scenario`)
    and return the records the broker would write, the timeline and the gold-shaped tables."""
    return Simulation(load_scenario(scenario), kafka_version).run()
