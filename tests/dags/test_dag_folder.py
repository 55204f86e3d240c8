"""The DAG folder parses without errors into the five offsetlake DAGs, with the schedules and params we mean.

Parsing needs no database and no broker: this is what the dag-processor does with ``dags/``.
"""

from __future__ import annotations

import pytest
from offsetlake_commands import GOLD_ASSET, report_failure

EXPECTED = {
    # dag_id: (cron schedule or None for asset-scheduled, task ids in order, extra params)
    "offsets_ingest": ("*/5 * * * *", ["run"], {"topic"}),
    "end_offsets_snapshot": ("* * * * *", ["snapshot"], {"topics"}),
    "data_quality": (None, ["check"], {"tables"}),
    "reference_validation": ("0 2 * * *", ["validate"], {"scenarios_dir", "scratch_warehouse", "topic_prefix"}),
    "delta_maintenance": ("30 3 * * *", ["gold", "maintain"], set()),
}


def test_the_dag_folder_imports_without_errors(dag_bag) -> None:  # type: ignore[no-untyped-def]
    assert dag_bag.import_errors == {}
    assert sorted(dag_bag.dag_ids) == sorted(EXPECTED)


@pytest.mark.parametrize("dag_id", sorted(EXPECTED))
def test_each_dag_has_its_schedule_tasks_and_params(dag_bag, dag_id) -> None:  # type: ignore[no-untyped-def]
    schedule, tasks, extra_params = EXPECTED[dag_id]
    dag = dag_bag.dags[dag_id]
    if schedule is not None:
        assert dag.timetable.expression == schedule
    assert [task.task_id for task in dag.topological_sort()] == tasks
    assert set(dag.params.keys()) == {"offsetlake_bin", "config", *extra_params}
    assert dag.catchup is False
    assert dag.max_active_runs == 1  # runs never overlap: one ingest writer, one maintenance at a time
    assert all(task.on_failure_callback == [report_failure] or task.on_failure_callback == report_failure
               for task in dag.tasks)


def test_ingest_retries_with_a_delay_and_a_snapshot_does_not(dag_bag) -> None:  # type: ignore[no-untyped-def]
    ingest = dag_bag.dags["offsets_ingest"]
    assert {task.retries for task in ingest.tasks} == {2}
    assert {task.retry_delay.total_seconds() for task in ingest.tasks} == {60.0}
    assert dag_bag.dags["end_offsets_snapshot"].get_task("snapshot").retries == 0


def test_data_quality_runs_on_the_asset_the_ingest_updates_last(dag_bag) -> None:  # type: ignore[no-untyped-def]
    ingest = dag_bag.dags["offsets_ingest"]
    assert ingest.get_task("run").outlets == [GOLD_ASSET]
    assert [task.task_id for task in ingest.tasks if task.outlets] == ["run"]
    assert list(dag_bag.dags["data_quality"].timetable.asset_condition.objects) == [GOLD_ASSET]


def test_param_defaults_come_from_the_environment_when_the_dags_are_parsed(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from offsetlake_commands import common_params

    monkeypatch.setenv("OFFSETLAKE_BIN", "/opt/offsetlake/bin/offsetlake")
    monkeypatch.setenv("OFFSETLAKE_CONFIG", "/etc/offsetlake/prod.toml")
    params = common_params()
    assert params["offsetlake_bin"].value == "/opt/offsetlake/bin/offsetlake"
    assert params["config"].value == "/etc/offsetlake/prod.toml"
    monkeypatch.delenv("OFFSETLAKE_BIN")
    monkeypatch.delenv("OFFSETLAKE_CONFIG")
    params = common_params()
    assert params["offsetlake_bin"].value == "offsetlake"
    assert params["config"].value == ""
