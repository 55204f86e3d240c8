"""gold.validation_diffs: where gold disagrees with the reference coordinator (``offsetlake validate``)."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.table_spec import TableSpec, column

TABLE = TableSpec(
    name="gold.validation_diffs",
    description=(
        "One row per difference `offsetlake validate` found between a gold table and the reference "
        "coordinator's expected timeline for a scenario. A validation run without differences writes no row."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster whose gold tables were validated", False),
        column("scenario", T.StringType(), "scenario name (file stem under conf/scenarios/)", False),
        column("table", T.StringType(), "gold table compared, e.g. gold.committed_offsets", False),
        column("key", T.StringType(), "the row's key, as 'column=value' pairs joined by ', '", False),
        column("field", T.StringType(),
               "column that differs; '(row)' when the whole row is missing from gold or not expected", False),
        column("expected", T.StringType(), "expected value (JSON; timestamps as epoch ms); null if not expected"),
        column("actual", T.StringType(), "value in gold (JSON; timestamps as epoch ms); null if missing"),
        column("run_id", T.StringType(), "id of the validation run", False),
        column("validated_at", T.TimestampType(), "when the validation run compared the tables", False),
    ]),
    partition_by=(),
    key=("cluster_name", "run_id", "scenario", "table", "key", "field"),
)
