"""The demo's scripted workload: real consumer groups, each living through one kind of rebalance.

Every scenario is a small named function that drives real confluent-kafka consumers against the
broker and returns what it did (``ScenarioOutcome``), so that the demo can print the script next
to what gold later reconstructs from ``__consumer_offsets``. The groups (names from ``DemoGroups``):

* ``scale_out``: range, members join one at a time, 1 -> 2 -> 3 (two ``member_joined`` rebalances);
* ``crash``: two members, one in a child process killed with SIGKILL: no LeaveGroup, so the
  coordinator only notices when its session expires (``session.timeout.ms``, the classic minimum
  ``group.min.session.timeout.ms`` is 6 s) and the survivor takes over its partitions;
* ``graceful_leave``: two members, one calls ``close()``: LeaveGroup, an immediate rebalance;
* ``static_restart``: two static members (``group.instance.id``, KIP-345); one is closed (a static
  member sends no LeaveGroup) and restarted within its session timeout: the coordinator swaps in
  its new member id and keeps generation and assignment -- no rebalance;
* ``cooperative``: cooperative-sticky, a second member joins: KIP-429's two rebalances (revoke,
  then assign the revoked partitions);
* ``kip848``: ``group.protocol=consumer`` (KIP-848): the broker assigns, no client-side rebalance;
* ``lagging``: one member reads what was produced, commits, then stops polling (still a member)
  while production goes on.

Groups stay alive after their scenario (their members keep their sessions through librdkafka's
background heartbeats) so that the warehouse shows current members and assignments; ``catch_up``
lets every group but the lagging one read what was produced since, and ``close`` ends them all.
Scenarios touch different groups only, so they run side by side in threads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from broker.workload import coordinator_not_ready

# max.poll.interval.ms for every member: they are not polled while Spark ingests and builds gold,
# and a member that exceeds it leaves its group (and, classic, it is the rebalance timeout too).
MAX_POLL_INTERVAL_MS = 600_000
CRASH_SESSION_TIMEOUT_MS = 6_000  # the broker's default group.min.session.timeout.ms: the fastest expiry
LEAVE_SESSION_TIMEOUT_MS = 30_000  # far above the rebalance time, so gold can tell a LeaveGroup from an expiry
STATIC_SESSION_TIMEOUT_MS = 20_000  # the static member must be back before this, or it is expired


def _retriable_commit_errors() -> frozenset[int]:
    from confluent_kafka import KafkaError

    return frozenset({KafkaError.ILLEGAL_GENERATION, KafkaError.REBALANCE_IN_PROGRESS, KafkaError.UNKNOWN_MEMBER_ID,
                      KafkaError.STALE_MEMBER_EPOCH, KafkaError.FENCED_MEMBER_EPOCH, KafkaError._ASSIGNMENT_LOST,
                      KafkaError._STATE})


@dataclass(frozen=True)
class DemoGroups:
    """The demo's group names: ``<prefix>-<scenario>``; a per-run prefix keeps test runs apart."""

    prefix: str = "demo"

    @property
    def scale_out(self) -> str:
        return f"{self.prefix}-scale-out"

    @property
    def crash(self) -> str:
        return f"{self.prefix}-crash"

    @property
    def graceful_leave(self) -> str:
        return f"{self.prefix}-graceful-leave"

    @property
    def static_restart(self) -> str:
        return f"{self.prefix}-static-restart"

    @property
    def cooperative(self) -> str:
        return f"{self.prefix}-cooperative"

    @property
    def kip848(self) -> str:
        return f"{self.prefix}-kip848"

    @property
    def lagging(self) -> str:
        return f"{self.prefix}-lagging"

    @property
    def steady(self) -> str:
        """Not a scenario: the group that commits throughout the demo (``SteadyCommitter``)."""
        return f"{self.prefix}-steady"

    @property
    def warm(self) -> str:
        """Not a scenario: the group one member joins before the scenarios (``DemoWorkload.warm_up``)."""
        return f"{self.prefix}-warm"

    def all(self) -> list[str]:
        return [self.scale_out, self.crash, self.graceful_leave, self.static_restart, self.cooperative,
                self.kip848, self.lagging]


@dataclass(frozen=True)
class ScenarioOutcome:
    """What one scenario did to its group, in order, as the demo prints it."""

    scenario: str
    group: str
    steps: list[str]
    seconds: float
    # Partitions whose owner changed, counted from the members' own assignment callbacks (a
    # partition handed to a member other than its last owner); None where the scenario does not count.
    partitions_moved: int | None = None
    # Member ids that had partitions revoked by a rebalance (revocation callbacks), where counted.
    revoked_members: list[str] | None = None


