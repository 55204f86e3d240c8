"""How a gold refresh runs its Spark work: independent actions side by side from driver threads
(``run_together``), and a small increment on interpreted expressions (``interpreted_expressions``).

Why side by side: on small increments a gold refresh is driver-bound, not executor-bound. Each Delta write
analyses and optimises its plan, reconstructs the table's snapshot, collects statistics and commits,
each step single-threaded on the driver, while its few tasks finish in milliseconds; written one
after the other, the five group tables of a refresh kept one core busy and the other mostly idle.
Spark schedules jobs submitted from several threads concurrently (its scheduler is thread-safe,
https://spark.apache.org/docs/latest/job-scheduling.html#scheduling-within-an-application), and
each table is its own Delta log, so writes to different tables do not conflict. Measured on the
five group tables of a small warehouse (tests/pipelines/test_maintenance.py's records, local[2],
2026-11-26, load ~1.5-2.5, three runs each): an incremental refresh 10.5-11.2 s one after the
other, 8.9-9.8 s four at a time; a first (full) refresh 10.8-11.8 s against 9.4-10.7 s.

The threads are PySpark's inheritable ones (``inheritable_thread_target``): a job keeps the
caller's local properties (job group, description, scheduler pool) and the session's job tags.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

T = TypeVar("T")


def run_together(spark: SparkSession, actions: Sequence[Callable[[], T]], workers: int) -> list[T]:
    """Each action's result, in the order given; at most ``workers`` run at a time (1: in this thread).

    Every action runs to its end even when another fails; then the first failure (in the order
    given) is raised, as a loop over the actions would have raised it.
    """
    if workers <= 1 or len(actions) <= 1:
        return [action() for action in actions]
    from pyspark.util import inheritable_thread_target

    with ThreadPoolExecutor(max_workers=min(workers, len(actions)), thread_name_prefix="offsetlake-job") as pool:
        futures = [pool.submit(inheritable_thread_target(spark)(action)) for action in actions]
    return [future.result() for future in futures]


#: The session confs ``interpreted_expressions`` sets: Spark's interpreted projections and predicates
#: (CodeGeneratorWithInterpretedFallback's NO_CODEGEN) and no whole-stage code generation.
INTERPRETED_CONF = {"spark.sql.codegen.factoryMode": "NO_CODEGEN", "spark.sql.codegen.wholeStage": "false"}


@contextmanager
def interpreted_expressions(spark: SparkSession, interpreted: bool) -> Iterator[None]:
    """Within the block, the session runs on Spark's interpreted expressions when ``interpreted``; restored after.

    Why: a gold refresh of a small increment is ~150 Spark jobs over a few thousand rows, and Spark
    generates Java source for each new plan (whole-stage code, projections in every task: Delta's
    writes, statistics and log replay) and compiles it with Janino, work that only pays off on volume.
    A Java Flight Recorder profile of the incremental refresh of bench/gold.py at 200,000 commits
    (+2,050, 2026-11-28 03:57) found Janino in a fifth of the JVM's samples and code generation in a
    third of the task threads'. The same refresh, interpreted: 15.0 s against 18.3-21.3 s (03:42-04:00,
    load 2.2-3.8, one run each way at a time). Spark's two paths give the same results (its suites run
    both; offsetlake's tests run interpreted throughout, tests/spark_conf.py). Full rebuilds keep
    generated code.

    The confs are the session's: a job another thread starts meanwhile on the same session runs the
    same way (same results; only its speed differs). Set and restored on this session only.
    """
    if not interpreted:
        yield
        return
    before = {key: spark.conf.get(key, None) for key in INTERPRETED_CONF}
    for key, value in INTERPRETED_CONF.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
