"""What each group table's module promises of the replay's rows it takes (``TableSpec.replay_rows``), checked on
the replay of every reference scenario (classic and KIP-848 groups) and of the share and streams groups of
tests/history/test_share.py and test_streams.py, without Spark: every row has exactly the table's columns (but
``cluster_name`` and ``group``, the caller's) and no two rows of a group share the table's key. What the rows mean
is tested in tests/history/."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from coordinator import simulate
from history.group import GroupRows, group_rows
from pipelines.gold.group_history import share_record_from_row, streams_record_from_row
from schemas.table_spec import TableSpec
from tests.history.group_log import silver_rows
from tests.history.scenario_records import group_inputs
from tests.history.test_share import two_members_then_leave
from tests.history.test_streams import upgraded_then_deleted

ALL_TYPES = frozenset({"classic", "consumer", "share", "streams"})
SCENARIOS = sorted((Path(__file__).resolve().parents[3] / "conf" / "scenarios").glob("*.yaml"))


@cache
def replayed() -> tuple[tuple[str, GroupRows], ...]:
    found = []
    for path in SCENARIOS:
        for group, inputs in group_inputs(simulate(str(path), kafka_version="4.2").records).items():
            found.append((group, group_rows(inputs.classic_records, inputs.commits, inputs.consumer_records)))
    share = [share_record_from_row(r) for r in silver_rows(two_members_then_leave().entries)]
    found.append(("share-g", group_rows(share_records=share)))
    streams = [streams_record_from_row(r) for r in silver_rows(upgraded_then_deleted().entries)]
    found.append(("streams-g", group_rows(streams_records=streams)))
    return tuple(found)


def assert_rows_fit(spec: TableSpec, group_types: frozenset[str] = ALL_TYPES) -> None:
    """``group_types``: the group types whose rows the table holds (the column docs say which)."""
    columns = set(spec.schema.fieldNames()) - {"cluster_name", "group"}
    kinds: set[Any] = set()
    for group, rows in replayed():
        taken = rows.rows[spec.replay_rows]
        for row in taken:
            assert set(row) == columns, (spec.name, group, sorted(set(row) ^ columns))
            kinds.add(row["group_type"])
        keys = Counter(tuple(row.get(k, group) for k in spec.key if k != "cluster_name") for row in taken)
        assert [key for key, n in keys.items() if n > 1] == [], (spec.name, group)
    assert kinds == group_types, spec.name  # the scenarios hold groups of every protocol
