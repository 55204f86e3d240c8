"""history/consumer.py: KIP-848 consumer groups replayed from hand-built record sequences (no Spark, no broker).

The main sequence is the one a real 4.2 broker wrote for two members on a 4-partition topic,
then one leaving, then the other, then the group's deletion (looked at with ``offsetlake
decode --topic __consumer_offsets`` before writing this): a join writes the member, the new
group epoch, the changed target assignments, the assignment epoch and the joiner's current
assignment in one write; the owner of partitions that move revokes them first (member state 1,
partitions pending revocation), then moves to the new epoch; the joiner waits (state 2,
unreleased partitions) until they are free. A departure writes the member's tombstones and the
next group epoch; the new target assignment waits for the next heartbeat. The expected values
below follow from Kafka's rules (``ConsumerGroup.maybeUpdateGroupState``,
``ModernGroupMember.isReconciledTo``), worked out by hand in the comments.
"""

from __future__ import annotations

import json

from history import GENERATIONS, MEMBERSHIP, REBALANCES
from history.consumer import (
    CURRENT_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    TARGET_MEMBER,
    TARGET_METADATA,
    CurrentAssignment,
    GroupRecord,
    MemberInfo,
    derive,
    rows_of,
)
from pipelines.gold.group_history import consumer_record_from_row as record_from_row
from pipelines.gold.refresh import GROUP_TABLES

T = "aHcoLvlDTvK26y2j6N5kcg"  # the topic id
A, B = "member-a", "member-b"


class Log:
    """Builds one group's records in append order; ``at`` is the append time of the next write."""

    def __init__(self) -> None:
        self.records: list[GroupRecord] = []
        self.at = 0

    def _add(self, kind: str, **fields) -> Log:  # type: ignore[no-untyped-def]
        self.records.append(GroupRecord(self.at, (0, len(self.records)), kind, **fields))
        return self

    def write(self, at: int) -> Log:
        self.at = at
        return self

    def group(self, epoch: int, metadata_hash: int = 7) -> Log:
        return self._add(GROUP_METADATA, epoch=epoch, metadata_hash=metadata_hash)

    def member(self, member_id: str, topics: tuple[str, ...] = ("orders",), **info) -> Log:  # type: ignore[no-untyped-def]
        return self._add(MEMBER_METADATA, member_id=member_id,
                         member=MemberInfo(client_id=f"client-{member_id}", client_host="/10.0.0.1",
                                           subscribed_topics=topics, rebalance_timeout_ms=300000, **info))

    def target(self, member_id: str, *partitions: int) -> Log:
        return self._add(TARGET_MEMBER, member_id=member_id, target=frozenset((T, p) for p in partitions))

    def assignment_epoch(self, epoch: int) -> Log:
        return self._add(TARGET_METADATA, epoch=epoch)

    def current(self, member_id: str, epoch: int, assigned: tuple[int, ...], state: int = 0,
                pending: tuple[int, ...] = ()) -> Log:
        return self._add(CURRENT_ASSIGNMENT, member_id=member_id, current=CurrentAssignment(
            epoch, state=state, assigned=frozenset((T, p) for p in assigned),
            pending_revocation=frozenset((T, p) for p in pending)))

    def leave(self, member_id: str) -> Log:
        for kind in (CURRENT_ASSIGNMENT, TARGET_MEMBER, MEMBER_METADATA):
            self._add(kind, member_id=member_id, is_tombstone=True)
        return self

    def delete_group(self) -> Log:
        self._add(TARGET_METADATA, is_tombstone=True)
        return self._add(GROUP_METADATA, is_tombstone=True)


def two_members_then_leave() -> Log:
    return (
        Log()
        .write(1000).member(A).group(1).target(A, 0, 1, 2, 3).assignment_epoch(1).current(A, 1, (0, 1, 2, 3))
        .write(2000).member(B).group(2).target(B, 2, 3).target(A, 0, 1).assignment_epoch(2)
        .current(B, 2, (), state=2)                      # B waits for 2 and 3 (UNRELEASED_PARTITIONS)
        .write(2300).current(A, 1, (0, 1), state=1, pending=(2, 3))  # A must revoke 2 and 3 first
        .write(2400).current(A, 2, (0, 1))               # A revoked: at epoch 2, STABLE
        .write(2500).current(B, 2, (2, 3))               # B got 2 and 3: every member reconciled
        .write(5000).leave(B).group(3)                   # B leaves: epoch 3, no target yet
        .write(5100).target(A, 0, 1, 2, 3).assignment_epoch(3).current(A, 3, (0, 1, 2, 3))
        .write(8000).leave(A).group(4)                   # the last member leaves
        .write(9000).delete_group()
    )


