"""offsets_ingest, run end to end with dag.test(): real groups' commits reach silver, gold and consumer lag.

The ``ingested`` fixture (conftest.py, tests/dags/dag_run.py) lets a classic group (two members, range) and a KIP-848
group each read all 60 messages of a 3-partition topic and commit, takes one end-offset snapshot,
then runs the DAG: one task, ``offsetlake run --once`` (ingest, gold, lag in one JVM) as a CLI
subprocess. Expected values come from the workload: messages go round-robin, so each partition
holds 20 and both groups end committed at offset 20 on every partition, with nothing left to read.

Marked ``long`` (``make test-long``, which CI runs) since 2026-11-28: the DAG's run is a process of its own with a
CLI JVM (72 s of the suite's background work in the 23:57 run), and test-long builds it anyway for the
data_quality DAG's tests (tests/dags/test_data_quality.py), so these four assertions cost it nothing more.
"""

from __future__ import annotations

import warnings

import pytest

from pipelines.delta_tables import read_table
from pipelines.gold import committed_offsets, consumer_lag, group_generations
from schemas import offset_commits

pytestmark = [pytest.mark.broker, pytest.mark.spark, pytest.mark.long]

PER_PARTITION = {0: 20, 1: 20, 2: 20}  # 60 messages round-robin over 3 partitions


def test_the_run_and_every_task_succeed(ingested) -> None:  # type: ignore[no-untyped-def]
    result = ingested["result"]
    tries = "\n".join(result.log).split("\nrunning ")
    errors = [line for line in tries[0].splitlines() if ("Error" in line or "Exception" in line)
              and not line.startswith(" ")][:40]
    first_try = (f"{len(tries)} tries; the first's errors:\n" + "\n".join(errors)
                 + f"\nand the end of its output:\n{tries[0][-4000:]}")
    assert result.state == "success", first_try
    assert [state for state, _ in result.tasks.values()] == ["success"], first_try
    assert any(line.startswith("running ") and " run --once --topic __consumer_offsets" in line for line in result.log)
    # Known and not understood (2026-11-27): in 2 of the 11 runs of the suite of 2026-11-26/27 that show it, the
    # first try's CLI JVM went away during the gold refresh ("Answer from Java side is empty") and the retry a
    # minute later passed. The DAG's retries exist for such failures, so the run still passes; the first try's output is
    # reported in the warnings summary, to be read when it happens again.
    if [tries for _, tries in result.tasks.values()] != [1]:
        warnings.warn(f"offsets_ingest needed a retry: {first_try}", stacklevel=1)


def test_both_groups_commits_are_in_silver(spark, ingested) -> None:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    settings, topic = ingested["settings"], ingested["topic"]
    commits = read_table(spark, settings, offset_commits.TABLE).where(F.col("topic") == topic)
    for run in (ingested["classic"], ingested["modern"]):
        assert run.committed == PER_PARTITION  # what the workload itself committed last
        rows = commits.where(F.col("group") == run.group_id).groupBy("partition").agg(F.max("offset")).collect()
        assert dict(rows) == PER_PARTITION, run.group_id


def test_gold_holds_each_groups_latest_offsets_and_the_classic_groups_generations(spark, ingested) -> None:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    settings, topic = ingested["settings"], ingested["topic"]
    latest = read_table(spark, settings, committed_offsets.TABLE).where(F.col("topic") == topic)
    for run in (ingested["classic"], ingested["modern"]):
        rows = latest.where(F.col("group") == run.group_id).select("partition", "offset").collect()
        assert dict(rows) == PER_PARTITION, run.group_id
    classic = ingested["classic"].group_id
    generations = read_table(spark, settings, group_generations.TABLE).where(F.col("group") == classic).collect()
    assert generations, "the classic group's generations are in gold"
    # Two members joined with the range assignor; the group ends Empty after both close().
    assert {row["protocol"] for row in generations if row["member_count"]} == {"range"}
    assert max(row["member_count"] for row in generations) == 2


def test_the_lag_task_joined_the_snapshot_with_the_commits(spark, ingested) -> None:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    settings, topic = ingested["settings"], ingested["topic"]
    lag = read_table(spark, settings, consumer_lag.TABLE).where(F.col("topic") == topic)
    for run in (ingested["classic"], ingested["modern"]):
        rows = lag.where(F.col("group") == run.group_id).collect()
        # The snapshot was taken after both groups had read and committed everything: no lag.
        assert {r["partition"]: (r["committed_offset"], r["latest_offset"], r["lag"]) for r in rows} == {
            p: (n, n, 0) for p, n in PER_PARTITION.items()}, run.group_id
