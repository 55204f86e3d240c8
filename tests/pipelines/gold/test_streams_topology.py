"""pipelines/gold/streams_topology.py: gold.streams_topology takes the replay's ``topology`` rows.

On the streams group of tests/history/test_streams.py each of them has exactly the table's columns and a key of its
own (what the rows hold: tests/history/test_streams.py; how they reach gold: test_streams_task_assignments.py).
"""

from __future__ import annotations

from pipelines.gold.streams_topology import TABLE
from tests.pipelines.gold.replayed_rows import assert_rows_fit


def test_every_replayed_row_has_the_tables_columns_and_a_key_of_its_own() -> None:
    assert_rows_fit(TABLE, frozenset({"streams"}))