def test_the_state_history_follows_the_group_assignment_and_member_epochs() -> None:
    history = derive(two_members_then_leave().records)
    states = [(s.state, s.at, s.until, s.generation, s.assignment_epoch) for s in history.states]
    assert states == [
        ("Stable", 1000, 2000, 1, 1),        # A alone, at epoch 1 = assignment epoch 1, STABLE
        ("Reconciling", 2000, 2500, 2, 2),   # target computed (2 = 2) but A is at epoch 1, B unreleased
        ("Stable", 2500, 5000, 2, 2),        # both at epoch 2 and STABLE (A alone at 2400 was not enough)
        ("Assigning", 5000, 5100, 3, 2),     # group epoch 3 > assignment epoch 2
        ("Stable", 5100, 8000, 3, 3),
        ("Empty", 8000, 9000, 4, 3),         # no members: Empty whatever the epochs say
        ("Dead", 9000, None, None, None),    # the group tombstone
    ]


def test_each_group_epoch_is_one_generation_with_its_members_start_stability_and_end() -> None:
    history = derive(two_members_then_leave().records)
    rows = [(g.incarnation, g.generation, g.member_count, g.started_at, g.stable_at, g.ended_at, g.end_reason,
             g.records) for g in history.generations]
    assert rows == [
        (0, 1, 1, 1000, 1000, 2000, "member_joined", 5),
        (0, 2, 2, 2000, 2500, 5000, "member_left_or_vanished", 6 + 1 + 1 + 1),
        (0, 3, 1, 5000, 5100, 8000, "member_left_or_vanished", 4 + 3),
        (0, 4, 0, 8000, None, 9000, "group_removed", 4 + 2),  # Empty: never Stable; its end is the tombstone
    ]
    table = {row["generation"]: row for row in rows_of(history)[GENERATIONS]}
    assert {row["protocol_type"] for row in table.values()} == {"consumer"}
    assert {row["leader"] for row in table.values()} == {None}
    assert {row["protocol"] for row in table.values()} == {None}  # no member asked for a server assignor


def test_membership_spans_from_the_member_record_to_its_tombstone_with_member_epochs() -> None:
    history = derive(two_members_then_leave().records)
    rows = sorted((m.member_id, m.valid_from, m.valid_to, m.first_generation, m.last_generation,
                   m.first_member_epoch, m.last_member_epoch, m.info.client_id) for m in history.membership)
    assert rows == [
        (A, 1000, 8000, 1, 3, 1, 3, "client-member-a"),
        (B, 2000, 5000, 2, 2, 2, 2, "client-member-b"),
    ]


def test_assignments_keep_current_target_and_pending_revocation_apart() -> None:
    history = derive(two_members_then_leave().records)
    rows = sorted((a.kind, a.member_id, a.generation, a.partition, a.valid_from, a.valid_to)
                  for a in history.assignments)
    expected = sorted(
        [("current", A, 1, p, 1000, 2400) for p in (0, 1)]          # kept through the revocation
        + [("current", A, 1, p, 1000, 2300) for p in (2, 3)]
        + [("pending_revocation", A, 1, p, 2300, 2400) for p in (2, 3)]
        + [("current", A, 2, p, 2400, 5100) for p in (0, 1)]
        + [("current", B, 2, p, 2500, 5000) for p in (2, 3)]
        + [("current", A, 3, p, 5100, 8000) for p in range(4)]
        + [("target", A, 1, p, 1000, 2000) for p in range(4)]
        + [("target", A, 2, p, 2000, 5100) for p in (0, 1)]         # A's target is unchanged at 5000
        + [("target", B, 2, p, 2000, 5000) for p in (2, 3)]         # ...B's is deleted with B
        + [("target", A, 3, p, 5100, 8000) for p in range(4)]
    )
    assert rows == expected
    assert {a.topic_id for a in history.assignments} == {T}


