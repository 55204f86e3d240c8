"""The client side of KIP-848: a consumer with ``group.protocol=consumer`` heartbeating to the broker.

A reduction of the Java ``AsyncKafkaConsumer``'s group membership (``consumer/internals/
ConsumerMembershipManager.java``, ``AbstractMembershipManager.java``, ``ConsumerHeartbeatRequestManager.java``,
Kafka 4.2) to what decides the records the broker writes:

* **join**: the consumer generates its member id (``Uuid.randomUuid``, KIP-1082) and sends a full
  ConsumerGroupHeartbeat with member epoch 0, its subscribed topic names, its rebalance timeout
  (``max.poll.interval.ms``), its server assignor (``group.remote.assignor``) and no owned partitions;
* **heartbeats** every interval the broker returned (``group.consumer.heartbeat.interval.ms``), carrying
  the member epoch and the partitions it owns;
* **reconciliation**: a response with an assignment different from what it owns makes it revoke what is
  gone and take what is new at once (no commit or callback time: the simplification the coordinator's
  module docstring states) and acknowledge with an immediate heartbeat (``ACKNOWLEDGING``);
* **subscribe** to other topics: the next heartbeat goes at once with the new topic names;
* **close**: revoke everything, then a heartbeat with member epoch -1 (``LEAVE_GROUP_MEMBER_EPOCH``);
* **crash**: heartbeats stop; the broker fences the member when its session expires;
* an UNKNOWN_MEMBER_ID or FENCED_MEMBER_EPOCH answer: the partitions are lost and the member rejoins with
  epoch 0 under the same member id (``transitionToFenced``).
"""

from __future__ import annotations

import random
from typing import Any

from coordinator.client import ClientEvents, ConsumerConfig, Network
from coordinator.clock import SimulatedClock
from coordinator.consumer_group import (
    LEAVE_GROUP_MEMBER_EPOCH,
    NO_PARTITIONS,
    ConsumerGroupCoordinator,
    HeartbeatRequest,
    HeartbeatResponse,
    Partitions,
    new_member_id,
)
from coordinator.errors import Errors


class ConsumerGroupConsumer:
    """One KIP-848 consumer of a scenario."""

    def __init__(self, config: ConsumerConfig, clock: SimulatedClock, network: Network,
                 coordinator: ConsumerGroupCoordinator, topic_names: dict[str, str], seed: int,
                 events: ClientEvents | None = None):
        self.config = config
        self.clock = clock
        self.network = network
        self.coordinator = coordinator
        self.topic_names = topic_names  # topic id -> name, for the event log
        self.events = events or ClientEvents()
        self._rng = random.Random(f"{seed}:{config.name}")
        self.running = False
        self._incarnation = 0
        self.member_id = ""
        self.member_epoch = 0
        self.owned: Partitions = NO_PARTITIONS
        self.subscription: tuple[str, ...] = tuple(sorted(config.topics))
        self._in_flight = False
        self._again = False

    # -- scenario actions -------------------------------------------------------------------
    def start(self) -> None:
        self._incarnation += 1
        self.running = True
        self.member_id = new_member_id(self._rng)  # a new process: a new member id
        self.member_epoch, self.owned, self._in_flight, self._again = 0, NO_PARTITIONS, False, False
        self._event("start", client_id=self.config.effective_client_id, member_id=self.member_id)
        self._heartbeat()

    def subscribe(self, topics: list[str]) -> None:
        self.subscription = tuple(sorted(topics))
        self._event("subscribe", topics=list(self.subscription))
        if self.running:
            self._heartbeat()

    def close(self) -> None:
        if not self.running:
            return
        self._event("close", partitions=self._names(self.owned))
        self.owned = NO_PARTITIONS
        request = self._request(LEAVE_GROUP_MEMBER_EPOCH)
        self._stop("closed")
        self.network.send(lambda respond: respond(self.coordinator.heartbeat(request)), lambda _response: None)

    def crash(self) -> None:
        if self.running:
            self._stop("crash")

    # -- heartbeats -------------------------------------------------------------------------
    def _event(self, kind: str, **detail: Any) -> None:
        self.events.client_event(self.config.name, self.clock.now, kind, **detail)

    def _names(self, partitions: Partitions) -> list[str]:
        return sorted(f"{self.topic_names.get(t, t)}-{p}" for t, p in partitions)

    def _stop(self, kind: str) -> None:
        self.running = False
        self._incarnation += 1
        self.clock.cancel(self._timer_key)
        self._event(kind)

    @property
    def _timer_key(self) -> str:
        return f"kip848-heartbeat:{self.config.name}"

    def _request(self, member_epoch: int) -> HeartbeatRequest:
        joining = member_epoch == 0
        return HeartbeatRequest(
            group_id=self.config.group_id, member_id=self.member_id, member_epoch=member_epoch,
            client_id=self.config.effective_client_id, client_host=self.config.client_host,
            rebalance_timeout_ms=self.config.max_poll_interval_ms, subscribed_topic_names=self.subscription,
            server_assignor=self.config.group_remote_assignor, owned=NO_PARTITIONS if joining else self.owned)

    def _heartbeat(self) -> None:
        if not self.running:
            return
        if self._in_flight:
            self._again = True  # one request at a time; send again when the answer is in
            return
        self._in_flight = True
        self.clock.cancel(self._timer_key)
        request, incarnation = self._request(self.member_epoch), self._incarnation
        self.network.send(lambda respond: respond(self.coordinator.heartbeat(request)),
                          lambda response: self._on_response(response) if incarnation == self._incarnation else None)

    def _on_response(self, response: HeartbeatResponse) -> None:
        self._in_flight = False
        if response.error in (Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_MEMBER_EPOCH):
            self._event("fenced", error=response.error.name, partitions=self._names(self.owned))
            self.member_epoch, self.owned = 0, NO_PARTITIONS
            self._heartbeat()
            return
        self.member_epoch = response.member_epoch
        acknowledge = self._again
        self._again = False
        if response.assignment is not None and response.assignment != self.owned:
            revoked, added = self.owned - response.assignment, response.assignment - self.owned
            if revoked:
                self._event("partitions_revoked", partitions=self._names(revoked), member_id=self.member_id)
            self.owned = response.assignment
            self._event("partitions_assigned", partitions=self._names(added), member_epoch=self.member_epoch,
                        member_id=self.member_id)
            acknowledge = True
        if acknowledge:
            self._heartbeat()
        else:
            self.clock.after(response.heartbeat_interval_ms, self._heartbeat, key=self._timer_key)
