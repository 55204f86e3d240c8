"""history/classic.py on hand-built GroupMetadata records: what each group table's row of a classic group holds.

The expected values follow from what the records can show (Kafka ``GroupMetadataManager.storeGroup``: a record
when a generation's assignment is stored, when a static member swaps its member id in, when the group goes Empty;
a tombstone when it is deleted; ``currentStateTimestamp`` set on the move to CompletingRebalance), worked out by
hand in the comments; they were the Spark SQL path's tests before the replay replaced it.
"""

from __future__ import annotations

from history import ASSIGNMENTS, GENERATIONS, MEMBERSHIP, REBALANCES, STATES
from history.classic import ClassicMember, Commit, GroupMetadataRecord, replay
from tests.history.classic_records import ms, record, replay_groups, seconds

# ---------------------------------------------------------------------------------------------- generations

A = ("a", None, "t", [0])
GENERATION_RECORDS = [
    ("g", 0, 1, 2, 1, [A, ("s1", "s", "t", [1])]),
    ("g", 1, 1, 5, 1, [A, ("s2", "s", "t", [1])]),  # static member s restarts: the same generation
    ("g", 2, 2, 12, 10, [A, ("s2", "s", "t", [1]), ("c", None, "t", [])]),  # c joined
    ("g", 3, 3, 20, 19, [A, ("s2", "s", "t", [1]), ("d", None, "t", [])]),  # c left as d joined
    ("g", 4, "tombstone", 30, 30, []),
    ("g", 5, 1, 41, 40, [A]),  # the group created again
]


def generations() -> dict[tuple[str, int, int], tuple]:  # type: ignore[type-arg]
    groups = replay_groups(GENERATION_RECORDS)
    # a group that formed Empty (committing offsets only) and has no protocol type
    groups["e"] = {GENERATIONS: replay([record(6, 1, 3, 3, [], protocol_type="")])[GENERATIONS]}
    return {(group, r["incarnation"], r["generation"]): (
        r["leader"], r["member_count"], seconds(r["started_at"]), seconds(r["stable_at"]), seconds(r["ended_at"]),
        r["end_reason"], r["records"], r["protocol_type"]) for group, rows in groups.items() for r in rows[GENERATIONS]}


def test_each_generation_ends_when_the_next_one_formed_with_the_cause_of_that_rebalance() -> None:
    found = generations()
    assert found["g", 0, 1] == ("a", 2, 1, 2, 10, "member_joined", 2, "consumer")
    assert found["g", 0, 2] == ("a", 3, 10, 12, 19, "members_joined_and_left", 1, "consumer")
    [row] = [r for r in replay_groups(GENERATION_RECORDS)["g"][GENERATIONS]
             if (r["incarnation"], r["generation"]) == (0, 2)]
    assert (row["protocol_type"], row["protocol"], row["group_type"]) == ("consumer", "range", "classic")


def test_the_generation_a_tombstone_ends_was_removed_and_the_recreated_group_is_a_new_incarnation() -> None:
    found = generations()
    assert found["g", 0, 3][:7] == ("a", 3, 19, 20, 30, "group_removed", 1)
    assert found["g", 1, 1][:7] == ("a", 1, 40, 41, None, None, 1)
    assert sorted(key for key in found if key[0] == "g") == [("g", 0, 1), ("g", 0, 2), ("g", 0, 3), ("g", 1, 1)]


def test_an_empty_generation_has_no_leader_was_never_stable_and_an_empty_protocol_type_is_null() -> None:
    assert generations()["e", 0, 1] == (None, 0, 3, None, None, None, 1, None)


# ----------------------------------------------------------------------------------------------- membership

SHORT = {"session_timeout_ms": 10_000, "rebalance_timeout_ms": 60_000, "client_host": "/10.0.0.1",
         "subscribed_topics": ["t"]}
LONG = {**SHORT, "session_timeout_ms": 45_000, "client_host": "/10.0.0.2", "subscribed_topics": ["t", "v"]}
MEMBER_RECORDS = [
    ("g", 0, 1, 2, 1, [("a", None, "t", [0, 1], SHORT), ("b1", "s", "t", [2], SHORT), ("c", None, "t", [], SHORT)]),
    ("g", 1, 1, 5, 1, [("a", None, "t", [0, 1], SHORT), ("b2", "s", "t", [2], SHORT)]),  # s swapped b1 -> b2
    ("g", 2, 2, 12, 10, [("a", None, "t", [0, 1, 2], LONG)]),  # a restarted with other settings, same id
    ("g", 3, 3, 20, 19, []),  # Empty
    ("h", 4, 7, 3, 2, [("z", None, "u", [5], SHORT)]),  # another group, z still in it
]


