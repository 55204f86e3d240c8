"""pipelines/spark_jobs.py: independent Spark actions from driver threads, results in order, failures raised; a
small increment's work on interpreted expressions, the session's confs restored after."""

from __future__ import annotations

import threading

import pytest

from pipelines.spark_jobs import INTERPRETED_CONF, interpreted_expressions, run_together

pytestmark = pytest.mark.spark


def test_the_actions_run_at_the_same_time_and_their_results_come_back_in_the_order_given(spark) -> None:  # type: ignore[no-untyped-def]
    # Each action waits for the other at a barrier: one after the other, the first would time out.
    both = threading.Barrier(2, timeout=20)

    def count(n: int) -> int:
        both.wait()
        return spark.range(n).count()

    assert run_together(spark, [lambda: count(3), lambda: count(5)], workers=2) == [3, 5]


def test_a_job_from_a_worker_thread_keeps_the_callers_job_description(spark) -> None:  # type: ignore[no-untyped-def]
    context = spark.sparkContext
    context.setLocalProperty("spark.job.description", "gold refresh of test")
    try:
        seen = run_together(spark, [lambda: context.getLocalProperty("spark.job.description")] * 2, workers=2)
    finally:
        context.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]
    assert seen == ["gold refresh of test"] * 2


def test_one_worker_runs_every_action_in_the_callers_thread(spark) -> None:  # type: ignore[no-untyped-def]
    threads = run_together(spark, [lambda: threading.current_thread()] * 3, workers=1)
    assert threads == [threading.current_thread()] * 3


def test_every_action_runs_to_its_end_and_the_first_failure_in_order_is_raised(spark) -> None:  # type: ignore[no-untyped-def]
    finished: list[str] = []

    def fails(name: str) -> None:
        finished.append(name)
        raise RuntimeError(f"{name} failed")

    def succeeds(name: str) -> str:
        finished.append(name)
        return name

    with pytest.raises(RuntimeError, match="^first failed$"):
        run_together(spark, [lambda: succeeds("a"), lambda: fails("first"), lambda: fails("second"),
                      lambda: succeeds("b")], workers=2)
    assert sorted(finished) == ["a", "b", "first", "second"]


@pytest.fixture
def generated_code_session(spark):  # type: ignore[no-untyped-def]
    """The session on Spark's defaults for these two confs (the suite otherwise runs interpreted), restored after."""
    before = {key: spark.conf.get(key, None) for key in INTERPRETED_CONF}
    spark.conf.unset("spark.sql.codegen.factoryMode")
    spark.conf.set("spark.sql.codegen.wholeStage", "true")
    yield spark
    for key, value in before.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def test_within_the_block_the_session_runs_interpreted_and_after_it_as_before(generated_code_session) -> None:  # type: ignore[no-untyped-def]
    spark = generated_code_session
    default_mode = spark.conf.get("spark.sql.codegen.factoryMode")
    with interpreted_expressions(spark, True):
        inside = {key: spark.conf.get(key) for key in INTERPRETED_CONF}
        plan = spark.range(5).selectExpr("id * 2 AS x")._jdf.queryExecution().executedPlan().toString()
        assert sorted(row["x"] for row in spark.range(5).selectExpr("id * 2 AS x").collect()) == [0, 2, 4, 6, 8]
    assert inside == {"spark.sql.codegen.factoryMode": "NO_CODEGEN", "spark.sql.codegen.wholeStage": "false"}
    assert not any(line.lstrip(":- +").startswith("*(") for line in plan.splitlines()), plan  # no generated stage
    assert spark.conf.get("spark.sql.codegen.factoryMode") == default_mode
    assert spark.conf.get("spark.sql.codegen.wholeStage") == "true"


def test_the_confs_are_restored_when_the_block_fails(generated_code_session) -> None:  # type: ignore[no-untyped-def]
    spark = generated_code_session
    with pytest.raises(RuntimeError), interpreted_expressions(spark, True):
        raise RuntimeError("a refresh failed")
    assert spark.conf.get("spark.sql.codegen.wholeStage") == "true"


def test_a_large_increment_leaves_the_session_on_generated_code(generated_code_session) -> None:  # type: ignore[no-untyped-def]
    spark = generated_code_session
    with interpreted_expressions(spark, False):
        assert spark.conf.get("spark.sql.codegen.wholeStage") == "true"