def test_owned_partitions_never_overlap_between_members() -> None:
    log = two_members_then_leave()
    history = derive(log.records)
    times = sorted({r.at_ms for r in log.records})
    for t in times:
        owned = [(a.member_id, a.partition) for a in history.assignments if a.kind != "target"
                 and a.valid_from <= t and (a.valid_to is None or t < a.valid_to)]
        partitions = [p for _, p in owned]
        assert len(partitions) == len(set(partitions)), (t, owned)


def test_a_rebalance_per_settled_epoch_measured_against_the_previous_settled_one() -> None:
    history = derive(two_members_then_leave().records)
    rows = [(r.from_generation, r.to_generation, r.started_at, r.last_stable_at, r.join_completed_at, r.stable_at,
             r.members_before, r.members_after, r.members_joined, r.members_left, r.members_kept,
             r.partitions_moved, r.partitions_kept, r.likely_cause) for r in history.rebalances]
    assert rows == [
        # a new group: from epoch 0 without members
        (0, 1, 1000, None, 1000, 1000, 0, 1, [A], [], 0, 0, 0, "member_joined"),
        # A kept 0 and 1; 2 and 3 moved to B
        (1, 2, 2000, 1000, 2000, 2500, 1, 2, [B], [], 1, 2, 2, "member_joined"),
        # 2 and 3 moved back from B to A
        (2, 3, 5000, 2500, 5100, 5100, 2, 1, [], [B], 1, 2, 2, "member_left_or_vanished"),
        # Empty: settled without an assignment
        (3, 4, 8000, 5100, None, 8000, 1, 0, [], [A], 0, 0, 0, "member_left_or_vanished"),
    ]
    events = rows_of(history)[REBALANCES]
    # The start of a KIP-848 rebalance is recorded (the first bump): no member stopped before it.
    # (nobody was there to stop in the new group)
    assert [e.get("stopped_ms_upper_bound") for e in events] == [None, 500, 100, 0]
    assert [(e["stopped_at_lower_bound"], e["stopped_at_upper_bound"]) for e in events[1:]] == \
        [(e["started_at"], e["stable_at"]) for e in events[1:]]


def test_an_epoch_superseded_before_it_settles_is_part_of_the_next_rebalance() -> None:
    log = (
        Log()
        .write(1000).member(A).group(1).target(A, 0, 1).assignment_epoch(1).current(A, 1, (0, 1))
        .write(2000).member(B).group(2)                          # B joins; no assignment yet
        .write(2100).member("member-c").group(3)                 # C joins before epoch 2 was assigned
        .write(2200).target(A, 0).target(B, 1).target("member-c").assignment_epoch(3)
        .current(A, 1, (0,), state=1, pending=(1,)).current(B, 3, (), state=2).current("member-c", 3, ())
        .write(2300).current(A, 3, (0,))
        .write(2400).current(B, 3, (1,))
    )
    history = derive(log.records)
    assert [(s.state, s.at, s.generation) for s in history.states] == [
        ("Stable", 1000, 1), ("Assigning", 2000, 2), ("Assigning", 2100, 3), ("Reconciling", 2200, 3),
        ("Stable", 2400, 3)]
    assert [(r.from_generation, r.to_generation, r.started_at, r.stable_at, r.members_joined)
            for r in history.rebalances][1:] == [(1, 3, 2000, 2400, [B, "member-c"])]
    assert [(g.generation, g.stable_at, g.ended_at, g.end_reason) for g in history.generations] == [
        (1, 1000, 2000, "member_joined"), (2, None, 2100, "member_joined"), (3, 2400, None, None)]


def test_subscription_and_topic_metadata_changes_are_told_apart() -> None:
    log = (
        Log()
        .write(1000).member(A).group(1, metadata_hash=7).target(A, 0).assignment_epoch(1).current(A, 1, (0,))
        .write(2000).member(A, topics=("orders", "payments")).group(2, metadata_hash=8)
        .target(A, 0).assignment_epoch(2).current(A, 2, (0,))
        .write(3000).group(3, metadata_hash=9).target(A, 0, 1).assignment_epoch(3).current(A, 3, (0, 1))
    )
    history = derive(log.records)
    assert [r.likely_cause for r in history.rebalances] == ["member_joined", "subscription_changed",
                                                            "metadata_changed"]
    assert [g.end_reason for g in history.generations] == ["subscription_changed", "metadata_changed", None]


