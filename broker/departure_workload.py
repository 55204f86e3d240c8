"""Three ways a member leaves a classic group, with real consumers under steady traffic.

Each scenario has its own group on one topic that a background producer keeps feeding, so every
member reads and commits all the time, as a busy consumer does: the commits are the evidence gold
bounds the rebalances with (``pipelines/gold/rebalance_events.py``). The clients record what they
lived through, on the wall clock the broker also stamps its records with (same machine): when a
member stopped (its revocation callback; the SIGKILL; the ``close()``) and when it resumed (its
assignment callback). The groups (names from ``DepartureGroups``), all range (eager), every member
with ``session.timeout.ms`` at the broker's minimum (6 s) so that expiries are quick:

* ``leave``: two members; after more than a session timeout together, one calls ``close()``:
  a LeaveGroup, at once (and a commit shortly before it);
* ``kill``: two members, one in a child process killed with SIGKILL: nothing is sent, the coordinator
  removes it when its session expires (``GroupMetadataManager`` heartbeat expiration);
* ``static_return``: two static members (``group.instance.id``, KIP-345); one is closed (a static
  member sends no LeaveGroup), is removed when its session expires, and then comes back under the
  same instance id: to the coordinator a new join, to gold a static member that returned.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from broker.demo_workload import CRASH_SESSION_TIMEOUT_MS, CrashableMember, Member, poll_until, split_between

SESSION_TIMEOUT_MS = CRASH_SESSION_TIMEOUT_MS  # group.min.session.timeout.ms: the quickest expiry
MESSAGES_PER_SECOND = 40  # enough that each member reads, and commits, several times a second


@dataclass(frozen=True)
class DepartureGroups:
    """``<prefix>-leave``, ``<prefix>-kill``, ``<prefix>-static-return``."""

    prefix: str

    @property
    def leave(self) -> str:
        return f"{self.prefix}-leave"

    @property
    def kill(self) -> str:
        return f"{self.prefix}-kill"

    @property
    def static_return(self) -> str:
        return f"{self.prefix}-static-return"

    def all(self) -> list[str]:
        return [self.leave, self.kill, self.static_return]


@dataclass(frozen=True)
class Departure:
    """What the clients of one scenario lived through (wall-clock seconds, ``time.time()``).

    ``gone_at``: when the departing member stopped (``close()`` called, or SIGKILL sent);
    ``gone_member``: its member id, as the records name it (for the killed child, its prefix);
    ``stayer_stopped_at``/``stayer_resumed_at``:
    the remaining member's first revocation after that moment and its next assignment;
    ``returned_at``/``return_stopped_at``/``return_resumed_at`` (static_return only): when the static
    member was started again, and the remaining member's revocation and assignment for that rebalance.
    """

    group: str
    gone_at: float
    gone_member: str
    stayer_stopped_at: float
    stayer_resumed_at: float
    returned_at: float | None = None
    return_stopped_at: float | None = None
    return_resumed_at: float | None = None


def _after(moments: list[float], t: float) -> float:
    return next(m for m in moments if m >= t)


@dataclass
class DepartureWorkload:
    """The three scenarios on ``topic`` (``partitions`` partitions); members stay up until ``close``."""

    client_config: dict[str, Any]
    topic: str
    partitions: int
    groups: DepartureGroups
    timeout: float = 60.0
    members: list[Member] = field(default_factory=list)
    children: list[CrashableMember] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def _member(self, group: str, name: str, instance_id: str | None = None) -> Member:
        member = Member(self.client_config, self.topic, group, name, session_timeout_ms=SESSION_TIMEOUT_MS,
                        instance_id=instance_id)
        self.members.append(member)
        return member

    def _produce(self) -> None:
        """Keep the topic fed until the scenarios are done, round-robin over its partitions."""
        from confluent_kafka import Producer

        producer = Producer({**self.client_config, "linger.ms": 5})
        n = 0
        while not self._stop.is_set():
            producer.produce(self.topic, value=f"m{n}".encode(), partition=n % self.partitions)
            producer.poll(0)
            n += 1
            time.sleep(1 / MESSAGES_PER_SECOND)
        producer.flush(10)

    def _steady(self, members: list[Member], seconds: float) -> None:
        """Poll (read and commit) for ``seconds``."""
        until = time.monotonic() + seconds
        poll_until(members, lambda: time.monotonic() >= until, "steady consumption", seconds + self.timeout)

    def leave(self) -> Departure:
        group = self.groups.leave
        stays, leaves = self._member(group, f"{group}-stays"), self._member(group, f"{group}-leaves")
        poll_until([stays, leaves], split_between([stays, leaves], self.partitions), f"{group}: two members",
                   self.timeout)
        # Longer together than the session timeout: the join alone no longer rules out an expiry.
        self._steady([stays, leaves], SESSION_TIMEOUT_MS / 1000 + 1)
        gone_member = leaves.consumer.memberid()
        gone_at = time.time()
        leaves.close()
        poll_until([stays], lambda: len(stays.owned()) == self.partitions, f"{group}: stays takes over",
                   self.timeout)
        return Departure(group, gone_at, gone_member, _after(stays.revoked_at, gone_at),
                         _after(stays.assigned_at, gone_at))

    def kill(self) -> Departure:
        group = self.groups.kill
        child = CrashableMember(self.client_config, self.topic, group, f"{group}-doomed",
                                session_timeout_ms=SESSION_TIMEOUT_MS)
        self.children.append(child)
        survivor = self._member(group, f"{group}-survivor")
        poll_until([survivor], split_between([child, survivor], self.partitions), f"{group}: two members",
                   self.timeout)
        self._steady([survivor], 2)
        child.kill()
        assert child.killed_at is not None
        poll_until([survivor], lambda: len(survivor.owned()) == self.partitions,
                   f"{group}: survivor takes over after the session timeout",
                   self.timeout + SESSION_TIMEOUT_MS / 1000)
        # The child reports partitions, not its member id: it is named by its client id, which a
        # classic member id begins with (client.id + "-" + UUID).
        return Departure(group, child.killed_at, f"{group}-doomed-", _after(survivor.revoked_at, child.killed_at),
                         _after(survivor.assigned_at, child.killed_at))

    def static_return(self) -> Departure:
        group = self.groups.static_return
        stays = self._member(group, f"{group}-a", instance_id=f"{group}-a")
        goes = self._member(group, f"{group}-b", instance_id=f"{group}-b")
        poll_until([stays, goes], split_between([stays, goes], self.partitions), f"{group}: two static members",
                   self.timeout)
        self._steady([stays, goes], 2)
        gone_member = goes.consumer.memberid()
        gone_at = time.time()
        goes.close()  # static: no LeaveGroup; removed when its session expires
        self.members.remove(goes)
        poll_until([stays], lambda: len(stays.owned()) == self.partitions,
                   f"{group}: a takes over once b's session expired", self.timeout + SESSION_TIMEOUT_MS / 1000)
        stopped, resumed = _after(stays.revoked_at, gone_at), _after(stays.assigned_at, gone_at)
        self._steady([stays], 2)
        returned_at = time.time()
        back = self._member(group, f"{group}-b", instance_id=f"{group}-b")
        poll_until([stays, back], split_between([stays, back], self.partitions), f"{group}: b back", self.timeout)
        return Departure(group, gone_at, gone_member, stopped, resumed, returned_at,
                         _after(stays.revoked_at, returned_at), _after(stays.assigned_at, returned_at))

    def run(self) -> dict[str, Departure]:
        """The three scenarios side by side (their groups differ) while the producer runs."""
        producer = threading.Thread(target=self._produce, daemon=True, name="departures-producer")
        producer.start()
        try:
            with ThreadPoolExecutor(max_workers=3, thread_name_prefix="departures") as pool:
                futures = [pool.submit(s) for s in (self.leave, self.kill, self.static_return)]
                return {d.group: d for d in (f.result() for f in futures)}
        finally:
            self._stop.set()
            producer.join(timeout=30)

    def close(self) -> None:
        for child in self.children:
            child.kill()
        for member in self.members:
            member.close()
        self.members.clear()

    def __enter__(self) -> DepartureWorkload:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
