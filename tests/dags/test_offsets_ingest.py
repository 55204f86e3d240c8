"""offsets_ingest, run end to end with dag.test(): real groups' commits reach silver, gold and consumer lag.

The ``ingested`` fixture (conftest.py) lets a classic group (two members, range) and a KIP-848
group each read all 60 messages of a 3-partition topic and commit, takes one end-offset snapshot,
then runs the DAG: one task, ``offsetlake run --once`` (ingest, gold, lag in one JVM) as a CLI
subprocess. Expected values come from the workload: messages go round-robin, so each partition
holds 20 and both groups end committed at offset 20 on every partition, with nothing left to read.
"""

from __future__ import annotations

import pytest

from pipelines.delta_tables import read_table
from schemas import committed_offsets, consumer_lag, group_generations, offset_commits

pytestmark = [pytest.mark.broker, pytest.mark.spark]

PER_PARTITION = {0: 20, 1: 20, 2: 20}  # 60 messages round-robin over 3 partitions


def test_the_run_and_every_task_succeed_at_the_first_try(ingested) -> None:  # type: ignore[no-untyped-def]
    assert ingested["run"].state == "success"
    # A first try that failed and a retry that passed would pass the line above; its reason is in the task's log.
    assert {task: (ti.state, ti.try_number) for task, ti in ingested["tasks"].items()} == {"run": ("success", 1)}, \
        "\n".join(ingested["log"])[-4000:]


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
