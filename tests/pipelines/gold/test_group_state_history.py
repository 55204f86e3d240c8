"""pipelines/gold/group_state_history.py on small hand-built silver rows: the states the records show, and when.

As the transform's and the table's documentation say (Kafka ``ClassicGroup``: currentStateTimestamp is
set on the move to CompletingRebalance, the record is written when the leader's SyncGroup stores the
assignment): a generation's first record gives CompletingRebalance at its currentStateTimestamp and
Stable at its append time, or Empty at its currentStateTimestamp when it lists no member; a tombstone
gives Dead; each state lasts until the next one, the last one is open. Later records of the same
generation (a static member's swap) change no state.
"""

from __future__ import annotations

import pytest

from pipelines.gold.group_history import record_sequence
from pipelines.gold.group_state_history import group_state_history
from tests.pipelines.gold.classic_history import at, seconds, silver_frames

pytestmark = pytest.mark.spark

RECORDS = [
    ("g", 0, 1, 2, 1, [("a", None, "t", [0, 1]), ("b1", "s", "t", [2])]),
    ("g", 1, 1, 5, 1, [("a", None, "t", [0, 1]), ("b2", "s", "t", [2])]),  # a swap: the same generation
    ("g", 2, 2, 12, 10, [("a", None, "t", [0, 1, 2])]),
    ("g", 3, 3, 20, 19, []),  # Empty
]


@pytest.fixture(scope="module")
def states(spark):  # type: ignore[no-untyped-def]
    """[(state, at, until, generation, evidence)] of group g in time order, times in seconds after T0."""
    from pyspark.sql import functions as F

    metadata, _ = silver_frames(spark, RECORDS)
    # The group is deleted at 30 s: a tombstone (no value, so no generation and no member count).
    tombstone = spark.createDataFrame([("c", "__consumer_offsets", 0, 4, at(30), "g", True)],
                                      "cluster_name string, source_topic string, source_partition int, "
                                      "source_offset long, record_timestamp timestamp, `group` string, "
                                      "is_tombstone boolean")
    metadata = metadata.unionByName(tombstone, allowMissingColumns=True)
    rows = group_state_history(record_sequence(metadata)).orderBy("at", F.col("until").asc_nulls_last()).collect()
    return [(r["state"], seconds(r["at"]), seconds(r["until"]), r["generation"], r["evidence"]) for r in rows]


def test_each_generation_completes_its_rebalance_when_it_formed_and_is_stable_when_its_assignment_was_stored(
        states) -> None:  # type: ignore[no-untyped-def]
    assert states[:4] == [
        ("CompletingRebalance", 1, 2, 1, "current_state_timestamp"),
        ("Stable", 2, 10, 1, "record_time"),  # the swap record at 5 s changed no state
        ("CompletingRebalance", 10, 12, 2, "current_state_timestamp"),
        ("Stable", 12, 19, 2, "record_time"),
    ]


def test_a_generation_without_members_is_empty_and_a_tombstone_is_dead_and_current(states) -> None:  # type: ignore[no-untyped-def]
    assert states[4:] == [
        ("Empty", 19, 30, 3, "current_state_timestamp"),
        ("Dead", 30, None, None, "tombstone"),
    ]
