"""pipelines/gold/group_generations.py on small hand-built silver rows: one row per recorded generation.

What the table's documentation says a generation row holds: the protocol, leader and member count of its
first record; ``started_at`` its currentStateTimestamp (when it formed), ``stable_at`` that record's append
time (null for an Empty generation, which stores no assignment); ``ended_at`` when the next recorded
generation formed, or the group's tombstone; ``end_reason`` the likely cause of the rebalance into the next
generation (gold.rebalance_events), ``group_removed`` for a tombstone, null while current; ``records`` its
GroupMetadata records (a static member's swap adds one); a group re-created after its tombstone starts a
new incarnation.
"""

from __future__ import annotations

import pytest

from pipelines.gold.group_generations import TABLE, group_generations
from pipelines.gold.group_history import record_sequence, record_summaries
from pipelines.gold.rebalance_events import transitions
from tests.pipelines.gold.classic_history import at, seconds, silver_frames

pytestmark = pytest.mark.spark

A = ("a", None, "t", [0])
RECORDS = [
    ("g", 0, 1, 2, 1, [A, ("s1", "s", "t", [1])]),
    ("g", 1, 1, 5, 1, [A, ("s2", "s", "t", [1])]),  # static member s restarts: the same generation
    ("g", 2, 2, 12, 10, [A, ("s2", "s", "t", [1]), ("c", None, "t", [])]),  # c joined
    ("g", 3, 3, 20, 19, [A, ("s2", "s", "t", [1]), ("d", None, "t", [])]),  # c left as d joined
    # tombstone at 30 s (offset 4), then the group is created again:
    ("g", 5, 1, 41, 40, [A]),
    ("e", 6, 1, 3, 3, []),  # a group that formed Empty (committing offsets only) and has no protocol type
]


@pytest.fixture(scope="module")
def generations(spark):  # type: ignore[no-untyped-def]
    """(group, incarnation, generation) -> the row as a dict, times in seconds after T0."""
    from pyspark.sql import functions as F

    metadata, members = silver_frames(spark, RECORDS)
    metadata = metadata.withColumn("protocol_type", F.when(F.col("group") == "e", "")
                                   .otherwise(F.col("protocol_type")))
    tombstone = spark.createDataFrame([("c", "__consumer_offsets", 0, 4, at(30), "g", True)],
                                      "cluster_name string, source_topic string, source_partition int, "
                                      "source_offset long, record_timestamp timestamp, `group` string, "
                                      "is_tombstone boolean")
    sequence = record_sequence(metadata.unionByName(tombstone, allowMissingColumns=True))
    built = group_generations(sequence, transitions(record_summaries(sequence, members)))
    assert built.columns == TABLE.schema.fieldNames()
    times = ("started_at", "stable_at", "ended_at")
    return {(r["group"], r["incarnation"], r["generation"]): {k: seconds(v) if k in times else v
                                                              for k, v in r.asDict().items()}
            for r in built.collect()}


def summary(row: dict) -> tuple:  # type: ignore[type-arg]
    return (row["leader"], row["member_count"], row["started_at"], row["stable_at"], row["ended_at"],
            row["end_reason"], row["records"])


def test_each_generation_ends_when_the_next_one_formed_with_the_cause_of_that_rebalance(generations) -> None:  # type: ignore[no-untyped-def]
    assert summary(generations["g", 0, 1]) == ("a", 2, 1, 2, 10, "member_joined", 2)
    assert summary(generations["g", 0, 2]) == ("a", 3, 10, 12, 19, "members_joined_and_left", 1)
    row = generations["g", 0, 2]
    assert (row["protocol_type"], row["protocol"], row["group_type"]) == ("consumer", "range", "classic")


def test_the_generation_a_tombstone_ends_was_removed_and_the_recreated_group_is_a_new_incarnation(
        generations) -> None:  # type: ignore[no-untyped-def]
    assert summary(generations["g", 0, 3]) == ("a", 3, 19, 20, 30, "group_removed", 1)
    assert summary(generations["g", 1, 1]) == ("a", 1, 40, 41, None, None, 1)
    assert sorted(key for key in generations if key[0] == "g") == [("g", 0, 1), ("g", 0, 2), ("g", 0, 3),
                                                                   ("g", 1, 1)]


def test_an_empty_generation_has_no_leader_was_never_stable_and_an_empty_protocol_type_is_null(generations) -> None:  # type: ignore[no-untyped-def]
    row = generations["e", 0, 1]
    assert summary(row) == (None, 0, 3, None, None, None, 1)
    assert row["protocol_type"] is None
