"""Delta maintenance: OPTIMIZE compacts, VACUUM deletes what left the tables, and gold stays incremental.

One warehouse with real data (a classic group on the session broker, two ingests and two gold
refreshes, so tables have several files and gold has replaced some) is maintained twice: first
with Delta's default 168-hour retention, which must delete nothing that was just compacted away,
then with 0 hours (explicitly allowed), which must leave only the live files. Then the group
commits more, and the incremental gold refresh must still equal a full rebuild from silver.
"""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from broker.workload import create_topic, produce_messages, run_members
from conf.settings import ConfigError, KafkaSettings, MaintenanceSettings, load_settings
from pipelines.delta_tables import read_table
from pipelines.gold.refresh import GOLD, full_rebuild, latest_version, refresh_gold, silver_changes
from pipelines.ingest import IngestOptions, run_ingest
from pipelines.maintenance import MaintenanceError, data_files_on_disk, maintain, maintained_tables, retention_hours
from schemas import group_metadata, offset_commits

pytestmark = [pytest.mark.broker, pytest.mark.spark]
PARTITIONS = 2
MESSAGES = 40
SAMPLE = ("silver.offset_commits", "silver.group_metadata", "gold.committed_offsets", "gold.group_generations")


def _rows(frame) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(repr(sorted(row.asDict(recursive=True).items())) for row in frame.collect())


@pytest.fixture(scope="module")
def maintained(spark, kafka_broker, base_settings, tmp_path_factory):  # type: ignore[no-untyped-def]
    settings = dataclasses.replace(
        base_settings, warehouse=str(tmp_path_factory.mktemp("maintenance") / "warehouse"),
        kafka=KafkaSettings(bootstrap_servers=kafka_broker.bootstrap_servers))
    client = settings.kafka.librdkafka_config()
    topic, group = f"maint-{uuid.uuid4().hex[:8]}", f"maint-group-{uuid.uuid4().hex[:8]}"
    create_topic(client, topic, PARTITIONS)

    def round_of_commits() -> None:
        produce_messages(client, topic, MESSAGES, PARTITIONS)
        run_members(client, topic, group, MESSAGES, members=2, assignor="range")
        run_ingest(spark, settings, IngestOptions(once=True))
        refresh_gold(spark, settings)

    round_of_commits()
    round_of_commits()
    existing = [spec for spec in maintained_tables() if latest_version(settings, spec) is not None]
    silver_versions = {spec.name: latest_version(settings, spec) for spec in (offset_commits.TABLE,
                                                                              group_metadata.TABLE)}
    # Default retention (168 h) on a few tables that have something to compact and something replaced.
    sample = [spec for spec in existing if spec.name in SAMPLE]
    before = {spec.name: _rows(read_table(spark, settings, spec)) for spec in sample}
    kept = maintain(spark, settings, sample)
    after_optimize = {spec.name: _rows(read_table(spark, settings, spec)) for spec in sample}
    # Then the whole warehouse with no retention at all (explicitly allowed).
    short = dataclasses.replace(settings, maintenance=MaintenanceSettings(vacuum_retention_hours=0,
                                                                          allow_short_retention=True))
    vacuumed = maintain(spark, short)
    changes_after_maintenance = {name: silver_changes(spark, settings, spec, silver_versions[name])
                                 for name, spec in ((offset_commits.TABLE.name, offset_commits.TABLE),
                                                    (group_metadata.TABLE.name, group_metadata.TABLE))}
    round_of_commits()  # more commits and a rebalance of the same group after maintenance
    return {
        "settings": settings, "group": group, "existing": existing, "before": before,
        "after_optimize": after_optimize, "kept": {r.table: r for r in kept},
        "vacuumed": {r.table: r for r in vacuumed}, "changes": changes_after_maintenance,
        "gold": {spec.name: _rows(read_table(spark, settings, spec)) for spec in GOLD},
        "full": {name: _rows(frame) for name, frame in full_rebuild(spark, settings).items()},
    }


