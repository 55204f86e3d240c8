"""audit.data_quality_results: one row per expectation per ``offsetlake check`` run."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.table_spec import TableSpec, column

STATUSES = ("passed", "failed", "skipped", "error")

TABLE = TableSpec(
    name="audit.data_quality_results",
    description=(
        "Results of the data-quality suites in quality/ (Great Expectations), one row per expectation per run; "
        "expectations of tables that did not exist yet are recorded as skipped."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster whose warehouse was checked", False),
        column("run_id", T.StringType(), "id of the check run", False),
        column("run_at", T.TimestampType(), "when the run started (UTC)", False),
        column("suite", T.StringType(), "suite, named after its module in quality/ (e.g. offset_commits)", False),
        column("table", T.StringType(), "table the expectation ran on, e.g. silver.offset_commits", False),
        column("expectation", T.StringType(), "the expectation's name within its suite", False),
        column("expectation_type", T.StringType(), "Great Expectations type, e.g. unexpected_rows_expectation"),
        column("severity", T.StringType(), "critical (fails the run) or warning", False),
        column("status", T.StringType(), f"{' | '.join(STATUSES)}", False),
        column("success", T.BooleanType(), "the expectation held; null when skipped or it raised"),
        column("observed_value", T.StringType(), "what GX observed (JSON), e.g. the number of unexpected rows"),
        column("unexpected_count", T.LongType(), "unexpected rows or values, when GX reports a count"),
        column("unexpected_sample", T.StringType(),
               "JSON array of at most quality.sample_rows unexpected rows (or values)"),
        column("details", T.StringType(), "why it was skipped, the exception, or the expectation's reason"),
    ]),
    key=("cluster_name", "run_id", "suite", "table", "expectation"),
)
