"""The ``sticky`` assignor and the algorithm it shares with ``cooperative-sticky``.

A line-by-line port of ``clients/.../consumer/internals/AbstractStickyAssignor.java`` and
``clients/.../consumer/StickyAssignor.java`` (Kafka 4.2), without the rack-aware branches.
Results equal the Java assignor's only if every tie is broken the same way, so the port keeps
Java's data structures where their iteration order matters:

* ``HashMap``/``HashSet`` -> :class:`~coordinator.java_collections.JavaHashMap`/``JavaHashSet``
  (e.g. which consumer's owned partitions are honoured first in the constrained builder, which
  partition ``getTheActualPartitionToBeMoved`` picks from a movement set);
* ``TreeSet`` with ``SubscriptionComparator`` -> :class:`_SortedConsumers`, ordered by
  (assignment size, member id in ``String.compareTo`` order);
* ``List.remove(Object)`` removes the first occurrence; lists that Java aliases (the unassigned list
  *is* ``sortedAllPartitions`` when nothing was owned) are aliased here too.

``maxGeneration`` is an instance field that Java never resets, so it carries over between
rebalances led by the same consumer; :class:`AbstractStickyAssignor` keeps it the same way.
"""

from __future__ import annotations

import bisect
import math
import struct
from dataclasses import dataclass

from coordinator.assignors.base import PartitionAssignor
from coordinator.consumer_protocol import Subscription
from coordinator.java_collections import JavaHashMap, JavaHashSet, java_string_hash, java_string_key, to_int32
from coordinator.topic_partition import TopicPartition, by_partition_then_topic, by_topic_then_partition

STICKY_ASSIGNOR_NAME = "sticky"
DEFAULT_GENERATION = -1


class AssignmentError(RuntimeError):
    """The Java assignor would throw ``IllegalStateException`` here."""


@dataclass(frozen=True)
class MemberData:
    partitions: list[TopicPartition]
    generation: int | None


@dataclass(frozen=True)
class _ConsumerPair:
    src: str
    dst: str

    def java_hash_code(self) -> int:
        return to_int32(31 * to_int32(31 + java_string_hash(self.src)) + java_string_hash(self.dst))


@dataclass(frozen=True)
class _ConsumerGenerationPair:
    consumer: str
    generation: int


def _remove_first(items: list, value: object) -> None:
    """``List.remove(Object)``: drop the first equal element, if any."""
    try:
        items.remove(value)
    except ValueError:
        pass


def _remove_all(items: list, values: JavaHashSet | set) -> None:
    """``ArrayList.removeAll`` in place (keeps list identity and order)."""
    items[:] = [x for x in items if x not in values]


class _SortedConsumers:
    """``new TreeSet<>(new SubscriptionComparator(currentAssignment))``.

    Java orders by the assignment size *at insertion time*; every caller removes a consumer before
    changing its assignment and re-adds it after, so storing the key on insertion is equivalent.
    """

    def __init__(self, assignment: JavaHashMap[str, list[TopicPartition]]):
        self._assignment = assignment
        self._keys: list[tuple[int, bytes, str]] = []
        self._key_of: dict[str, tuple[int, bytes, str]] = {}

    def add(self, consumer: str) -> None:
        if consumer in self._key_of:
            return
        key = (len(self._assignment[consumer]), java_string_key(consumer), consumer)
        bisect.insort(self._keys, key)
        self._key_of[consumer] = key

    def remove(self, consumer: str) -> None:
        key = self._key_of.pop(consumer, None)
        if key is not None:
            self._keys.pop(bisect.bisect_left(self._keys, key))

    def first(self) -> str:
        return self._keys[0][2]

    def last(self) -> str:
        return self._keys[-1][2]

    def __iter__(self):
        return iter([k[2] for k in self._keys])


