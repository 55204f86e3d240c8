"""pipelines/silver.py: silver derived again from bronze is the silver the ingest wrote (issue 14, item 1).

On the shared scenario warehouse (tests/pipelines/scenario_warehouse.py): every scenario's records went
through two ingests, so each table's rows came from two micro-batches; derived again, they come from one
decode of everything bronze holds.
"""

from __future__ import annotations

import pytest

from pipelines.delta_tables import read_table
from pipelines.gold.refresh import row_differences
from pipelines.silver import TABLES
from schemas import quarantine

pytestmark = [pytest.mark.broker, pytest.mark.spark]


@pytest.mark.parametrize("spec", [spec for spec, _ in TABLES], ids=lambda spec: spec.name)
def test_each_silver_table_derived_again_from_bronze_has_exactly_the_rows_the_ingest_wrote(  # type: ignore[no-untyped-def]
        spark, scenario_warehouse, scenario_silver_from_bronze, spec) -> None:
    written = read_table(spark, scenario_warehouse["settings"], spec)
    columns = [name for name in spec.schema.fieldNames() if name != "ingested_at"]  # when it was written
    assert row_differences(written, scenario_silver_from_bronze[spec.name], columns) == (0, 0)
    if spec is not quarantine.TABLE:  # the scenarios' records all decode
        assert written.count() > 0
