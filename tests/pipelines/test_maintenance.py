"""Delta maintenance: OPTIMIZE compacts, VACUUM deletes what left the tables, and gold stays incremental.

One small, deterministic warehouse (hand-encoded ``__consumer_offsets`` records of one classic
group, written through the ingest's own batch writer in three micro-batches, with record times
on two fixed days, so ``silver.offset_commits`` has two ``commit_date`` partitions whatever the
clock says; gold refreshed after the first two) is maintained twice: first with Delta's
default 168-hour retention, which must delete nothing that was just compacted away, then with 0
hours (explicitly allowed), which must leave only the live files. Then the group commits more and
rebalances, and the incremental gold refresh must still equal a full rebuild from silver. No broker
traffic: the batches are built by hand, so the test depends neither on other tests' groups nor on
the time of day.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from conf.settings import ConfigError, MaintenanceSettings, load_settings
from decoders import encode_record
from pipelines.delta_tables import read_table
from pipelines.gold.refresh import GOLD, full_rebuild, latest_version, refresh_gold, silver_changes
from pipelines.ingest import ensure_tables, write_batch
from pipelines.maintenance import MaintenanceError, data_files_on_disk, maintain, maintained_tables, retention_hours
from schemas import group_metadata, offset_commits

pytestmark = [pytest.mark.broker, pytest.mark.spark]
SAMPLE = ("silver.offset_commits", "silver.group_metadata", "gold.committed_offsets", "gold.group_generations")
RAW_SCHEMA = "key binary, value binary, topic string, partition int, offset long, timestamp timestamp"
GROUP, TOPIC = "maint-group", "maint-orders"
DAY_1 = dt.datetime(2026, 11, 20, 23, 58)  # commits of the first batch straddle midnight UTC
DAY_2 = dt.datetime(2026, 11, 21, 0, 1)


def _ms(moment: dt.datetime) -> int:
    return int(moment.replace(tzinfo=dt.UTC).timestamp() * 1000)


Record = tuple[bytes, bytes | None, dt.datetime]  # key, value, append time (silver's commit_date is its UTC date)


def _generation(generation: int, at: dt.datetime, members: list[str]) -> list[Record]:
    """A Stable generation of the range assignor: partitions split in order between ``members``."""
    share = [[p for p in range(2) if p % len(members) == i] for i in range(len(members))]
    return [(*encode_record("group_metadata", {"group": GROUP}, {
        "protocol_type": "consumer", "generation": generation, "protocol": "range", "leader": members[0],
        "current_state_timestamp": _ms(at),
        "members": [{"member_id": m, "group_instance_id": None, "client_id": m.split("-")[0],
                     "client_host": "/127.0.0.1", "rebalance_timeout": 300000, "session_timeout": 45000,
                     "subscription": {"topics": [TOPIC], "user_data": None, "owned_partitions": []},
                     "assignment": {"partitions": [{"topic": TOPIC, "partitions": mine}], "user_data": None}}
                    for m, mine in zip(members, share, strict=True)]}, 3), at)]


def _commits(at: dt.datetime, offset: int) -> list[Record]:
    return [(*encode_record("offset_commit", {"group": GROUP, "topic": TOPIC, "partition": p},
                            {"offset": offset + p, "metadata": "", "commit_timestamp": _ms(at) + p}, 3), at)
            for p in range(2)]


# Three micro-batches: two before maintenance, one after (more commits and a rebalance).
BATCHES = [
    [*_generation(1, DAY_1, ["c1-a", "c2-b"]), *_commits(DAY_1, 10), *_commits(DAY_2, 20)],
    [*_generation(2, DAY_2 + dt.timedelta(minutes=1), ["c1-a"]), *_commits(DAY_2 + dt.timedelta(minutes=2), 30)],
    [*_generation(3, DAY_2 + dt.timedelta(minutes=5), ["c1-a", "c3-c"]),
     *_commits(DAY_2 + dt.timedelta(minutes=6), 40)],
]


def _rows(frame) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(repr(sorted(row.asDict(recursive=True).items())) for row in frame.collect())


@pytest.fixture(scope="module")
def maintained(spark, kafka_broker, base_settings, tmp_path_factory):  # type: ignore[no-untyped-def]
    from conf.settings import KafkaSettings

    settings = dataclasses.replace(
        base_settings, warehouse=str(tmp_path_factory.mktemp("maintenance") / "warehouse"),
        kafka=KafkaSettings(bootstrap_servers=kafka_broker.bootstrap_servers))
    ensure_tables(spark, settings)
    written = 0

    def batch(batch_id: int) -> None:
        nonlocal written
        records = BATCHES[batch_id]
        raw = spark.createDataFrame(
            [(k, v, "__consumer_offsets", 0, written + i, at) for i, (k, v, at) in enumerate(records)], RAW_SCHEMA)
        written += len(records)
        write_batch(spark, settings, "__consumer_offsets", raw, batch_id)

    batch(0)
    batch(1)
    # Gold is refreshed before maintenance, as the maintenance DAG does: a short-retention VACUUM may
    # delete silver files that a lagging refresh still reads by path (pipelines/maintenance.py).
    refresh_gold(spark, settings)
    existing = [spec for spec in maintained_tables() if latest_version(settings, spec) is not None]
    silver_versions = {spec.name: latest_version(settings, spec) for spec in (offset_commits.TABLE,
                                                                              group_metadata.TABLE)}
    # Default retention (168 h) on a few tables that have something to compact and something replaced.
    sample = [spec for spec in existing if spec.name in SAMPLE]
    before = {spec.name: _rows(read_table(spark, settings, spec)) for spec in sample}
    partitions = {spec.name: read_table(spark, settings, spec).select(*spec.partition_by).distinct().count()
                  if spec.partition_by else 1 for spec in sample}
    kept = maintain(spark, settings, sample)
    after_optimize = {spec.name: _rows(read_table(spark, settings, spec)) for spec in sample}
    # Then the whole warehouse with no retention at all (explicitly allowed).
    short = dataclasses.replace(settings, maintenance=MaintenanceSettings(vacuum_retention_hours=0,
                                                                          allow_short_retention=True))
    vacuumed = maintain(spark, short)
    changes_after_maintenance = {name: silver_changes(spark, settings, spec, silver_versions[name])
                                 for name, spec in ((offset_commits.TABLE.name, offset_commits.TABLE),
                                                    (group_metadata.TABLE.name, group_metadata.TABLE))}
    batch(2)  # more commits and a rebalance of the same group after maintenance
    refresh_gold(spark, settings)  # incremental: reads batch 2 past the OPTIMIZE and VACUUM commits
    return {
        "settings": settings, "group": GROUP, "existing": existing, "before": before,
        "after_optimize": after_optimize, "partitions": partitions, "kept": {r.table: r for r in kept},
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
    for name, change in maintained["changes"].items():
        # New versions (OPTIMIZE, VACUUM START/END) but no rows and no fallback to a full rebuild.
        assert change is not None and change.rows is None and not change.full, name


def test_gold_refreshed_after_maintenance_equals_a_full_rebuild(maintained) -> None:  # type: ignore[no-untyped-def]
    gold, full = maintained["gold"], maintained["full"]
    assert set(gold) == set(full)
    for name in gold:
        assert gold[name] == full[name], name
    group = maintained["group"]
    # The three batches' generations are in gold, the last one written after maintenance.
    generations = [row for row in gold["gold.group_generations"] if f"'group', '{group}'" in row]
    assert len(generations) == 3


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