class _PartitionMovements:
    """``AbstractStickyAssignor.PartitionMovements`` (only what ``assign`` uses)."""

    def __init__(self) -> None:
        self.by_topic: JavaHashMap[str, JavaHashMap[_ConsumerPair, JavaHashSet[TopicPartition]]] = JavaHashMap()
        self.movements: JavaHashMap[TopicPartition, _ConsumerPair] = JavaHashMap()

    def _remove_record(self, partition: TopicPartition) -> _ConsumerPair:
        pair = self.movements.pop(partition)
        per_topic = self.by_topic[partition.topic]
        per_topic[pair].discard(partition)
        if not per_topic[pair]:
            del per_topic[pair]
        if not self.by_topic[partition.topic]:
            del self.by_topic[partition.topic]
        return pair

    def _add_record(self, partition: TopicPartition, pair: _ConsumerPair) -> None:
        # Java: `if (!map.containsKey(k)) map.put(k, new ...)` -- put, not computeIfAbsent.
        self.movements[partition] = pair
        if partition.topic not in self.by_topic:
            self.by_topic[partition.topic] = JavaHashMap()
        per_topic = self.by_topic[partition.topic]
        if pair not in per_topic:
            per_topic[pair] = JavaHashSet()
        per_topic[pair].add(partition)

    def move(self, partition: TopicPartition, old: str, new: str) -> None:
        if partition in self.movements:
            existing = self._remove_record(partition)
            if existing.src != new:
                self._add_record(partition, _ConsumerPair(existing.src, new))
        else:
            self._add_record(partition, _ConsumerPair(old, new))

    def actual_partition_to_move(self, partition: TopicPartition, old: str, new: str) -> TopicPartition:
        if partition.topic not in self.by_topic:
            return partition
        if partition in self.movements:
            old = self.movements[partition].src
        per_topic = self.by_topic[partition.topic]
        reverse = _ConsumerPair(new, old)
        if reverse not in per_topic:
            return partition
        return next(iter(per_topic[reverse]))


class AbstractStickyAssignor(PartitionAssignor):
    def __init__(self) -> None:
        self.max_generation = DEFAULT_GENERATION
        #: ``None`` after the general builder ran (the cooperative assignor then recomputes it).
        self.partitions_transferring_ownership: JavaHashMap[TopicPartition, str] | None = JavaHashMap()
        self._movements: _PartitionMovements | None = None

    def member_data(self, sub: Subscription) -> MemberData:
        raise NotImplementedError

    def assign_partitions(
        self,
        partitions_per_topic: JavaHashMap[str, list[TopicPartition]],
        subscriptions: JavaHashMap[str, Subscription],
    ) -> JavaHashMap[str, list[TopicPartition]]:
        consumer_to_owned: JavaHashMap[str, list[TopicPartition]] = JavaHashMap()
        multiple_owners: JavaHashSet[TopicPartition] = JavaHashSet()
        if self._all_subscriptions_equal(partitions_per_topic, subscriptions, consumer_to_owned, multiple_owners):
            self.partitions_transferring_ownership = JavaHashMap()
            return _ConstrainedBuilder(self, partitions_per_topic, consumer_to_owned, multiple_owners).build()
        self.partitions_transferring_ownership = None
        return _GeneralBuilder(self, partitions_per_topic, consumer_to_owned, subscriptions).build()

    def _all_subscriptions_equal(
        self,
        all_topics: JavaHashMap[str, list[TopicPartition]],
        subscriptions: JavaHashMap[str, Subscription],
        consumer_to_owned: JavaHashMap[str, list[TopicPartition]],
        multiple_owners: JavaHashSet[TopicPartition],
    ) -> bool:
        all_equal = True
        subscribed: JavaHashSet[str] = JavaHashSet()
        previous_owner: JavaHashMap[TopicPartition, str] = JavaHashMap()
        for consumer in subscriptions:
            sub = subscriptions[consumer]
            if not subscribed:
                subscribed.add_all(sub.topics)
            elif all_equal and not (len(sub.topics) == len(subscribed) and all(t in subscribed for t in sub.topics)):
                all_equal = False

            data = self.member_data(sub)
            generation = data.generation if data.generation is not None else DEFAULT_GENERATION
            self.max_generation = max(self.max_generation, generation)

            owned: list[TopicPartition] = []
            consumer_to_owned[consumer] = owned
            for tp in data.partitions:
                if tp.topic not in all_topics:
                    continue
                other = previous_owner.get(tp)
                if other is None:
                    owned.append(tp)
                    previous_owner[tp] = consumer
                    continue
                other_sub_generation = subscriptions[other].generation_id
                other_generation = other_sub_generation if other_sub_generation is not None else DEFAULT_GENERATION
                if generation == other_generation:
                    multiple_owners.add(tp)
                    _remove_first(consumer_to_owned[other], tp)
                    previous_owner[tp] = consumer
                elif generation > other_generation:
                    owned.append(tp)
                    _remove_first(consumer_to_owned[other], tp)
                    previous_owner[tp] = consumer
        return all_equal