def test_a_subscription_change_closes_the_members_row_and_opens_the_next_even_with_the_same_assignment() -> None:
    log = (
        Log()
        .write(1000).member(A).group(1).target(A, 0).assignment_epoch(1).current(A, 1, (0,))
        .write(2000).member(A, topics=("orders", "payments")).group(2)  # same partitions: payments is empty
        .target(A, 0).assignment_epoch(2).current(A, 2, (0,))
        .write(3000).group(3, metadata_hash=9).target(A, 0, 1).assignment_epoch(3).current(A, 3, (0, 1))
        .write(4000).leave(A).group(4)
    )
    history = derive(log.records)
    assert [(m.member_id, m.info.subscribed_topics, m.valid_from, m.valid_to, m.first_generation,
             m.last_generation, m.first_member_epoch, m.last_member_epoch) for m in history.membership] == [
        (A, ("orders",), 1000, 2000, 1, 1, 1, 1),
        (A, ("orders", "payments"), 2000, 4000, 2, 3, 2, 3)]
    # One member throughout: the rebalance that changed the subscription neither joined nor lost anyone.
    assert [(r.members_joined, r.members_left, r.members_kept) for r in history.rebalances][1] == ([], [], 1)
    rows = rows_of(history)[MEMBERSHIP]
    assert [(r["subscribed_topics"], r["valid_to"]) for r in rows] == [(["orders"], 2000),
                                                                       (["orders", "payments"], 4000)]


def test_a_regex_subscription_change_opens_a_row_but_a_reordered_list_or_other_fields_do_not() -> None:
    log = (
        Log()
        .write(1000).member(A, topics=("orders", "payments")).group(1).target(A, 0).assignment_epoch(1)
        .current(A, 1, (0,))
        .write(2000).member(A, topics=("payments", "orders"), rack_id="rack-2")  # a set on the broker
        .write(3000).member(A, topics=(), subscribed_topic_regex="orders.*").group(2)
        .target(A, 0).assignment_epoch(2).current(A, 2, (0,))
    )
    history = derive(log.records)
    assert [(m.info.subscribed_topics, m.info.subscribed_topic_regex, m.info.rack_id, m.valid_from, m.valid_to)
            for m in history.membership] == [
        (("payments", "orders"), None, "rack-2", 1000, 3000), ((), "orders.*", None, 3000, None)]


def test_a_fenced_member_that_rejoins_under_its_member_id_gets_a_second_stay() -> None:
    log = (
        Log()
        .write(1000).member(A).group(1).target(A, 0).assignment_epoch(1).current(A, 1, (0,))
        .write(2000).leave(A).group(2)                     # session timeout: fenced
        .write(3000).member(A).group(3).target(A, 0).assignment_epoch(3).current(A, 3, (0,))
    )
    history = derive(log.records)
    assert [(m.member_id, m.valid_from, m.valid_to, m.first_generation, m.last_generation)
            for m in history.membership] == [(A, 1000, 2000, 1, 1), (A, 3000, None, 3, 3)]


def test_a_group_recreated_after_its_tombstone_starts_a_new_incarnation() -> None:
    log = (
        Log()
        .write(1000).member(A).group(1).target(A, 0).assignment_epoch(1).current(A, 1, (0,))
        .write(2000).leave(A).group(2)
        .write(3000).delete_group()
        .write(4000).member(B).group(1).target(B, 0).assignment_epoch(1).current(B, 1, (0,))
    )
    history = derive(log.records)
    assert [(g.incarnation, g.generation, g.ended_at, g.end_reason) for g in history.generations] == [
        (0, 1, 2000, "member_left_or_vanished"), (0, 2, 3000, "group_removed"), (1, 1, None, None)]
    assert [(s.state, s.at, s.until) for s in history.states] == [
        ("Stable", 1000, 2000), ("Empty", 2000, 3000), ("Dead", 3000, 4000), ("Stable", 4000, None)]
    assert [(r.from_generation, r.to_generation, r.members_joined) for r in history.rebalances] == [
        (0, 1, [A]), (1, 2, []), (0, 1, [B])]


