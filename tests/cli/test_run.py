"""offsetlake run: argument errors are one line (``--once`` is run by the offsets_ingest DAG's test, the continuous
form by tests/pipelines/test_ingest.py's kill test)."""

from __future__ import annotations

from cli.main import main


def test_a_negative_snapshot_interval_is_refused_before_spark_starts(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["run", "--snapshot-every", "-1"]) == 2
    assert capsys.readouterr().err.strip() == (
        "offsetlake run: error: argument --snapshot-every: '-1' is not a number of seconds >= 0 (0: no snapshots); "
        "see 'offsetlake run --help'")


def test_a_cap_below_one_record_per_batch_is_refused_before_spark_starts(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["run", "--once", "--max-offsets-per-trigger", "0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "offsetlake run: error: argument --max-offsets-per-trigger: '0' is not a whole number >= 1; "
        "see 'offsetlake run --help'")