class _ConstrainedBuilder:
    """``ConstrainedAssignmentBuilder``: every member subscribes to the same topics."""

    def __init__(
        self,
        owner: AbstractStickyAssignor,
        partitions_per_topic: JavaHashMap[str, list[TopicPartition]],
        current_assignment: JavaHashMap[str, list[TopicPartition]],
        multiple_owners: JavaHashSet[TopicPartition],
    ):
        self.owner = owner
        self.partitions_per_topic = partitions_per_topic
        self.current_assignment = current_assignment
        self.total = sum(len(partitions_per_topic[t]) for t in partitions_per_topic)
        self.multiple_owners = multiple_owners
        self.maybe_revoked: JavaHashMap[TopicPartition, str] = JavaHashMap()
        self.unfilled_under: list[str] = []
        self.unfilled_exact: list[str] = []
        consumers = len(current_assignment)
        self.min_quota = math.floor(self.total / consumers)
        self.max_quota = math.ceil(self.total / consumers)
        self.expected_over = self.total % consumers
        self.current_over = 0
        initial: JavaHashMap[str, list[TopicPartition]] = JavaHashMap()
        for consumer in current_assignment:
            initial[consumer] = []
        self.assignment = JavaHashMap.copy_of(initial)
        self.assigned_partitions: list[TopicPartition] = []

    def build(self) -> JavaHashMap[str, list[TopicPartition]]:
        self._assign_owned_partitions()
        unassigned = self._unassigned_partitions(self.assigned_partitions)
        self.unfilled_under.sort(key=java_string_key)
        self.unfilled_exact.sort(key=java_string_key)
        self._assign_round_robin(unassigned)
        self._verify_unfilled_members()
        return self.assignment

    def _assign_owned_partitions(self) -> None:
        for consumer in self.current_assignment:
            owned = sorted(self.current_assignment[consumer], key=by_partition_then_topic)
            consumer_assignment = self.assignment[consumer]
            for doubly_claimed in self.multiple_owners:
                if doubly_claimed in owned:
                    _remove_first(owned, doubly_claimed)

            if len(owned) < self.min_quota:
                consumer_assignment.extend(owned)
                self.assigned_partitions.extend(owned)
                self.unfilled_under.append(consumer)
            elif len(owned) >= self.max_quota and self.current_over < self.expected_over:
                self.current_over += 1
                if self.current_over == self.expected_over:
                    self.unfilled_exact.clear()
                kept = owned[: self.max_quota]
                consumer_assignment.extend(kept)
                self.assigned_partitions.extend(kept)
                for tp in owned[self.max_quota :]:
                    self.maybe_revoked[tp] = consumer
            else:
                kept = owned[: self.min_quota]
                consumer_assignment.extend(kept)
                self.assigned_partitions.extend(kept)
                for tp in owned[self.min_quota :]:
                    self.maybe_revoked[tp] = consumer
                if self.current_over < self.expected_over:
                    self.unfilled_exact.append(consumer)

    def _assign_round_robin(self, unassigned: list[TopicPartition]) -> None:
        # A Java LinkedList iterator over unfilled_under: `cursor` is the next index,
        # `last` the index of the element next() returned (for iterator.remove()).
        under = self.unfilled_under
        cursor, last = 0, -1
        for tp in unassigned:
            if cursor < len(under):
                consumer = under[cursor]
                last, cursor = cursor, cursor + 1
            elif not under and not self.unfilled_exact:
                raise AssignmentError("No more unfilled consumers to be assigned.")
            elif not under:
                consumer = self.unfilled_exact.pop(0)
            else:
                cursor, last = 1, 0
                consumer = under[0]

            count = self._assign_new_partition(tp, consumer)
            if count == self.min_quota:
                if last < 0:
                    raise AssignmentError("iterator remove() without next()")
                del under[last]
                cursor, last = last, -1
                self.unfilled_exact.append(consumer)
            elif count == self.max_quota:
                self.current_over += 1

    def _assign_new_partition(self, tp: TopicPartition, consumer: str) -> int:
        consumer_assignment = self.assignment[consumer]
        consumer_assignment.append(tp)
        revoked_from = self.maybe_revoked.get(tp)
        if (revoked_from is not None and revoked_from != consumer) or tp in self.multiple_owners:
            self.owner.partitions_transferring_ownership[tp] = consumer
        return len(consumer_assignment)

    def _verify_unfilled_members(self) -> None:
        if not self.unfilled_under:
            return
        if self.current_over != self.expected_over:
            raise AssignmentError(
                "We haven't reached the expected number of members with more than the minQuota partitions, "
                "but no more partitions to be assigned"
            )
        for member in self.unfilled_under:
            if len(self.assignment[member]) != self.min_quota:
                raise AssignmentError(
                    f"Consumer: [{member}] doesn't reach minQuota partitions, and no more partitions to be assigned"
                )

    def _unassigned_partitions(self, sorted_assigned: list[TopicPartition]) -> list[TopicPartition]:
        sorted_topics = sorted(self.partitions_per_topic, key=java_string_key)
        if not sorted_assigned:
            return [TopicPartition(t, p.partition) for t in sorted_topics for p in self.partitions_per_topic[t]]
        sorted_assigned.sort(key=by_topic_then_partition)
        assigned = set(sorted_assigned)
        return [
            TopicPartition(t, i)
            for t in sorted_topics
            for i in range(len(self.partitions_per_topic[t]))
            if TopicPartition(t, i) not in assigned
        ]