def test_the_order_records_arrive_in_does_not_matter() -> None:
    records = two_members_then_leave().records
    assert derive(list(reversed(records))) == derive(records)


def test_the_assignor_is_the_server_assignor_most_members_ask_for() -> None:
    log = (
        Log()
        .write(1000).member(A, server_assignor="range").member(B, server_assignor="uniform")
        .member("member-c", server_assignor="range").group(1)
    )
    (generation,) = derive(log.records).generations
    assert generation.protocol == "range" and generation.member_count == 3


def test_silver_rows_become_records_with_their_nested_assignments() -> None:
    value = {"member_epoch": 5, "previous_member_epoch": 4, "state": 1,
             "assigned_partitions": [{"topic_id": T, "partitions": [0, 2], "assignment_epochs": []}],
             "partitions_pending_revocation": [{"topic_id": T, "partitions": [1], "assignment_epochs": []}]}
    record = record_from_row({"at_ms": 1000, "source_partition": 2, "source_offset": 40, "type": CURRENT_ASSIGNMENT,
                              "member_id": A, "is_tombstone": False, "value": json.dumps(value)})
    assert record.position == (2, 40)
    assert record.current == CurrentAssignment(5, 4, 1, frozenset({(T, 0), (T, 2)}), frozenset({(T, 1)}))
    member = record_from_row({"at_ms": 1, "source_partition": 0, "source_offset": 0, "type": MEMBER_METADATA,
                              "member_id": A, "is_tombstone": False, "value": json.dumps(
                                  {"instance_id": None, "rack_id": None, "client_id": "c", "client_host": "/h",
                                   "subscribed_topic_names": ["orders"], "subscribed_topic_regex": "",
                                   "rebalance_timeout_ms": 300000, "server_assignor": None,
                                   "classic_member_metadata": None})})
    assert member.member == MemberInfo(client_id="c", client_host="/h", subscribed_topics=("orders",),
                                       rebalance_timeout_ms=300000)
    gone = record_from_row({"at_ms": 1, "source_partition": 0, "source_offset": 1, "type": MEMBER_METADATA,
                            "member_id": A, "is_tombstone": True, "value": None})
    assert gone.is_tombstone and gone.member is None


def test_the_reference_coordinators_kip848_scenario_replays_to_the_reference_rows() -> None:
    """Gold's replay of the records the reference coordinator writes for
    ``conf/scenarios/kip848-subscription-change.yaml`` gives the rows the reference derives from its own
    in-memory group (``coordinator/timeline.py``), compared by ``offsetlake validate``'s rules -- without
    Spark, so ``make test-fast`` catches a drift that ``tests/pipelines/test_validate.py`` would."""
    from pathlib import Path

    from coordinator import simulate
    from decoders import decode_record
    from pipelines.validation import KIP848, TABLES, compare_table

    result = simulate(Path(__file__).resolve().parents[2] / "conf" / "scenarios" / "kip848-subscription-change.yaml")
    rows = []
    for offset, record in enumerate(result.records):
        decoded = decode_record(record.key, record.value)
        rows.append({"type": decoded.type, "is_tombstone": decoded.value is None, "at_ms": record.timestamp,
                     "source_partition": record.partition, "source_offset": offset,
                     "member_id": decoded.key.get("member_id"),
                     "value": None if decoded.value is None else json.dumps(decoded.value, default=str)})
    gold: dict[str, list[dict]] = {}
    replayed = rows_of(derive(record_from_row(r) for r in rows))
    for spec in GROUP_TABLES:
        gold[spec.name] = [{**row, "group": "ledger"} for row in replayed[spec.replay_rows]]
    compared_tables = [c for c in TABLES if KIP848 in c.where]
    assert {c.spec.name for c in compared_tables} == {
        "gold.group_generations", "gold.group_membership", "gold.partition_assignments", "gold.group_state_history",
        "gold.rebalance_events"}
    for compared in compared_tables:
        name = compared.spec.name
        assert compare_table("kip848", name, compared.key, compared.expected(result), gold[name]) == [], name
    # ledger-2 subscribed to one topic, then two: two membership rows, the second from the change on
    assert [row["subscribed_topics"] for row in sorted(gold["gold.group_membership"], key=lambda r: r["valid_from"])
            if row["client_id"] == "ledger-2"] == [["orders"], ["orders", "payments"]]
