"""offsetlake run: argument errors are one usage line (the run itself is tested by the offsets_ingest DAG)."""

from __future__ import annotations

import pytest

from cli.main import main


def test_run_without_once_is_a_usage_error_naming_the_flag(capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exit_:
        main(["run"])
    assert exit_.value.code == 2
    assert "the following arguments are required: --once" in capsys.readouterr().err


def test_a_cap_below_one_record_per_batch_is_refused_before_spark_starts(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["run", "--once", "--max-offsets-per-trigger", "0"]) == 2
    assert capsys.readouterr().err.strip() == "offsetlake: --max-offsets-per-trigger must be >= 1"
