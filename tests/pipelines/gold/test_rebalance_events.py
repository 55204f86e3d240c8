"""pipelines/gold/rebalance_events.py on small hand-built records: which partitions moved, stop bounds, causes.

Each record is what ``group_history.record_summaries`` gives for one GroupMetadata record: its
place in ``__consumer_offsets``, its members and the partitions each owns (``topic/partition@identity``).
"""

from __future__ import annotations

import datetime as dt

import pytest

from pipelines.gold.rebalance_events import partition_handovers

pytestmark = pytest.mark.spark

SCHEMA = ("cluster_name string, source_topic string, source_partition int, source_offset long, `group` string, "
          "incarnation int, record_timestamp timestamp, member_ids array<string>, owned array<string>")
T0 = dt.datetime(2026, 11, 25, 2, 0)


def records(spark, *owners_per_record: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    """One record per argument (member identity -> partitions of topic t), a second apart, one incarnation."""
    rows = [("c", "__consumer_offsets", 0, offset, "g", 0, T0 + dt.timedelta(seconds=offset),
             sorted(owners), sorted(f"t/{p}@{member}" for member, ps in owners.items() for p in ps))
            for offset, owners in enumerate(owners_per_record)]
    return spark.createDataFrame(rows, SCHEMA)


def handovers(spark, *owners_per_record):  # type: ignore[no-untyped-def]
    """[(moved, kept)] per record, in record order (records with no owned partition count none)."""
    got = {r["source_offset"]: (r["moved"], r["kept"])
           for r in partition_handovers(records(spark, *owners_per_record)).collect()}
    return [got.get(offset, (0, 0)) for offset in range(len(owners_per_record))]


def test_a_cooperative_revocation_moves_nothing_and_its_follow_up_moves_what_was_revoked(spark) -> None:  # type: ignore[no-untyped-def]
    # a owns 0-3; b joins: a revokes 2 and 3 (unowned in that generation), the follow-up gives them to b.
    assert handovers(spark, {"m:a": [0, 1, 2, 3]}, {"m:a": [0, 1], "m:b": []},
                     {"m:a": [0, 1], "m:b": [2, 3]}) == [(0, 0), (0, 2), (2, 2)]


def test_an_eager_rebalance_moves_what_changed_owner_between_two_records(spark) -> None:  # type: ignore[no-untyped-def]
    assert handovers(spark, {"m:a": [0, 1], "m:b": [2, 3]}, {"m:a": [0, 1, 2], "m:c": [3]}) == [(0, 0), (2, 2)]


def test_a_partition_given_back_to_its_last_owner_did_not_move(spark) -> None:  # type: ignore[no-untyped-def]
    assert handovers(spark, {"i:s": [0, 1]}, {"i:s": [0]}, {"i:s": [0, 1]}) == [(0, 0), (0, 1), (0, 2)]


def test_nothing_moves_from_before_the_group_went_empty(spark) -> None:  # type: ignore[no-untyped-def]
    assert handovers(spark, {"m:a": [0, 1]}, {}, {"m:b": [0, 1]}) == [(0, 0), (0, 0), (0, 0)]


# ---------------------------------------------------------------- bounds and causes (issue 12, items 3 and 4)
#
# Each case is one group's history as silver rows: GroupMetadata records (generation, append time and
# current_state_timestamp in seconds after T0, members with their partitions of topic t and their
# timeouts) and offset commits (partition of t, seconds after T0). All cases go through ``transitions``
# together, the way the refresh builds them (record_sequence -> record_summaries -> transitions), in
# one Spark job for the module.


def member(name: str, partitions: list[int], *, session_ms: int = 10_000, rebalance_ms: int = 60_000,
           static: bool = False) -> dict:
    return {"name": name, "partitions": partitions, "session_ms": session_ms, "rebalance_ms": rebalance_ms,
            "static": static}


A, B = member("a", [0, 1]), member("b", [2, 3])
SA, SB = member("a", [0, 1], static=True), member("s", [2, 3], static=True)
LEFT_EARLY = [(1, 0.2, 0.0, [A, B]), (2, 58.2, 58.0, [member("a", [0, 1, 2, 3])])]
CASES: dict[str, tuple[list, list]] = {
    # Generation 1 formed at 0 s; a and b commit until about 60 s; c joins, the join completes at 60.9 s.
    "commits": ([(1, 0.2, 0.0, [A, B]), (2, 61.0, 60.9, [A, B, member("c", [])])],
                [(0, 30.0), (1, 59.5), (2, 59.8), (3, 40.0)]),
    # b made no commit after the previous record
    "silent_member": ([(1, 0.2, 0.0, [A, B]), (2, 31.0, 30.9, [A, B, member("c", [])])], [(0, 29.0), (1, 29.5)]),
    # Stable at 0 s, no commits, every member gone and the group Empty 42 minutes later.
    "shutdown": ([(1, 0.2, 0.0, [A, B]), (2, 2520.0, 2520.0, [])], []),
    "shutdown_skipping_a_generation": ([(1, 0.2, 0.0, [A, B]), (3, 2520.0, 2520.0, [])], []),
    # b joined 58 s before it went (its session timeout is 10 s); it committed at 55 s, or not at all, or at 48 s.
    "left_after_commit": (LEFT_EARLY, [(2, 55.0), (0, 57.0)]),
    "left_without_commit": (LEFT_EARLY, [(0, 57.0)]),
    "left_long_after_commit": (LEFT_EARLY, [(2, 48.0)]),
    "static_returns": ([(1, 0.2, 0.0, [SA, SB]), (2, 20.2, 20.0, [member("a", [0, 1, 2, 3], static=True)]),
                        (3, 30.2, 30.0, [SA, SB])], []),
    "static_joins": ([(1, 0.2, 0.0, [SA]), (2, 10.2, 10.0, [SA, SB])], []),
    "from_empty": ([(1, 0.2, 0.0, []), (2, 5.2, 5.0, [member("a", [0, 1])])], []),
}


@pytest.fixture(scope="module")
def cases(spark):  # type: ignore[no-untyped-def]
    """CASES as silver frames: (group_metadata, the records' summaries, offset_commits, offset -> record index)."""
    from pipelines.gold import group_history
    from schemas import group_members, group_metadata, offset_commits

    at = lambda s: T0 + dt.timedelta(seconds=s)  # noqa: E731
    metadata: list[dict] = []
    members: list[dict] = []
    commit_rows: list[dict] = []
    for group, (group_records, commits) in CASES.items():
        for index, (generation, appended, formed, people) in enumerate(group_records):
            position = {"cluster_name": "c", "source_topic": "__consumer_offsets", "source_partition": 0,
                        "source_offset": len(metadata), "record_timestamp": at(appended), "group": group}
            metadata.append({**position, "protocol_type": "consumer", "generation": generation, "protocol": "range",
                             "leader": people[0]["name"] if people else None,
                             "current_state_timestamp": at(formed), "member_count": len(people),
                             "is_tombstone": False, "value_version": 3, "index": index})
            for m in people:
                # a static member's member id changes with every record here; its identity is its instance id
                members.append({**position, "generation": generation, "protocol_type": "consumer",
                                "protocol": "range", "member_id": f"{m['name']}-{index}" if m["static"] else m["name"],
                                "is_leader": m is people[0], "group_instance_id": m["name"] if m["static"] else None,
                                "client_id": m["name"], "rebalance_timeout_ms": m["rebalance_ms"],
                                "session_timeout_ms": m["session_ms"], "subscribed_topics": ["t"],
                                "assigned_partitions": [{"topic": "t", "partitions": m["partitions"]}],
                                "undecoded": False})
        commit_rows += [{"cluster_name": "c", "source_topic": "__consumer_offsets", "source_partition": 1,
                         "source_offset": len(commit_rows) + i, "record_timestamp": at(s), "group": group,
                         "topic": "t", "partition": p, "offset": i, "commit_timestamp": at(s), "is_tombstone": False,
                         "record_type": 1, "commit_date": at(s).date()} for i, (p, s) in enumerate(commits)]

    def frame(rows: list[dict], spec):  # type: ignore[no-untyped-def]
        names = spec.schema.fieldNames()
        return spark.createDataFrame([tuple(r.get(n) for n in names) for r in rows], spec.schema)

    metadata_frame = frame(metadata, group_metadata.TABLE)
    summaries = group_history.record_summaries(group_history.record_sequence(metadata_frame),
                                               frame(members, group_members.TABLE))
    return metadata_frame, summaries, frame(commit_rows, offset_commits.TABLE), {r["source_offset"]: r["index"]
                                                                                 for r in metadata}


def _transitions_by_case(summaries, commits, index) -> dict[str, dict[int, dict]]:  # type: ignore[no-untyped-def]
    from pipelines.gold.rebalance_events import transitions

    got: dict[str, dict[int, dict]] = {group: {} for group in CASES}
    for row in transitions(summaries, commits).collect():
        got[row["group"]][index[row["source_offset"]]] = row.asDict()
    return got


@pytest.fixture(scope="module")
def transitions_of(cases):  # type: ignore[no-untyped-def]
    """case -> {index of a record: its transition row} (the first record of a case has none)."""
    _, summaries, commits, index = cases
    return _transitions_by_case(summaries, commits, index)


def test_the_commits_within_the_records_windows_give_the_same_transitions_as_all_commits(  # type: ignore[no-untyped-def]
        cases, transitions_of) -> None:
    # What an incremental refresh does (pipelines/gold/refresh.py): it reads only the touched groups' commits
    # that fall between a record and its successor's join completion.
    from pyspark.sql import functions as F

    from pipelines.gold.rebalance_events import commits_in_windows

    metadata, summaries, commits, index = cases
    # The windows of the cases with commits (the others' span up to 2,520 s and would cover every commit):
    # from their first record's append (0.2 s) to their second record's join completion (at most 60.9 s).
    with_commits = metadata.filter(F.col("group").isin([group for group, (_, made) in CASES.items() if made]))
    # Two commits of "commits" outside them: before the first records were appended, and after 60.9 s.
    outside = commits.filter("`group` = 'commits' AND `partition` = 0").selectExpr(
        "* EXCEPT (commit_timestamp)", f"explode(array(TIMESTAMP '{seconds(0.1)}', TIMESTAMP '{seconds(61)}')) "
        "AS commit_timestamp").select(*commits.columns)
    windowed = commits_in_windows(commits.unionByName(outside), with_commits)
    kept = sorted(seconds_after(r["commit_timestamp"]) for r in windowed.collect())
    assert kept == [29.0, 29.5, 30.0, 40.0, 48.0, 55.0, 57.0, 57.0, 59.5, 59.8]
    assert _transitions_by_case(summaries, windowed, index) == transitions_of


def test_merged_ranges_joins_overlaps_and_closes_the_smallest_gaps_beyond_the_limit() -> None:
    from pipelines.gold.rebalance_events import merged_ranges

    assert merged_ranges([(5, 9), (0, 2), (1, 3), (3, 4)], 10) == [(0, 4), (5, 9)]
    assert merged_ranges([(0, 1), (2, 3), (10, 11), (13, 14), (30, 31)], 3) == [(0, 3), (10, 14), (30, 31)]
    assert merged_ranges([(0, 1), (5, 6)], 1) == [(0, 6)]
    assert merged_ranges([], 3) == []


def seconds_after(moment: dt.datetime) -> float:
    return (moment - T0).total_seconds()


def seconds(s: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=s)


def test_the_stop_bounds_close_in_on_the_members_last_commits_not_on_the_previous_record(transitions_of) -> None:  # type: ignore[no-untyped-def]
    got = transitions_of["commits"][1]
    assert got["likely_cause"] == "member_joined"
    # every member worked until at least its last commit: a until 59.5 s, b until 59.8 s
    assert (got["stopped_at_lower_bound"], got["stopped_at_upper_bound"]) == (seconds(59.5), seconds(60.9))


def test_a_member_without_commits_leaves_the_lower_bound_at_the_previous_record(transitions_of) -> None:  # type: ignore[no-untyped-def]
    assert transitions_of["silent_member"][1]["stopped_at_lower_bound"] == seconds(0.2)


def test_a_shutdown_long_after_the_group_went_quiet_is_capped_by_the_members_timeouts(transitions_of) -> None:  # type: ignore[no-untyped-def]
    # The join phase lasts at most one rebalance timeout (60 s) and a vanished member stopped at most
    # its session timeout (10 s) before its removal: nobody stopped before 42 min - 70 s.
    got = transitions_of["shutdown"][1]
    assert got["likely_cause"] == "member_left_or_vanished"
    assert got["stopped_at_lower_bound"] == seconds(2520 - 60 - 10)
    # Generation 2 was cut short before its record: two join phases and its sync phase.
    assert transitions_of["shutdown_skipping_a_generation"][1]["stopped_at_lower_bound"] == seconds(2520 - 3 * 60 - 10)


def test_a_departure_within_the_session_timeout_of_the_members_last_commit_is_a_leave(transitions_of) -> None:  # type: ignore[no-untyped-def]
    # b committed at 55 s and was gone by 58 s: no 10 s session could expire in 3 s.
    assert transitions_of["left_after_commit"][1]["likely_cause"] == "member_left"
    # Without that commit only its join at 0 s is known: an expiry fits, and so would a leave after
    # idling, so the generic label stays; the same with its last commit 10 s before.
    assert transitions_of["left_without_commit"][1]["likely_cause"] == "member_left_or_vanished"
    assert transitions_of["left_long_after_commit"][1]["likely_cause"] == "member_left_or_vanished"


def test_a_static_member_back_after_its_removal_returned_and_a_new_one_joined(transitions_of) -> None:  # type: ignore[no-untyped-def]
    assert transitions_of["static_returns"][1]["likely_cause"] == "member_left_or_vanished"
    assert transitions_of["static_returns"][2]["likely_cause"] == "static_member_returned"
    # a static member never seen before is a join like any other
    assert transitions_of["static_joins"][1]["likely_cause"] == "member_joined"


def test_nobody_stopped_when_the_group_was_empty_before(transitions_of) -> None:  # type: ignore[no-untyped-def]
    got = transitions_of["from_empty"][1]
    assert got["stopped_at_lower_bound"] is None and got["stopped_at_upper_bound"] is None