def stays() -> dict[tuple[str, str], dict]:  # type: ignore[type-arg]
    return {(group, r["member_id"]): {**r, "valid_from": seconds(r["valid_from"]), "valid_to": seconds(r["valid_to"])}
            for group, rows in replay_groups(MEMBER_RECORDS).items() for r in rows[MEMBERSHIP]}


def test_a_member_listed_by_several_generations_has_one_stay_from_its_first_generations_start() -> None:
    a = stays()[("g", "a")]
    assert (a["valid_from"], a["valid_to"], a["first_generation"], a["last_generation"]) == (1, 19, 1, 2)


def test_a_static_member_swap_ends_the_old_id_and_starts_the_new_one_at_the_swap_record() -> None:
    found = stays()
    assert (found[("g", "b1")]["valid_from"], found[("g", "b1")]["valid_to"]) == (1, 5)
    assert (found[("g", "b2")]["valid_from"], found[("g", "b2")]["valid_to"]) == (5, 10)
    assert found[("g", "b1")]["group_instance_id"] == found[("g", "b2")]["group_instance_id"] == "s"


def test_a_member_without_partitions_is_still_a_member() -> None:
    assert (stays()[("g", "c")]["valid_from"], stays()[("g", "c")]["valid_to"]) == (1, 5)


def test_a_member_still_listed_has_no_end() -> None:
    found = stays()
    assert (found[("h", "z")]["valid_from"], found[("h", "z")]["valid_to"]) == (2, None)
    assert set(found) == {("g", "a"), ("g", "b1"), ("g", "b2"), ("g", "c"), ("h", "z")}


def test_the_members_settings_are_those_of_its_last_record() -> None:
    a = stays()[("g", "a")]
    assert (a["session_timeout_ms"], a["client_host"], a["subscribed_topics"]) == (45_000, "/10.0.0.2", ["t", "v"])
    assert (a["group_type"], a["first_member_epoch"], a["rack_id"]) == ("classic", None, None)


# ------------------------------------------------------------------------------------ partition assignments

ASSIGNMENT_RECORDS = [
    ("g", 0, 1, 2, 1, [("a", None, "t", [0, 1]), ("b1", "s", "t", [2]), ("c", None, "t", [])]),
    ("g", 1, 1, 5, 1, [("a", None, "t", [0, 1]), ("b2", "s", "t", [2])]),  # static member s swapped b1 -> b2
    ("g", 2, 2, 12, 10, [("a", None, "t", [0, 1, 2])]),  # generation 2 formed at 10 s, stored at 12 s
    ("g", 3, 3, 20, 19, []),  # Empty
    ("h", 4, 7, 3, 2, [("z", None, "u", [5])]),  # another group, still current
]


def owners() -> tuple[dict, list]:  # type: ignore[type-arg]
    rows = [(group, r) for group, found in replay_groups(ASSIGNMENT_RECORDS).items() for r in found[ASSIGNMENTS]]
    return {(group, r["generation"], r["member_id"], r["topic"], r["partition"]):
            (seconds(r["valid_from"]), seconds(r["valid_to"])) for group, r in rows}, [r for _, r in rows]


def test_an_assignment_runs_from_the_record_that_stored_it_to_the_start_of_the_next_generation() -> None:
    by_key, _ = owners()
    # a kept partitions 0 and 1 through both records of generation 1: one row each, not one per record.
    assert by_key[("g", 1, "a", "t", 0)] == (2, 10)
    assert by_key[("g", 1, "a", "t", 1)] == (2, 10)


def test_a_static_members_id_swap_ends_the_old_ids_rows_and_starts_the_new_ones() -> None:
    by_key, _ = owners()
    assert by_key[("g", 1, "b1", "t", 2)] == (2, 5)
    assert by_key[("g", 1, "b2", "t", 2)] == (5, 10)


