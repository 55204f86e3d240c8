"""Fixtures for the reference coordinator's tests.

* ``assignor_oracle``, ``hash_order_oracle``, ``protocol_oracle``, ``record_oracle``: Kafka's Java
  code, compiled at test time (session scope; see ``oracle.py`` and ``java/``). Without the
  kafka-clients jar they skip with the reason, except under ``CI=true``, where a missing jar is a
  failure: CI must run the differential tests.
* ``broker``: a :class:`Broker` harness that drives :class:`GroupCoordinator` directly with
  requests, capturing responses, on a simulated clock.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from coordinator.clock import SimulatedClock
from coordinator.consumer_protocol import PROTOCOL_TYPE, Assignment, subscription
from coordinator.errors import Errors
from coordinator.group_coordinator import CoordinatorConfig, GroupCoordinator
from coordinator.member import Protocol
from coordinator.requests import (
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    SyncGroupRequest,
    SyncGroupResponse,
)
from coordinator.topic_partition import TopicPartition
from tests.coordinator import oracle

T0 = 1_000_000


def _oracle(tmp_path_factory: pytest.TempPathFactory, main_class: str) -> list[str]:
    reason = oracle.missing_reason(main_class)
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but the Java oracle cannot run: {reason}")
        pytest.skip(reason)
    return oracle.compile_oracle(tmp_path_factory.mktemp(f"oracle-{main_class}"), main_class)


@pytest.fixture(scope="session")
def assignor_oracle(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return _oracle(tmp_path_factory, "AssignorOracle")


@pytest.fixture(scope="session")
def hash_order_oracle(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return _oracle(tmp_path_factory, "HashOrderOracle")


@pytest.fixture(scope="session")
def protocol_oracle(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return _oracle(tmp_path_factory, "ProtocolOracle")


@pytest.fixture(scope="session")
def record_oracle(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return _oracle(tmp_path_factory, "RecordOracle")


@dataclass
class Pending:
    """A parked request's response slot."""

    response: Any = None

    def __call__(self, response: Any) -> None:
        self.response = response


@dataclass
class Broker:
    """A GroupCoordinator on a simulated clock, driven one request at a time."""

    config: CoordinatorConfig = field(default_factory=CoordinatorConfig)
    kafka_version: str = "4.2"
    topics: dict[str, int] = field(default_factory=lambda: {"t": 4, "u": 2})

    def __post_init__(self) -> None:
        self.clock = SimulatedClock(T0)
        self.coordinator = GroupCoordinator(
            self.clock, self.config, self.kafka_version, seed=1, known_topics=lambda: dict(self.topics)
        )

    # -- time -------------------------------------------------------------------------------------
    def advance(self, ms: int) -> None:
        self.clock.run_until(self.clock.now + ms)

    @property
    def elapsed(self) -> int:
        return self.clock.now - T0

    # -- requests ---------------------------------------------------------------------------------
    @staticmethod
    def protocols(*names: str, topics: tuple[str, ...] = ("t",), generation: int = -1) -> tuple[Protocol, ...]:
        return tuple(Protocol(n, subscription(topics, None, (), generation)) for n in (names or ("range",)))

    def join(
        self,
        group: str = "g",
        member_id: str = "",
        client_id: str = "client",
        instance_id: str | None = None,
        protocols: tuple[Protocol, ...] | None = None,
        session_timeout_ms: int = 10_000,
        rebalance_timeout_ms: int = 60_000,
        protocol_type: str = PROTOCOL_TYPE,
    ) -> Pending:
        pending = Pending()
        request = JoinGroupRequest(
            group_id=group,
            session_timeout_ms=session_timeout_ms,
            rebalance_timeout_ms=rebalance_timeout_ms,
            member_id=member_id,
            group_instance_id=instance_id,
            protocol_type=protocol_type,
            protocols=protocols if protocols is not None else self.protocols(),
            client_id=client_id,
            client_host="/10.0.0.1",
        )
        self.coordinator.join_group(request, pending)
        return pending

    def join_as_new_member(self, group: str = "g", client_id: str = "client", **kwargs: Any) -> tuple[str, Pending]:
        """MEMBER_ID_REQUIRED, then the second JoinGroup (parked until the join phase ends)."""
        first = self.join(group, client_id=client_id, **kwargs)
        assert first.response.error is Errors.MEMBER_ID_REQUIRED
        member_id = first.response.member_id
        return member_id, self.join(group, member_id=member_id, client_id=client_id, **kwargs)

    def sync(
        self,
        member_id: str,
        generation: int,
        group: str = "g",
        assignments: dict[str, list[TopicPartition]] | None = None,
        instance_id: str | None = None,
        protocol_name: str | None = None,
    ) -> Pending:
        pending = Pending()
        request = SyncGroupRequest(
            group_id=group,
            member_id=member_id,
            generation_id=generation,
            group_instance_id=instance_id,
            protocol_type=PROTOCOL_TYPE,
            protocol_name=protocol_name,
            assignments={m: Assignment(tuple(tps)) for m, tps in (assignments or {}).items()},
        )
        self.coordinator.sync_group(request, pending)
        return pending

    def heartbeat(self, member_id: str, generation: int, group: str = "g", instance_id: str | None = None) -> Errors:
        return self.coordinator.heartbeat(HeartbeatRequest(group, member_id, generation, instance_id))

    def leave(self, member_id: str, group: str = "g", instance_id: str | None = None) -> Errors:
        response = self.coordinator.leave_group(LeaveGroupRequest(group, (MemberIdentity(member_id, instance_id),)))
        return response.member_errors[0][1] if response.member_errors else response.error

    def commit(
        self, member_id: str, generation: int, offsets: dict[tuple[str, int], int], group: str = "g", metadata: str = ""
    ) -> Any:
        parts = tuple(OffsetCommitPartition(t, p, o, 0, metadata) for (t, p), o in offsets.items())
        return self.coordinator.commit_offsets(OffsetCommitRequest(group, member_id, generation, None, parts))

    # -- inspection -------------------------------------------------------------------------------
    def group(self, group: str = "g"):  # noqa: ANN201
        return self.coordinator.group(group)

    def records(self, record_type: str | None = None) -> list:
        return [r for r in self.coordinator.log if record_type is None or r.record_type == record_type]

    def stable_group(self, *clients: str, group: str = "g", **kwargs: Any) -> dict[str, str]:
        """Members joined and synced (the first is the leader); returns client -> member id."""
        ids: dict[str, str] = {}
        joins: dict[str, Pending] = {}
        for client in clients:
            ids[client], joins[client] = self.join_as_new_member(group, client_id=client, **kwargs)
        while joins[clients[0]].response is None:  # the initial delay, extended per new member
            self.advance(100)
        generation = joins[clients[0]].response.generation_id
        leader = joins[clients[0]].response.leader
        assignment = {m: [TopicPartition("t", i)] for i, m in enumerate(ids.values())}
        for client in clients:
            member_id = ids[client]
            self.sync(member_id, generation, group, assignment if member_id == leader else None)
        return ids


@pytest.fixture
def broker() -> Broker:
    return Broker()


@pytest.fixture
def make_broker() -> Callable[..., Broker]:
    return Broker


__all__ = ["Broker", "Pending", "T0", "JoinGroupResponse", "SyncGroupResponse"]
