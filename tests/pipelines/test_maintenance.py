"""Delta maintenance: OPTIMIZE compacts, VACUUM deletes what left the tables, and gold stays incremental.

The warehouse (tests/pipelines/maintained_warehouse.py, built in the background): one classic group's
hand-encoded records in three micro-batches on two fixed days, gold refreshed after the first two, maintained
twice: first with Delta's default 168-hour retention, which must delete nothing that was just compacted away,
then with 0 hours (explicitly allowed), which must leave only the live files. Then the group commits more and
rebalances, and the incremental gold refresh must still equal a full rebuild from silver.
"""

from __future__ import annotations

import pytest

from conf.settings import ConfigError, MaintenanceSettings, load_settings
from pipelines.maintenance import MaintenanceError, data_files_on_disk, retention_hours
from tests.pipelines.maintained_warehouse import SAMPLE

pytestmark = [pytest.mark.broker, pytest.mark.spark]


@pytest.fixture(scope="module")
def maintained(maintained_warehouse):  # type: ignore[no-untyped-def]
    return maintained_warehouse


def test_every_existing_table_is_maintained(maintained) -> None:  # type: ignore[no-untyped-def]
    names = {spec.name for spec in maintained["existing"]}
    # The ingest writes bronze and silver, the refresh writes gold and its state: all exist here.
    assert {"bronze.offsets_topic_records", "silver.offset_commits", "silver.group_metadata",
            "gold.committed_offsets", "gold.group_generations"} <= names
    assert set(maintained["kept"]) == set(SAMPLE)
    assert set(maintained["vacuumed"]) == names


def test_optimize_leaves_one_file_per_partition_and_the_same_rows(maintained) -> None:  # type: ignore[no-untyped-def]
    for spec in maintained["existing"]:
        if spec.name not in SAMPLE:
            continue
        result = maintained["kept"][spec.name]
        partitions = maintained["partitions"][spec.name]  # when OPTIMIZE ran
        assert result.live_files_after == min(result.live_files_before, partitions), spec.name
        assert maintained["after_optimize"][spec.name] == maintained["before"][spec.name], spec.name
    # Two batches wrote silver.offset_commits twice, on two days: two files a day at most before, one
    # per day after. Two refreshes rewrote the group's generations: there was something to compact.
    assert maintained["kept"]["silver.offset_commits"].live_files_before >= 3
    assert maintained["partitions"]["silver.offset_commits"] == 2
    assert maintained["kept"]["silver.offset_commits"].live_files_after == 2
    assert maintained["kept"]["gold.group_generations"].live_files_before >= 1


def test_default_retention_deletes_none_of_the_files_just_compacted_away(maintained) -> None:  # type: ignore[no-untyped-def]
    for name, result in maintained["kept"].items():
        assert result.files_on_disk_after == result.files_on_disk_before, name
    commits = maintained["kept"]["silver.offset_commits"]
    # OPTIMIZE replaced at least two small files by fewer; the ones it replaced are still on disk.
    assert commits.live_files_after < commits.live_files_before
    assert commits.files_on_disk_after - commits.live_files_after >= 2


def test_zero_retention_leaves_only_the_live_files(maintained) -> None:  # type: ignore[no-untyped-def]
    for name, result in maintained["vacuumed"].items():
        assert result.files_on_disk_after == result.live_files_after, name
    assert maintained["vacuumed"]["silver.offset_commits"].vacuumed >= 2


def test_optimize_commits_are_not_new_silver_data_for_the_gold_refresh(maintained) -> None:  # type: ignore[no-untyped-def]
    # New silver versions (OPTIMIZE, VACUUM START/END), but no rows for gold's query and no rebuild.
    assert maintained["written_after_maintenance"] == ()


def test_gold_refreshed_after_maintenance_equals_a_full_rebuild(maintained) -> None:  # type: ignore[no-untyped-def]
    gold, full = maintained["gold"], maintained["full"]
    assert set(gold) == set(full)
    for name in gold:
        assert gold[name] == full[name], name
    group = maintained["group"]
    # The three batches' generations are in gold, the last one written after maintenance.
    generations = [row for row in gold["gold.group_generations"] if f"'group', '{group}'" in row]
    assert len(generations) == 3


def test_files_on_disk_skip_the_delta_log(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pipelines.storage import Storage

    (tmp_path / "_delta_log").mkdir()
    (tmp_path / "_delta_log" / "00000000000000000010.checkpoint.parquet").write_bytes(b"")
    (tmp_path / "commit_date=2026-11-22").mkdir()
    (tmp_path / "commit_date=2026-11-22" / "part-0.snappy.parquet").write_bytes(b"")
    (tmp_path / "part-1.snappy.parquet").write_bytes(b"")
    (tmp_path / "part-1.snappy.parquet.crc").write_bytes(b"")
    assert data_files_on_disk(Storage(spark), str(tmp_path)) == 2
    assert data_files_on_disk(Storage(spark), f"file://{tmp_path}") == 2
    assert data_files_on_disk(Storage(spark), str(tmp_path / "missing")) == 0


def test_retention_below_168_hours_is_refused_unless_explicitly_allowed(base_settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "offsetlake.toml"
    config.write_text('warehouse = "/tmp/warehouse"\n', encoding="utf-8")
    env = {"OFFSETLAKE_MAINTENANCE__VACUUM_RETENTION_HOURS": "24"}
    with pytest.raises(ConfigError, match="maintenance.vacuum_retention_hours = 24 .from env .*at least 168 hours"):
        load_settings(config, environ=env)
    allowed = load_settings(config, environ={**env, "OFFSETLAKE_MAINTENANCE__ALLOW_SHORT_RETENTION": "true"})
    assert allowed.maintenance == MaintenanceSettings(vacuum_retention_hours=24, allow_short_retention=True)
    assert retention_hours(allowed) == 24
    assert retention_hours(base_settings) == 168
    # Built in code without the model's checks (model_construct): the pipeline checks the retention itself.
    unchecked = MaintenanceSettings.model_construct(vacuum_retention_hours=1)
    built_in_code = base_settings.model_copy(update={"maintenance": unchecked})
    with pytest.raises(MaintenanceError, match="below Delta's 168-hour safety check"):
        retention_hours(built_in_code)


def test_maintain_refuses_a_short_retention_with_one_line(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from cli.main import main

    config = tmp_path / "offsetlake.toml"
    config.write_text(f'warehouse = "{tmp_path / "warehouse"}"\n[maintenance]\nvacuum_retention_hours = 0\n',
                      encoding="utf-8")
    assert main(["--config", str(config), "maintain"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("offsetlake: config error: setting maintenance.vacuum_retention_hours = 0 (from ")
    assert "\n" not in err