def test_the_group_going_empty_ends_the_last_generations_rows() -> None:
    by_key, _ = owners()
    assert {key: span for key, span in by_key.items() if key[:2] == ("g", 2)} == {
        ("g", 2, "a", "t", 0): (12, 19), ("g", 2, "a", "t", 1): (12, 19), ("g", 2, "a", "t", 2): (12, 19)}


def test_a_current_assignment_has_no_end_and_a_member_without_partitions_has_no_row() -> None:
    by_key, _ = owners()
    assert by_key[("h", 7, "z", "u", 5)] == (3, None)
    assert not [key for key in by_key if key[2] == "c"]
    assert len(by_key) == 8  # a x2, b1, b2 (generation 1); a x3 (generation 2); z


def test_classic_rows_carry_the_members_client_and_instance_and_no_topic_id() -> None:
    _, rows = owners()
    [swapped] = [r for r in rows if r["member_id"] == "b2"]
    assert (swapped["client_id"], swapped["group_instance_id"]) == ("client-b2", "s")
    assert {(r["group_type"], r["assignment_kind"], r["topic_id"]) for r in rows} == {("classic", "current", None)}


# ------------------------------------------------------------------------------------------- state history

STATE_RECORDS = [
    ("g", 0, 1, 2, 1, [("a", None, "t", [0, 1]), ("b1", "s", "t", [2])]),
    ("g", 1, 1, 5, 1, [("a", None, "t", [0, 1]), ("b2", "s", "t", [2])]),  # a swap: the same generation
    ("g", 2, 2, 12, 10, [("a", None, "t", [0, 1, 2])]),
    ("g", 3, 3, 20, 19, []),  # Empty
    ("g", 4, "tombstone", 30, 30, []),  # deleted at 30 s
]


def states() -> list[tuple]:  # type: ignore[type-arg]
    return [(r["state"], seconds(r["at"]), seconds(r["until"]), r["generation"], r["evidence"])
            for r in replay_groups(STATE_RECORDS)["g"][STATES]]


def test_each_generation_completes_its_rebalance_when_it_formed_and_is_stable_when_its_assignment_was_stored() -> None:
    assert states()[:4] == [
        ("CompletingRebalance", 1, 2, 1, "current_state_timestamp"),
        ("Stable", 2, 10, 1, "record_time"),  # the swap record at 5 s changed no state
        ("CompletingRebalance", 10, 12, 2, "current_state_timestamp"),
        ("Stable", 12, 19, 2, "record_time"),
    ]


def test_a_generation_without_members_is_empty_and_a_tombstone_is_dead_and_current() -> None:
    assert states()[4:] == [("Empty", 19, 30, 3, "current_state_timestamp"), ("Dead", 30, None, None, "tombstone")]


# ------------------------------------------------------------------------- rebalances: partitions moved

def moves(*owners_per_record: dict[str, list[int]]) -> list[tuple[int, int]]:
    """(moved, kept) of each rebalance, one record a generation per argument (identity -> partitions of t; 'i:x'
    a static member x, 'm:x' a dynamic one)."""
    records = [GroupMetadataRecord(at_ms=ms(offset), position=(0, offset), generation=offset + 1, protocol="range",
                                   member_count=len(owners), current_state_ms=ms(offset), members=tuple(
                                       ClassicMember(member_id=f"{identity[2:]}-{offset}" if identity[0] == "i"
                                                     else identity[2:],
                                                     group_instance_id=identity[2:] if identity[0] == "i" else None,
                                                     assigned=(("t", tuple(ps)),))
                                       for identity, ps in sorted(owners.items())))
               for offset, owners in enumerate(owners_per_record)]
    return [(r["partitions_moved"], r["partitions_kept"]) for r in replay(records)[REBALANCES]]


def test_a_cooperative_revocation_moves_nothing_and_its_follow_up_moves_what_was_revoked() -> None:
    # a owns 0-3; b joins: a revokes 2 and 3 (unowned in that generation), the follow-up gives them to b.
    assert moves({"m:a": [0, 1, 2, 3]}, {"m:a": [0, 1], "m:b": []}, {"m:a": [0, 1], "m:b": [2, 3]}) == [(0, 2), (2, 2)]


def test_an_eager_rebalance_moves_what_changed_owner_between_two_records() -> None:
    assert moves({"m:a": [0, 1], "m:b": [2, 3]}, {"m:a": [0, 1, 2], "m:c": [3]}) == [(2, 2)]


