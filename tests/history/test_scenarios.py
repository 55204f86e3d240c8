"""Every reference coordinator scenario (``conf/scenarios/``) through the replay, without Spark: its records, as the
coordinator appended them, replayed group by group give the rows ``offsetlake validate`` expects of gold (its
expected rows and its comparison rules, ``pipelines/validation.py``, derived from the coordinator's own timeline).

``tests/pipelines/test_validate.py`` checks the same through the whole pipeline (ingest, silver, Spark); this one
catches a drift of the replay in ``make test-fast``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coordinator import simulate
from history.group import StormRule, group_rows
from pipelines.gold.refresh import GROUP_TABLES
from pipelines.validation import TABLES, compare_table, scenario_name
from tests.history.scenario_records import group_inputs

SCENARIOS = sorted((Path(__file__).resolve().parents[2] / "conf" / "scenarios").glob("*.yaml"))
BY_NAME = {spec.name: spec for spec in GROUP_TABLES}


def _kept(table: str, where: str, row: dict) -> bool:  # type: ignore[type-arg]
    """``Compared.where`` of the group tables, in Python: classic or KIP-848 rows, rebalances without restarts."""
    kind = "consumer" if "'consumer'" in where else "classic"
    return row["group_type"] == kind and ("event_type" not in where or row["event_type"] == "rebalance")


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_the_replay_of_a_scenarios_records_gives_the_rows_validate_expects(path: Path) -> None:
    result = simulate(str(path), kafka_version="4.2")
    rows: dict[str, list[dict]] = {name: [] for name in BY_NAME}  # type: ignore[type-arg]
    for group, found in group_inputs(result.records).items():
        replayed = group_rows(found.classic_records, found.commits, found.consumer_records, StormRule())
        for name, spec in BY_NAME.items():
            rows[name] += [{**row, "group": group} for row in replayed.rows[spec.replay_rows]]
    diffs = []
    for compared in TABLES:
        if compared.spec.name not in BY_NAME:
            continue  # gold.committed_offsets: not the replay's
        actual = [row for row in rows[compared.spec.name] if _kept(compared.spec.name, compared.where, row)]
        diffs += compare_table(scenario_name(path), compared.spec.name, compared.key, compared.expected(result),
                               actual)
    assert diffs == []