class _GeneralBuilder:
    """``GeneralAssignmentBuilder``: members subscribe to different topics."""

    def __init__(
        self,
        owner: AbstractStickyAssignor,
        partitions_per_topic: JavaHashMap[str, list[TopicPartition]],
        current_assignment: JavaHashMap[str, list[TopicPartition]],
        subscriptions: JavaHashMap[str, Subscription],
    ):
        self.owner = owner
        self.partitions_per_topic = partitions_per_topic
        self.current_assignment = current_assignment
        self.subscriptions = subscriptions
        self.total = sum(len(partitions_per_topic[t]) for t in partitions_per_topic)
        self.revocation_required = False

        self.topic_consumers: JavaHashMap[str, list[str]] = JavaHashMap(len(partitions_per_topic))
        self.consumer_topics: JavaHashMap[str, list[str]] = JavaHashMap(len(subscriptions))
        for topic in partitions_per_topic:
            self.topic_consumers[topic] = []
        for consumer in subscriptions:
            topics: list[str] = []
            self.consumer_topics[consumer] = topics
            for topic in subscriptions[consumer].topics:
                if partitions_per_topic.get(topic) is not None:
                    topics.append(topic)
                    self.topic_consumers[topic].append(consumer)
            if consumer not in current_assignment:
                current_assignment[consumer] = []

        self.partition_consumer: JavaHashMap[TopicPartition, str] = JavaHashMap()
        for consumer in current_assignment:
            for tp in current_assignment[consumer]:
                self.partition_consumer[tp] = consumer

        sorted_topics = sorted(self.topic_consumers, key=lambda t: (len(self.topic_consumers[t]), java_string_key(t)))
        self.sorted_all_partitions = [
            TopicPartition(t, p.partition) for t in sorted_topics for p in partitions_per_topic[t]
        ]
        self.sorted_consumers = _SortedConsumers(current_assignment)

    # -- build ------------------------------------------------------------------------------
    def build(self) -> JavaHashMap[str, list[TopicPartition]]:
        prev_assignment: JavaHashMap[TopicPartition, _ConsumerGenerationPair] = JavaHashMap()
        self.owner._movements = _PartitionMovements()
        self._prepopulate(prev_assignment)
        assigned = self._assign_owned_partitions()
        unassigned = self._unassigned_partitions(assigned)
        for consumer in self.current_assignment:
            self.sorted_consumers.add(consumer)
        self._balance(prev_assignment, unassigned)
        return self.current_assignment

    def _assign_owned_partitions(self) -> list[TopicPartition]:
        assigned: list[TopicPartition] = []
        for consumer in list(self.current_assignment):
            owned = self.current_assignment[consumer]
            sub = self.subscriptions.get(consumer)
            if sub is None:
                for tp in owned:
                    self.partition_consumer.pop(tp, None)
                del self.current_assignment[consumer]
                continue
            kept: list[TopicPartition] = []
            for tp in owned:
                if tp.topic not in self.topic_consumers:
                    self.partition_consumer.pop(tp, None)
                elif tp.topic not in sub.topics:
                    self.revocation_required = True
                else:
                    kept.append(tp)
                    assigned.append(tp)
            owned[:] = kept
        return assigned

    def _unassigned_partitions(self, sorted_assigned: list[TopicPartition]) -> list[TopicPartition]:
        if not sorted_assigned:
            return self.sorted_all_partitions  # the same list object, as in Java
        sorted_assigned.sort(
            key=lambda tp: (len(self.topic_consumers[tp.topic]), java_string_key(tp.topic), tp.partition)
        )
        assigned = set(sorted_assigned)
        return [tp for tp in self.sorted_all_partitions if tp not in assigned]

    def _prepopulate(self, prev: JavaHashMap[TopicPartition, _ConsumerGenerationPair]) -> None:
        max_generation = self.owner.max_generation
        for consumer in self.subscriptions:
            data = self.owner.member_data(self.subscriptions[consumer])
            if data.generation is not None and data.generation < max_generation:
                self._update_prev(prev, data.partitions, consumer, data.generation)
            elif data.generation is None and max_generation > DEFAULT_GENERATION:
                self._update_prev(prev, data.partitions, consumer, DEFAULT_GENERATION)

    @staticmethod
    def _update_prev(prev, partitions_: list[TopicPartition], consumer: str, generation: int) -> None:
        for tp in partitions_:
            existing = prev.get(tp)
            if existing is None or generation > existing.generation:
                prev[tp] = _ConsumerGenerationPair(consumer, generation)

    # -- balance ----------------------------------------------------------------------------
    def _max_assignment_size(self, topics: list[str]) -> int:
        if len(topics) == len(self.partitions_per_topic):
            return self.total
        return sum(len(self.partitions_per_topic[t]) for t in topics)

    def _topic_can_move(self, topic: str) -> bool:
        return len(self.topic_consumers[topic]) >= 2

    def _consumer_can_move(self, consumer: str) -> bool:
        current = self.current_assignment[consumer]
        if len(current) < self._max_assignment_size(self.consumer_topics[consumer]):
            return True
        return any(self._topic_can_move(tp.topic) for tp in current)

    def _is_balanced(self) -> bool:
        smallest = len(self.current_assignment[self.sorted_consumers.first()])
        largest = len(self.current_assignment[self.sorted_consumers.last()])
        if smallest >= largest - 1:
            return True
        owner_of: dict[TopicPartition, str] = {}
        for consumer in self.current_assignment:
            for tp in self.current_assignment[consumer]:
                owner_of[tp] = consumer
        for consumer in self.sorted_consumers:
            mine = self.current_assignment[consumer]
            count = len(mine)
            topics = self.consumer_topics[consumer]
            if count == self._max_assignment_size(topics):
                continue
            mine_set = set(mine)
            for topic in topics:
                for i in range(len(self.partitions_per_topic[topic])):
                    tp = TopicPartition(topic, i)
                    if tp not in mine_set and count + 1 < len(self.current_assignment[owner_of[tp]]):
                        return False
        return True

    def _balance_score(self, assignment: JavaHashMap[str, list[TopicPartition]]) -> int:
        sizes = [len(assignment[c]) for c in assignment]
        return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])

    def _maybe_assign_partition(self, tp: TopicPartition) -> bool:
        for consumer in self.sorted_consumers:
            if tp.topic in self.consumer_topics[consumer]:
                self.sorted_consumers.remove(consumer)
                self.current_assignment[consumer].append(tp)
                self.partition_consumer[tp] = consumer
                self.sorted_consumers.add(consumer)
                return True
        return False

    def _balance(
        self, prev: JavaHashMap[TopicPartition, _ConsumerGenerationPair], unassigned: list[TopicPartition]
    ) -> None:
        initializing = not self.current_assignment[self.sorted_consumers.last()]
        for tp in list(unassigned):
            if self.topic_consumers[tp.topic]:
                self._maybe_assign_partition(tp)

        fixed_partitions: JavaHashSet[TopicPartition] = JavaHashSet()
        for topic in self.topic_consumers:
            if not self._topic_can_move(topic):
                for i in range(len(self.partitions_per_topic[topic])):
                    fixed_partitions.add(TopicPartition(topic, i))
        _remove_all(self.sorted_all_partitions, fixed_partitions)
        _remove_all(unassigned, fixed_partitions)

        fixed_assignments: JavaHashMap[str, list[TopicPartition]] = JavaHashMap()
        for consumer in self.consumer_topics:
            if not self._consumer_can_move(consumer):
                self.sorted_consumers.remove(consumer)
                fixed_assignments[consumer] = self.current_assignment.pop(consumer)

        pre_balance: JavaHashMap[str, list[TopicPartition]] = JavaHashMap()
        for consumer in self.current_assignment:
            pre_balance[consumer] = list(self.current_assignment[consumer])
        pre_balance_owners = JavaHashMap.copy_of(self.partition_consumer)

        if not self.revocation_required:
            self._perform_reassignments(unassigned, prev)
        performed = self._perform_reassignments(self.sorted_all_partitions, prev)

        if (
            not initializing
            and performed
            and self._balance_score(self.current_assignment) >= self._balance_score(pre_balance)
        ):
            self.current_assignment.clear()
            for consumer in pre_balance:
                self.current_assignment[consumer] = list(pre_balance[consumer])
            self.partition_consumer.clear()
            self.partition_consumer.put_all(pre_balance_owners)

        for consumer in fixed_assignments:
            self.current_assignment[consumer] = fixed_assignments[consumer]
            self.sorted_consumers.add(consumer)

    def _perform_reassignments(self, reassignable: list[TopicPartition], prev) -> bool:
        performed = False
        while True:
            modified = False
            for tp in reassignable:
                if self._is_balanced():
                    break
                consumer = self.partition_consumer.get(tp)
                previous = prev.get(tp)
                if (
                    previous is not None
                    and len(self.current_assignment[consumer]) > len(self.current_assignment[previous.consumer]) + 1
                ):
                    self._reassign(tp, previous.consumer)
                    performed = modified = True
                    continue
                for other in self.topic_consumers[tp.topic]:
                    if len(self.current_assignment[consumer]) > len(self.current_assignment[other]) + 1:
                        self._reassign_to_best(tp)
                        performed = modified = True
                        break
            if not modified:
                return performed

    def _reassign_to_best(self, tp: TopicPartition) -> None:
        for candidate in self.sorted_consumers:
            if tp.topic in self.consumer_topics[candidate]:
                self._reassign(tp, candidate)
                return
        raise AssignmentError(f"no consumer can take {tp}")

    def _reassign(self, tp: TopicPartition, new_consumer: str) -> None:
        consumer = self.partition_consumer[tp]
        to_move = self.owner._movements.actual_partition_to_move(tp, consumer, new_consumer)
        old = self.partition_consumer[to_move]
        self.sorted_consumers.remove(old)
        self.sorted_consumers.remove(new_consumer)
        self.owner._movements.move(to_move, old, new_consumer)
        _remove_first(self.current_assignment[old], to_move)
        self.current_assignment[new_consumer].append(to_move)
        self.partition_consumer[to_move] = new_consumer
        self.sorted_consumers.add(new_consumer)
        self.sorted_consumers.add(old)