def test_every_existing_table_is_maintained(maintained) -> None:  # type: ignore[no-untyped-def]
    names = {spec.name for spec in maintained["existing"]}
    # The ingest writes bronze and silver, the refresh writes gold and its state: all exist here.
    assert {"bronze.offsets_topic_records", "silver.offset_commits", "silver.group_metadata",
            "gold.committed_offsets", "gold.group_generations", "gold._refresh_state"} <= names
    assert set(maintained["kept"]) == set(SAMPLE)
    assert set(maintained["vacuumed"]) == names


def test_optimize_leaves_one_file_per_partition_and_the_same_rows(spark, maintained) -> None:  # type: ignore[no-untyped-def]
    settings = maintained["settings"]
    for spec in maintained["existing"]:
        if spec.name not in SAMPLE:
            continue
        result = maintained["kept"][spec.name]
        partitions = (read_table(spark, settings, spec).select(*spec.partition_by).distinct().count()
                      if spec.partition_by else 1)
        assert result.live_files_after == min(result.live_files_before, partitions), spec.name
        assert maintained["after_optimize"][spec.name] == maintained["before"][spec.name], spec.name
    # Two ingests wrote silver.offset_commits twice and two refreshes rewrote the group's generations:
    # there was something to compact in both.
    assert maintained["kept"]["silver.offset_commits"].live_files_before >= 2
    assert maintained["kept"]["gold.group_generations"].live_files_before >= 1


def test_default_retention_deletes_none_of_the_files_just_compacted_away(maintained) -> None:  # type: ignore[no-untyped-def]
    for name, result in maintained["kept"].items():
        assert result.files_on_disk_after == result.files_on_disk_before, name
    commits = maintained["kept"]["silver.offset_commits"]
    # The compacted-away small files are still on disk beside the new one.
    assert commits.files_on_disk_after >= commits.live_files_before + commits.live_files_after


def test_zero_retention_leaves_only_the_live_files(maintained) -> None:  # type: ignore[no-untyped-def]
    for name, result in maintained["vacuumed"].items():
        assert result.files_on_disk_after == result.live_files_after, name
    assert maintained["vacuumed"]["silver.offset_commits"].vacuumed >= 2


def test_optimize_commits_are_not_new_silver_data_for_the_gold_refresh(maintained) -> None:  # type: ignore[no-untyped-def]
    for name, change in maintained["changes"].items():
        # New versions (OPTIMIZE, VACUUM START/END) but no rows and no fallback to a full rebuild.
        assert change is not None and change.rows is None and not change.full, name


def test_gold_refreshed_after_maintenance_equals_a_full_rebuild(maintained) -> None:  # type: ignore[no-untyped-def]
    gold, full = maintained["gold"], maintained["full"]
    assert set(gold) == set(full)
    for name in gold:
        assert gold[name] == full[name], name
    group = maintained["group"]
    # Three rounds of the same group are in gold: three generations of two members at least.
    generations = [row for row in gold["gold.group_generations"] if f"'group', '{group}'" in row]
    assert len(generations) >= 3


def test_files_on_disk_skip_the_delta_log(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "_delta_log").mkdir()
    (tmp_path / "_delta_log" / "00000000000000000010.checkpoint.parquet").write_bytes(b"")
    (tmp_path / "commit_date=2026-11-22").mkdir()
    (tmp_path / "commit_date=2026-11-22" / "part-0.snappy.parquet").write_bytes(b"")
    (tmp_path / "part-1.snappy.parquet").write_bytes(b"")
    (tmp_path / "part-1.snappy.parquet.crc").write_bytes(b"")
    assert data_files_on_disk(tmp_path) == 2
    assert data_files_on_disk(tmp_path / "missing") == 0


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
    built_in_code = dataclasses.replace(base_settings, maintenance=MaintenanceSettings(vacuum_retention_hours=1))
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
