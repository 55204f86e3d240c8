"""pipelines/gold/partition_assignments.py: gold.partition_assignments takes the replay's ``replay_rows`` rows.

On every reference scenario each of them has exactly the table's columns and a key of its own (what the rows
hold: tests/history/test_classic.py and test_consumer.py).
"""

from __future__ import annotations

from pipelines.gold.partition_assignments import TABLE
from tests.pipelines.gold.replayed_rows import assert_rows_fit


def test_every_replayed_row_has_the_tables_columns_and_a_key_of_its_own() -> None:
    assert_rows_fit(TABLE, frozenset({"classic", "consumer", "share"}))  # streams tasks: their own table