# -- StickyAssignor user data ---------------------------------------------------------------
# STICKY_ASSIGNOR_USER_DATA_V1 = [previous_assignment: [topic: STRING, partitions: [INT32]]], generation: INT32
# (old-style ``Struct`` types: arrays are int32-counted, strings int16-length UTF-8).


def encode_sticky_user_data(partitions_: list[TopicPartition], generation: int | None) -> bytes:
    """``StickyAssignor.serializeTopicPartitionAssignment``: topics in the order of the ``HashMap``
    ``CollectionUtils.groupPartitionsByTopic`` fills with ``computeIfAbsent``, partitions in list
    order; v1 adds the generation."""
    by_topic: JavaHashMap[str, list[int]] = JavaHashMap()
    for tp in partitions_:
        by_topic.compute_if_absent(tp.topic, lambda _: []).append(tp.partition)
    out = bytearray(struct.pack(">i", len(by_topic)))
    for topic in by_topic:
        encoded = topic.encode("utf-8")
        out += struct.pack(">h", len(encoded)) + encoded
        out += struct.pack(">i", len(by_topic[topic]))
        for p in by_topic[topic]:
            out += struct.pack(">i", p)
    if generation is not None:
        out += struct.pack(">i", generation)
    return bytes(out)


def decode_sticky_user_data(data: bytes) -> MemberData:
    """``StickyAssignor.deserializeTopicPartitionAssignment``: v1, falling back to v0, else empty."""

    def parse(with_generation: bool) -> MemberData:
        pos = 0

        def take(fmt: str):
            nonlocal pos
            size = struct.calcsize(fmt)
            if pos + size > len(data):
                raise ValueError("underflow")
            (value,) = struct.unpack_from(fmt, data, pos)
            pos += size
            return value

        result: list[TopicPartition] = []
        for _ in range(take(">i")):
            length = take(">h")
            if pos + length > len(data):
                raise ValueError("underflow")
            topic = data[pos : pos + length].decode("utf-8")
            pos += length
            for _ in range(take(">i")):
                result.append(TopicPartition(topic, take(">i")))
        generation = take(">i") if with_generation else None
        return MemberData(result, generation)

    try:
        return parse(True)
    except (ValueError, UnicodeDecodeError, struct.error):
        try:
            return parse(False)
        except (ValueError, UnicodeDecodeError, struct.error):
            return MemberData([], DEFAULT_GENERATION)


class StickyAssignor(AbstractStickyAssignor):
    """``sticky``: eager protocol; the previous assignment travels in the subscription user data."""

    name = STICKY_ASSIGNOR_NAME

    def __init__(self) -> None:
        super().__init__()
        self._member_assignment: list[TopicPartition] | None = None
        self._generation = DEFAULT_GENERATION

    def on_assignment(self, partitions_assigned: list[TopicPartition], generation_id: int) -> None:
        self._member_assignment = list(partitions_assigned)
        self._generation = generation_id

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        if self._member_assignment is None:
            return None
        return encode_sticky_user_data(self._member_assignment, self._generation)

    def member_data(self, sub: Subscription) -> MemberData:
        if not sub.user_data:
            return MemberData([], None)
        return decode_sticky_user_data(sub.user_data)