def test_a_partition_given_back_to_its_last_owner_did_not_move() -> None:
    assert moves({"i:s": [0, 1]}, {"i:s": [0]}, {"i:s": [0, 1]}) == [(0, 1), (0, 2)]


def test_nothing_moves_from_before_the_group_went_empty() -> None:
    assert moves({"m:a": [0, 1]}, {}, {"m:b": [0, 1]}) == [(0, 0), (0, 0)]


# ------------------------------------------------------------------------- rebalances: bounds and causes
#
# Each case is one group's history: records (generation, append time, currentStateTimestamp in seconds, members
# with their partitions of t and timeouts) and offset commits (partition of t, seconds).

def member(name: str, partitions: list[int], *, session_ms: int = 10_000, rebalance_ms: int = 60_000,
           static: bool = False) -> dict:  # type: ignore[type-arg]
    return {"name": name, "partitions": partitions, "session_ms": session_ms, "rebalance_ms": rebalance_ms,
            "static": static}


MA, MB = member("a", [0, 1]), member("b", [2, 3])
SA, SB = member("a", [0, 1], static=True), member("s", [2, 3], static=True)
LEFT_EARLY = [(1, 0.2, 0.0, [MA, MB]), (2, 58.2, 58.0, [member("a", [0, 1, 2, 3])])]
CASES: dict[str, tuple[list, list]] = {  # type: ignore[type-arg]
    # Generation 1 formed at 0 s; a and b commit until about 60 s; c joins, the join completes at 60.9 s.
    "commits": ([(1, 0.2, 0.0, [MA, MB]), (2, 61.0, 60.9, [MA, MB, member("c", [])])],
                [(0, 30.0), (1, 59.5), (2, 59.8), (3, 40.0)]),
    # b made no commit after the previous record
    "silent_member": ([(1, 0.2, 0.0, [MA, MB]), (2, 31.0, 30.9, [MA, MB, member("c", [])])], [(0, 29.0), (1, 29.5)]),
    # Stable at 0 s, no commits, every member gone and the group Empty 42 minutes later.
    "shutdown": ([(1, 0.2, 0.0, [MA, MB]), (2, 2520.0, 2520.0, [])], []),
    "shutdown_skipping_a_generation": ([(1, 0.2, 0.0, [MA, MB]), (3, 2520.0, 2520.0, [])], []),
    # b joined 58 s before it went (its session timeout is 10 s); it committed at 55 s, or not at all, or at 48 s.
    "left_after_commit": (LEFT_EARLY, [(2, 55.0), (0, 57.0)]),
    "left_without_commit": (LEFT_EARLY, [(0, 57.0)]),
    "left_long_after_commit": (LEFT_EARLY, [(2, 48.0)]),
    "static_returns": ([(1, 0.2, 0.0, [SA, SB]), (2, 20.2, 20.0, [member("a", [0, 1, 2, 3], static=True)]),
                        (3, 30.2, 30.0, [SA, SB])], []),
    "static_joins": ([(1, 0.2, 0.0, [SA]), (2, 10.2, 10.0, [SA, SB])], []),
    "from_empty": ([(1, 0.2, 0.0, []), (2, 5.2, 5.0, [member("a", [0, 1])])], []),
}


def case(name: str) -> list[dict]:  # type: ignore[type-arg]
    """The rebalance rows of a case, in record order (the first record has none)."""
    group_records, commits = CASES[name]
    records = []
    for index, (generation, appended, formed, people) in enumerate(group_records):
        records.append(GroupMetadataRecord(
            at_ms=ms(appended), position=(0, index), generation=generation, protocol="range",
            leader=people[0]["name"] if people else None, current_state_ms=ms(formed), member_count=len(people),
            members=tuple(ClassicMember(
                # a static member's member id changes with every record; its identity is its instance id
                member_id=f"{m['name']}-{index}" if m["static"] else m["name"],
                group_instance_id=m["name"] if m["static"] else None, client_id=m["name"],
                session_timeout_ms=m["session_ms"], rebalance_timeout_ms=m["rebalance_ms"], subscribed_topics=("t",),
                assigned=(("t", tuple(m["partitions"])),)) for m in people)))
    return replay(records, [Commit(ms(s), "t", p) for p, s in commits])[REBALANCES]


