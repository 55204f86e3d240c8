"""pipelines/spark_jobs.py: independent Spark actions from driver threads, results in order, failures raised."""

from __future__ import annotations

import threading

import pytest

from pipelines.spark_jobs import run_together

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
