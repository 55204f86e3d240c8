"""ClassicGroup: the legal state machine, protocol voting and request validation (ClassicGroup.java)."""

from __future__ import annotations

import itertools
import uuid

import pytest

from coordinator.consumer_protocol import subscription
from coordinator.errors import Errors, KafkaError
from coordinator.group import ClassicGroup, GroupEvents, GroupState, IllegalStateTransition
from coordinator.member import ClassicGroupMember, Protocol

# ClassicGroupState's javadoc, written out: state -> states it may be entered from.
LEGAL = {
    GroupState.EMPTY: {GroupState.PREPARING_REBALANCE},
    GroupState.PREPARING_REBALANCE: {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY},
    GroupState.COMPLETING_REBALANCE: {GroupState.PREPARING_REBALANCE},
    GroupState.STABLE: {GroupState.COMPLETING_REBALANCE},
    GroupState.DEAD: set(GroupState),
}


def new_group(state: GroupState = GroupState.EMPTY) -> ClassicGroup:
    ids = (uuid.UUID(int=i) for i in itertools.count(1))
    group = ClassicGroup("g", lambda: 42, GroupEvents(), lambda: next(ids))
    group.state = state
    return group


def member(member_id: str, *protocols: str, instance: str | None = None) -> ClassicGroupMember:
    return ClassicGroupMember(
        member_id,
        instance,
        "client",
        "/h",
        60_000,
        10_000,
        "consumer",
        tuple(Protocol(p, subscription(["t"])) for p in protocols),
    )


@pytest.mark.parametrize(("source", "target"), list(itertools.product(GroupState, GroupState)))
def test_only_the_transitions_kafka_lists_are_legal(source: GroupState, target: GroupState) -> None:
    group = new_group(source)
    if source in LEGAL[target]:
        group.transition_to(target)
        assert group.state is target and group.previous_state is source and group.current_state_timestamp == 42
    else:
        with pytest.raises(IllegalStateTransition):
            group.transition_to(target)
        assert group.state is source


def test_the_first_member_becomes_leader_and_sets_the_protocol_type() -> None:
    group = new_group()
    group.add(member("m1", "range"))
    group.add(member("m2", "range"))
    assert group.leader_id == "m1" and group.protocol_type == "consumer"


def test_removing_the_leader_hands_leadership_to_the_first_member_in_hashmap_order() -> None:
    # "aa".hashCode() = 3104 -> bucket 0, "b" = 98 -> bucket 2, "c" = 99 -> bucket 3 (capacity 16).
    group = new_group()
    for m in ("c", "b", "aa"):
        group.add(member(m, "range"))
    group.remove("c")
    assert group.leader_id == "aa"


def test_the_protocol_with_most_votes_among_those_every_member_supports_wins() -> None:
    group = new_group()
    group.add(member("a", "roundrobin", "range", "sticky"))
    group.add(member("b", "range", "roundrobin"))
    group.add(member("c", "roundrobin", "range"))
    # sticky is not supported by all; votes: roundrobin 2, range 1.
    assert group.select_protocol() == "roundrobin"


def test_a_tied_vote_goes_to_the_protocol_first_in_hashmap_order() -> None:
    # "range".hashCode() = 108280125 -> bucket 9; "roundrobin" = -128548644 -> bucket 10 (checked with javac).
    group = new_group()
    group.add(member("a", "roundrobin", "range"))
    group.add(member("b", "range", "roundrobin"))
    assert group.select_protocol() == "range"


def test_a_joiner_must_share_the_protocol_type_and_one_protocol_with_all_members() -> None:
    group = new_group(GroupState.STABLE)
    group.add(member("a", "range", "roundrobin"))
    assert group.supports_protocols("consumer", {"roundrobin"})
    assert not group.supports_protocols("consumer", {"sticky"})
    assert not group.supports_protocols("connect", {"range"})
    assert new_group().supports_protocols("anything", {"x"})  # an Empty group accepts any non-empty type
    assert not new_group().supports_protocols("", {"x"})


def commit_error(group: ClassicGroup, member_id: str, generation: int, instance: str | None = None) -> Errors:
    try:
        group.validate_offset_commit(member_id, instance, generation)
    except KafkaError as exc:
        return exc.error
    return Errors.NONE


def test_offset_commits_are_checked_against_member_and_generation() -> None:
    group = new_group(GroupState.STABLE)
    group.add(member("a", "range"))
    group.add(member("s", "range", instance="i"))
    group.generation_id = 3
    assert commit_error(group, "a", 3) is Errors.NONE
    assert commit_error(group, "a", 2) is Errors.ILLEGAL_GENERATION
    assert commit_error(group, "zz", 3) is Errors.UNKNOWN_MEMBER_ID
    assert commit_error(group, "a", 3, instance="i") is Errors.FENCED_INSTANCE_ID
    assert commit_error(group, "", -1) is Errors.UNKNOWN_MEMBER_ID  # a simple commit into a live group
    group.state = GroupState.COMPLETING_REBALANCE
    assert commit_error(group, "a", 3) is Errors.REBALANCE_IN_PROGRESS


def test_simple_commits_with_generation_minus_one_are_accepted_by_an_empty_group() -> None:
    assert commit_error(new_group(), "", -1) is Errors.NONE
    assert commit_error(new_group(), "", 0) is Errors.UNKNOWN_MEMBER_ID


def test_only_an_empty_group_may_be_deleted() -> None:
    for state in GroupState:
        group = new_group(state)
        if state is GroupState.EMPTY:
            group.validate_delete_group()
        else:
            with pytest.raises(KafkaError):
                group.validate_delete_group()