def bounds(row: dict) -> tuple[float | None, float | None]:  # type: ignore[type-arg]
    return seconds(row["stopped_at_lower_bound"]), seconds(row["stopped_at_upper_bound"])


def test_the_stop_bounds_close_in_on_the_members_last_commits_not_on_the_previous_record() -> None:
    [got] = case("commits")
    assert got["likely_cause"] == "member_joined"
    # every member worked until at least its last commit: a until 59.5 s, b until 59.8 s
    assert bounds(got) == (59.5, 60.9)


def test_a_member_without_commits_leaves_the_lower_bound_at_the_previous_record() -> None:
    assert bounds(case("silent_member")[0])[0] == 0.2


def test_a_shutdown_long_after_the_group_went_quiet_is_capped_by_the_members_timeouts() -> None:
    # The join phase lasts at most one rebalance timeout (60 s) and a vanished member stopped at most
    # its session timeout (10 s) before its removal: nobody stopped before 42 min - 70 s.
    [got] = case("shutdown")
    assert got["likely_cause"] == "member_left_or_vanished"
    assert bounds(got)[0] == 2520 - 60 - 10
    # Generation 2 was cut short before its record: two join phases and its sync phase.
    assert bounds(case("shutdown_skipping_a_generation")[0])[0] == 2520 - 3 * 60 - 10


def test_a_departure_within_the_session_timeout_of_the_members_last_commit_is_a_leave() -> None:
    # b committed at 55 s and was gone by 58 s: no 10 s session could expire in 3 s.
    assert case("left_after_commit")[0]["likely_cause"] == "member_left"
    # Without that commit only its join at 0 s is known: an expiry fits, and so would a leave after
    # idling, so the generic label stays; the same with its last commit 10 s before.
    assert case("left_without_commit")[0]["likely_cause"] == "member_left_or_vanished"
    assert case("left_long_after_commit")[0]["likely_cause"] == "member_left_or_vanished"


def test_a_static_member_back_after_its_removal_returned_and_a_new_one_joined() -> None:
    assert [r["likely_cause"] for r in case("static_returns")] == ["member_left_or_vanished", "static_member_returned"]
    # a static member never seen before is a join like any other
    assert case("static_joins")[0]["likely_cause"] == "member_joined"


def test_nobody_stopped_when_the_group_was_empty_before() -> None:
    assert bounds(case("from_empty")[0]) == (None, None)


def test_a_cooperative_follow_up_names_the_members_the_round_before_revoked_from() -> None:
    # KIP-429: b joins; a revokes 2 and 3 in generation 2 (nobody owns them), then rejoins: generation 3 hands
    # them to b. Only a lost partitions while staying, so only a can have started the follow-up.
    records = [record(0, 1, 1, 0, [("a", None, "t", [0, 1, 2, 3])], protocol="cooperative-sticky"),
               record(1, 2, 11, 10, [("a", None, "t", [0, 1]), ("b", None, "t", [])], protocol="cooperative-sticky"),
               record(2, 3, 13, 12, [("a", None, "t", [0, 1]), ("b", None, "t", [2, 3])],
                      protocol="cooperative-sticky")]
    joined, follow_up = replay(records)[REBALANCES]
    assert (joined["likely_cause"], joined["triggered_by"], joined["rebalance_protocol"]) == (
        "member_joined", None, "cooperative")
    assert (follow_up["likely_cause"], follow_up["triggered_by"], follow_up["partitions_moved"]) == (
        "cooperative_follow_up", ["a"], 2)


def test_a_static_member_swap_without_a_rebalance_is_a_restart_event_of_the_same_generation() -> None:
    rows = replay_groups(GENERATION_RECORDS)["g"][REBALANCES]
    [restart] = [r for r in rows if r["event_type"] == "static_member_restart"]
    assert (restart["from_generation"], restart["to_generation"], restart["static_restarts"],
            restart["likely_cause"], restart["stopped_at_lower_bound"]) == (1, 1, ["s"], "static_member_restart", None)
    # the first record of each incarnation starts no event: 3 rebalances and the swap before the tombstone
    assert [(r["event_type"], r["to_generation"]) for r in rows] == [
        ("static_member_restart", 1), ("rebalance", 2), ("rebalance", 3)]