class Member:
    """One real consumer of a group, polled by the workload, committing what it reads (asynchronously)."""

    def __init__(self, client_config: dict[str, Any], topic: str, group: str, name: str, *,
                 protocol: str = "classic", assignor: str = "range",
                 session_timeout_ms: int = CRASH_SESSION_TIMEOUT_MS, instance_id: str | None = None) -> None:
        from confluent_kafka import Consumer

        conf: dict[str, Any] = {
            **client_config,
            "group.id": group,
            "client.id": name,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "group.protocol": protocol,
            "max.poll.interval.ms": MAX_POLL_INTERVAL_MS,
            "on_commit": self._on_commit,
        }
        if protocol == "classic":  # KIP-848 consumers reject these: the broker owns them
            conf.update({"partition.assignment.strategy": assignor, "session.timeout.ms": session_timeout_ms,
                         "heartbeat.interval.ms": min(500, session_timeout_ms // 3)})
        if instance_id:
            conf["group.instance.id"] = instance_id
        self.name, self.topic, self.group = name, topic, group
        self.consumer = Consumer(conf)
        # (monotonic time, partitions) of every assignment callback: incremental under cooperative-sticky
        # (KIP-429), the whole new assignment under the eager assignors.
        self.assigned: list[tuple[float, list[int]]] = []
        # member id at each revocation callback that took partitions away (the id the records show)
        self.revoked_as: list[str] = []
        # Wall-clock moments (time.time(), the broker's clock on this machine) of the callbacks, to set
        # beside the broker's record timestamps: when the member stopped (a revocation that took
        # partitions) and resumed (an assignment that gave some).
        self.revoked_at: list[float] = []
        self.assigned_at: list[float] = []
        self.consumer.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke)
        self.consumed = 0
        self.pending: dict[int, int] = {}  # partition -> offset read but not yet committed
        self.commit_error: Any = None  # a KafkaError no rebalance explains, raised by the next poll()
        self.closed = False

    def poll(self, timeout: float = 0.2) -> int:
        """Read one batch and commit it (one OffsetCommit per batch); also serves rebalance and commit callbacks.

        The commit is asynchronous. The workload polls a group's members from one thread in turn, and a
        synchronous commit waits behind the member's own blocking JoinGroup (librdkafka sends group
        requests to the coordinator one at a time) while the other members, not polled meanwhile,
        cannot rejoin: the rebalance would end only at the rebalance timeout (seen in the decoder
        oracle's workload, broker/workload.py). A commit that races a rebalance fails
        (ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS, ...); ``_on_commit`` puts its offsets back, and
        they are committed at a later poll for the partitions the member still owns, as a careful
        at-least-once consumer does.
        """
        from confluent_kafka import KafkaException, TopicPartition

        read = 0
        for message in self.consumer.consume(num_messages=200, timeout=timeout):
            if message.error():
                raise KafkaException(message.error())
            self.pending[message.partition()] = message.offset() + 1
            read += 1
        if self.commit_error is not None:
            error, self.commit_error = self.commit_error, None
            raise KafkaException(error)
        self.consumed += read
        owned = self.owned()
        self.pending = {p: o for p, o in self.pending.items() if p in owned}
        if self.pending:
            offsets = [TopicPartition(self.topic, p, o) for p, o in sorted(self.pending.items())]
            self.consumer.commit(offsets=offsets, asynchronous=True)
            self.pending = {}
        return read

    def _on_commit(self, error: Any, partitions: list[Any]) -> None:
        """A commit's outcome (served by ``consume``/``close``): failed offsets go back to ``pending``."""
        failed = [tp for tp in partitions if error is not None or tp.error is not None]
        for tp in failed:
            code = (tp.error or error).code()
            if code not in _retriable_commit_errors():
                self.commit_error = tp.error or error
            elif tp.offset > self.pending.get(tp.partition, -1):  # unless a later read is pending already
                self.pending[tp.partition] = tp.offset

    def _on_assign(self, consumer: Any, partitions: list[Any]) -> None:
        # Returning without assign() lets confluent-kafka apply the assignment itself (incrementally
        # for a cooperative protocol).
        self.assigned.append((time.monotonic(), [tp.partition for tp in partitions]))
        if partitions:
            self.assigned_at.append(time.time())

    def _on_revoke(self, consumer: Any, partitions: list[Any]) -> None:
        if partitions:
            self.revoked_at.append(time.time())
            self.revoked_as.append(consumer.memberid())

    def owned(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def close(self) -> None:
        """``close()``: a dynamic member sends LeaveGroup; a static one does not (KIP-345)."""
        if not self.closed:
            self.closed = True
            self.consumer.close()


class SteadyCommitter:
    """A group that commits its offsets on ``topic`` every ``every`` seconds, in a thread, until ``stop``.

    What a production cluster always has: commits arriving while ``offsetlake run`` is up. The demo starts
    it beside the main job so that the job is warm (its first batches and gold refresh done) before the
    scripted groups start, and so that freshness can be measured in steady state rather than from the
    job's start. No subscription: the offsets are committed with explicit positions (a "simple" group,
    generation -1, as kafka-consumer-groups --reset-offsets does), so the group never rebalances; each
    commit request writes one OffsetCommit record per partition, whether or not the offset moved
    (the coordinator appends every commit it accepts).
    """

    def __init__(self, client_config: dict[str, Any], topic: str, partitions: int, group: str,
                 every: float = 1.0) -> None:
        from confluent_kafka import Consumer

        self.topic, self.partitions, self.group, self.every = topic, partitions, group, every
        self.consumer = Consumer({**client_config, "group.id": group, "enable.auto.commit": False})
        self.commits = 0
        self.error: BaseException | None = None
        self._closed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="demo-steady-committer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from confluent_kafka import TopicPartition

        try:
            while not self._stop.is_set():
                ends = [self.consumer.get_watermark_offsets(TopicPartition(self.topic, p), timeout=10)[1]
                        for p in range(self.partitions)]
                self.consumer.commit(offsets=[TopicPartition(self.topic, p, end) for p, end in enumerate(ends)],
                                     asynchronous=False)
                self.commits += 1
                self._stop.wait(self.every)
        except BaseException as exc:  # noqa: BLE001 - reported by stop()
            self.error = exc

    def stop(self) -> int:
        """Stop committing and close the consumer (idempotent); the number of commit requests made.
        Raises what made the thread stop early, if anything did."""
        self._close()
        if self.error is not None:
            error, self.error = self.error, None
            raise RuntimeError(f"the steady group {self.group} stopped committing: {error}") from error
        return self.commits

    def __enter__(self) -> SteadyCommitter:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    def _close(self) -> None:
        self._stop.set()
        self._thread.join()
        if not self._closed:
            self._closed = True
            self.consumer.close()


def moved_partitions(members: list[Member]) -> int:
    """How many times a partition was handed to a member other than its last owner, from the
    members' assignment callbacks in time order: what the clients lived through, to compare with
    gold.rebalance_events.partitions_moved."""
    owner: dict[int, str] = {}
    moved = 0
    for _, name, partitions in sorted((at, m.name, parts) for m in members for at, parts in m.assigned):
        for partition in partitions:
            if partition in owner and owner[partition] != name:
                moved += 1
            owner[partition] = name
    return moved


class CrashableMember:
    """A member in a child process (``python -m broker.demo_workload``) that can be killed with SIGKILL.

    A killed process sends nothing more; the coordinator keeps the member until its session expires.
    The child prints the partitions it owns whenever they change; a thread here keeps the latest.
    """

    def __init__(self, client_config: dict[str, Any], topic: str, group: str, name: str, *,
                 session_timeout_ms: int = CRASH_SESSION_TIMEOUT_MS) -> None:
        self.name = name
        self.killed_at: float | None = None  # time.time() of the SIGKILL
        self._owned: set[int] = set()
        self._lock = threading.Lock()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "broker.demo_workload"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True,
        )
        assert self.process.stdin is not None
        # The client config may hold credentials: stdin, not argv.
        self.process.stdin.write(json.dumps({"client_config": client_config, "topic": topic, "group": group,
                                             "name": name, "session_timeout_ms": session_timeout_ms}) + "\n")
        self.process.stdin.flush()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("owned"):
                parts = line.split()[1:]
                with self._lock:
                    self._owned = {int(p) for p in parts[0].split(",") if p} if parts else set()

    def owned(self) -> set[int]:
        if self.process.poll() is not None:
            raise RuntimeError(f"member {self.name} (child process) exited with status {self.process.returncode}")
        with self._lock:
            return set(self._owned)

    def kill(self) -> None:
        """SIGKILL: no LeaveGroup, no more heartbeats."""
        if self.process.poll() is None:
            self.killed_at = time.time()
            self.process.kill()
        self.process.wait(timeout=10)


def _child_member() -> int:
    """Entry point of a ``CrashableMember``'s child: poll and commit until killed (or orphaned)."""
    spec = json.loads(sys.stdin.readline())
    parent = os.getppid()
    member = Member(spec["client_config"], spec["topic"], spec["group"], spec["name"],
                    session_timeout_ms=spec["session_timeout_ms"])
    last: list[int] | None = None
    try:
        while os.getppid() == parent:  # orphaned: the parent died without killing us
            member.poll()
            owned = sorted(member.owned())
            if owned != last:
                print("owned " + ",".join(str(p) for p in owned), flush=True)
                last = owned
    finally:
        member.close()
    return 0


def poll_until(members: Sequence[Member], done: Callable[[], bool], what: str, timeout: float) -> float:
    """Poll ``members`` (they must, to rejoin and take their assignments) until ``done()``; the time taken."""
    started = time.monotonic()
    while not done():
        if time.monotonic() - started > timeout:
            raise TimeoutError(f"{what}: not reached within {timeout:.0f}s")
        if members:
            for member in members:
                member.poll(timeout=0.1)
        else:
            time.sleep(0.1)
    return time.monotonic() - started


def split_between(owners: Iterable[Any], partitions: int) -> Callable[[], bool]:
    """True when every owner holds at least one partition and together they hold each exactly once.

    After a rebalance this is the new generation's assignment taken by everyone (an eager member
    holds nothing between revoking and its new assignment; a member that has not joined holds nothing).
    """
    owners = list(owners)

    def done() -> bool:
        held = [o.owned() for o in owners]
        return all(held) and sum(len(h) for h in held) == partitions and len(set().union(*held)) == partitions

    return done


def reached(committed: dict[int, int], ends: dict[int, int]) -> bool:
    """Every partition committed up to its end offset (an empty partition needs no commit)."""
    return all(end == 0 or committed.get(p, -1) >= end for p, end in ends.items())


def _show(partitions: Iterable[int]) -> str:
    return "[" + ",".join(str(p) for p in sorted(partitions)) + "]"


@dataclass
class DemoWorkload:
    """The scripted groups on one topic; keeps the members alive until ``close``."""

    client_config: dict[str, Any]
    topic: str
    partitions: int
    groups: DemoGroups = field(default_factory=DemoGroups)
    timeout: float = 90.0
    live: dict[str, list[Member]] = field(default_factory=dict)
    children: list[CrashableMember] = field(default_factory=list)
    idle: set[str] = field(default_factory=set)  # groups that stopped consuming on purpose

    # ------------------------------------------------------------------ scenarios

    def _member(self, group: str, name: str, **options: Any) -> Member:
        member = Member(self.client_config, self.topic, group, name, **options)
        self.live.setdefault(group, []).append(member)
        return member

    def warm_up(self) -> float:
        """One member of the ``warm`` group joins and takes every partition: GroupMetadata records for the main
        job to take through gold's incremental group path before the scenarios, as a running job has done
        long before (the demo's warm-up). The member stays, as the scenarios' do. The time it took."""
        member = self._member(self.groups.warm, f"{self.groups.warm}-1")
        return poll_until([member], split_between([member], self.partitions), f"{self.groups.warm}: one member",
                          self.timeout)

    def scale_out(self) -> ScenarioOutcome:
        group, started, steps = self.groups.scale_out, time.monotonic(), []
        members: list[Member] = []
        for n in (1, 2, 3):
            members.append(self._member(group, f"{group}-{n}"))
            took = poll_until(members, split_between(members, self.partitions),
                              f"{group}: {n} member(s) sharing the partitions", self.timeout)
            steps.append(f"{members[-1].name} joined -> {n} member(s) "
                         f"{' '.join(_show(m.owned()) for m in members)} after {took:.1f}s")
        return ScenarioOutcome("scale-out 1->2->3 (range)", group, steps, time.monotonic() - started)

    def crash(self) -> ScenarioOutcome:
        group, started, steps = self.groups.crash, time.monotonic(), []
        child = CrashableMember(self.client_config, self.topic, group, f"{group}-doomed")
        self.children.append(child)
        poll_until([], lambda: len(child.owned()) == self.partitions, f"{group}: child member assigned",
                   self.timeout)
        survivor = self._member(group, f"{group}-survivor", session_timeout_ms=CRASH_SESSION_TIMEOUT_MS)
        poll_until([survivor], split_between([child, survivor], self.partitions),
                   f"{group}: two members sharing the partitions", self.timeout)
        steps.append(f"{child.name} (child process) owns {_show(child.owned())}, "
                     f"{survivor.name} owns {_show(survivor.owned())}")
        child.kill()
        took = poll_until([survivor], lambda: len(survivor.owned()) == self.partitions,
                          f"{group}: survivor takes over after the session timeout",
                          self.timeout + CRASH_SESSION_TIMEOUT_MS / 1000)
        steps.append(f"{child.name} killed with SIGKILL (session.timeout.ms={CRASH_SESSION_TIMEOUT_MS}); "
                     f"{took:.1f}s later {survivor.name} owns {_show(survivor.owned())}")
        return ScenarioOutcome("crash (SIGKILL, session timeout)", group, steps, time.monotonic() - started)

    def graceful_leave(self) -> ScenarioOutcome:
        group, started, steps = self.groups.graceful_leave, time.monotonic(), []
        stays = self._member(group, f"{group}-stays", session_timeout_ms=LEAVE_SESSION_TIMEOUT_MS)
        poll_until([stays], lambda: len(stays.owned()) == self.partitions, f"{group}: first member", self.timeout)
        leaves = self._member(group, f"{group}-leaves", session_timeout_ms=LEAVE_SESSION_TIMEOUT_MS)
        poll_until([stays, leaves], split_between([stays, leaves], self.partitions),
                   f"{group}: two members sharing the partitions", self.timeout)
        steps.append(f"{stays.name} {_show(stays.owned())}, {leaves.name} {_show(leaves.owned())}")
        leaves.close()
        self.live[group].remove(leaves)
        took = poll_until([stays], lambda: len(stays.owned()) == self.partitions,
                          f"{group}: the remaining member takes over", self.timeout)
        steps.append(f"{leaves.name} close() (LeaveGroup); {took:.1f}s later {stays.name} owns "
                     f"{_show(stays.owned())}")
        return ScenarioOutcome("graceful leave (LeaveGroup)", group, steps, time.monotonic() - started)

    def static_restart(self) -> ScenarioOutcome:
        group, started, steps = self.groups.static_restart, time.monotonic(), []
        options = {"session_timeout_ms": STATIC_SESSION_TIMEOUT_MS}
        first = self._member(group, f"{group}-a", instance_id=f"{group}-a", **options)
        poll_until([first], lambda: len(first.owned()) == self.partitions, f"{group}: first member", self.timeout)
        second = self._member(group, f"{group}-b", instance_id=f"{group}-b", **options)
        poll_until([first, second], split_between([first, second], self.partitions),
                   f"{group}: two static members sharing the partitions", self.timeout)
        before_first, before_second = first.owned(), second.owned()
        steps.append(f"static members a {_show(before_first)}, b {_show(before_second)}")
        second.close()  # static: no LeaveGroup
        self.live[group].remove(second)
        again = self._member(group, f"{group}-b", instance_id=f"{group}-b", **options)
        took = poll_until([first, again], lambda: again.owned() == before_second,
                          f"{group}: static member b back with its partitions", self.timeout)
        if first.owned() != before_first:
            raise RuntimeError(f"{group}: member a's partitions changed on b's restart: a rebalance happened")
        steps.append(f"b closed and restarted (group.instance.id={group}-b, session.timeout.ms="
                     f"{STATIC_SESSION_TIMEOUT_MS}); back with {_show(again.owned())} after {took:.1f}s, "
                     "a kept its partitions (no rebalance)")
        return ScenarioOutcome("static member restart (KIP-345)", group, steps, time.monotonic() - started)

    def cooperative(self) -> ScenarioOutcome:
        group, started, steps = self.groups.cooperative, time.monotonic(), []
        first = self._member(group, f"{group}-1", assignor="cooperative-sticky")
        poll_until([first], lambda: len(first.owned()) == self.partitions, f"{group}: first member", self.timeout)
        second = self._member(group, f"{group}-2", assignor="cooperative-sticky")
        took = poll_until([first, second], split_between([first, second], self.partitions),
                          f"{group}: two members sharing the partitions", self.timeout)
        steps.append(f"{first.name} owned all; {second.name} joined: {first.name} revoked only what moves; "
                     f"after {took:.1f}s {_show(first.owned())} / {_show(second.owned())}")
        return ScenarioOutcome("cooperative-sticky scale-out (KIP-429)", group, steps, time.monotonic() - started,
                               partitions_moved=moved_partitions([first, second]),
                               revoked_members=sorted({m for member in (first, second) for m in member.revoked_as}))

    def kip848(self) -> ScenarioOutcome:
        group, started, steps = self.groups.kip848, time.monotonic(), []
        first = self._member(group, f"{group}-1", protocol="consumer")
        poll_until([first], lambda: len(first.owned()) == self.partitions, f"{group}: first member", self.timeout)
        second = self._member(group, f"{group}-2", protocol="consumer")
        took = poll_until([first, second], split_between([first, second], self.partitions),
                          f"{group}: two members sharing the partitions", self.timeout)
        steps.append(f"group.protocol=consumer: the broker assigned {_show(first.owned())} / "
                     f"{_show(second.owned())} after {took:.1f}s")
        return ScenarioOutcome("KIP-848 consumer group", group, steps, time.monotonic() - started)

    def lagging(self) -> ScenarioOutcome:
        group, started, steps = self.groups.lagging, time.monotonic(), []
        member = self._member(group, f"{group}-1")
        ends = self.end_offsets()
        poll_until([member], lambda: reached(self.committed(group), ends), f"{group}: read what was produced",
                   self.timeout)
        self.idle.add(group)
        steps.append(f"read and committed up to {sum(ends.values())} messages, then stopped polling "
                     "(still a member)")
        return ScenarioOutcome("lagging consumer", group, steps, time.monotonic() - started)

    SCENARIOS = ("scale_out", "crash", "graceful_leave", "static_restart", "cooperative", "kip848", "lagging")

    def run(self, report: Callable[[ScenarioOutcome], None] = lambda outcome: None,
            parallel: bool = True) -> list[ScenarioOutcome]:
        """Every scenario (side by side in threads unless ``parallel=False``), in the order above."""
        if not parallel:
            outcomes = []
            for name in self.SCENARIOS:
                outcomes.append(getattr(self, name)())
                report(outcomes[-1])
            return outcomes
        with ThreadPoolExecutor(max_workers=len(self.SCENARIOS), thread_name_prefix="demo-scenario") as pool:
            futures = [pool.submit(getattr(self, name)) for name in self.SCENARIOS]
            for future in futures:
                report(future.result())
            return [future.result() for future in futures]

    # ------------------------------------------------------------------ after the scenarios

    def end_offsets(self) -> dict[int, int]:
        """partition -> high watermark of the topic now."""
        from confluent_kafka import Consumer, TopicPartition

        probe = Consumer({**self.client_config, "group.id": f"{self.groups.prefix}-probe"})
        try:
            return {p: probe.get_watermark_offsets(TopicPartition(self.topic, p), timeout=10)[1]
                    for p in range(self.partitions)}
        finally:
            probe.close()

    def committed(self, group: str) -> dict[int, int]:
        """partition -> the group's committed offset on the broker (-1001 when none)."""
        from confluent_kafka import KafkaException, TopicPartition

        member = self.live[group][0]
        tps = [TopicPartition(self.topic, p) for p in range(self.partitions)]
        # The coordinator may move or still be loading (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS right
        # after the group's first records): such errors are retriable, so ask again for a while.
        deadline = time.monotonic() + 30
        while True:
            try:
                return {tp.partition: tp.offset for tp in member.consumer.committed(tps, timeout=10)}
            except KafkaException as exc:
                if not coordinator_not_ready(exc.args[0]) or time.monotonic() > deadline:
                    raise
                member.poll(0.2)

    def catch_up(self) -> float:
        """Let every live group but the idle ones read and commit up to the topic's current end."""
        started = time.monotonic()
        ends = self.end_offsets()
        for group, members in self.live.items():
            if group not in self.idle and members:
                poll_until(members, lambda g=group: reached(self.committed(g), ends),  # type: ignore[misc]
                           f"{group}: catch up to the end of {self.topic}", self.timeout)
        return time.monotonic() - started

    def close(self) -> None:
        """Close every member (dynamic ones leave; static ones expire later) and kill any child left."""
        for child in self.children:
            child.kill()
        for members in self.live.values():
            for member in members:
                member.close()
        self.live.clear()

    def __enter__(self) -> DemoWorkload:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if __name__ == "__main__":
    sys.exit(_child_member())
