"""The small, deterministic warehouse of tests/pipelines/test_maintenance.py, built once per run in the background.

Hand-encoded ``__consumer_offsets`` records of one classic group, written through the ingest's own batch
writer in three micro-batches, with record times on two fixed days, so ``silver.offset_commits`` has two
``commit_date`` partitions whatever the clock says; gold refreshed after the first two; then maintained twice:
first with Delta's default 168-hour retention on a sample of tables, then the whole warehouse with 0 hours
(explicitly allowed); then the group commits more and rebalances, and gold is refreshed incrementally and
rebuilt in full. No broker traffic: the batches are built by hand, so the warehouse depends neither on other
tests' groups nor on the time of day.

Why in the background (tests/background.py): like the scenario warehouse it is CPU work (about 47 s of the
suite's critical path as a module fixture), built after the waiting builds, beside the second half of the
suite. Its VACUUM turns Delta's retention check off for the session while it runs
(pipelines/maintenance.py); nothing else in the suite vacuums.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from decoders import encode_record
from pipelines.delta_tables import read_table
from pipelines.gold.refresh import GOLD, full_rebuild, latest_version, refresh_gold, refresh_gold_tables
from pipelines.ingest import ensure_tables, write_batch
from pipelines.maintenance import maintain, maintained_tables

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


def build_maintained_warehouse(spark: Any, broker: Any, base_settings: Any, root: Path) -> dict[str, Any]:
    """Write the three batches, refresh and maintain as the module docstring says; what the tests read of it."""
    from conf.settings import KafkaSettings, MaintenanceSettings

    settings = base_settings.model_copy(update={"warehouse": str(root / "warehouse"),
        "kafka": KafkaSettings(bootstrap_servers=broker.bootstrap_servers)})
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
    existing = [spec for spec in maintained_tables() if latest_version(spark, settings, spec) is not None]
    # Default retention (168 h) on a few tables that have something to compact and something replaced.
    sample = [spec for spec in existing if spec.name in SAMPLE]
    before = {spec.name: _rows(read_table(spark, settings, spec)) for spec in sample}
    partitions = {spec.name: read_table(spark, settings, spec).select(*spec.partition_by).distinct().count()
                  if spec.partition_by else 1 for spec in sample}
    kept = maintain(spark, settings, sample)
    after_optimize = {spec.name: _rows(read_table(spark, settings, spec)) for spec in sample}
    # Then the whole warehouse with no retention at all (explicitly allowed).
    short = settings.model_copy(update={"maintenance": MaintenanceSettings(vacuum_retention_hours=0,
                                                                          allow_short_retention=True)})
    vacuumed = maintain(spark, short)
    # Gold's query after OPTIMIZE and VACUUM of silver: new versions, no change data, nothing to write.
    written_after_maintenance = refresh_gold_tables(spark, settings)
    batch(2)  # more commits and a rebalance of the same group after maintenance
    refresh_gold(spark, settings)  # incremental: reads batch 2 past the OPTIMIZE and VACUUM commits
    return {
        "settings": settings, "group": GROUP, "existing": existing, "before": before,
        "after_optimize": after_optimize, "partitions": partitions, "kept": {r.table: r for r in kept},
        "vacuumed": {r.table: r for r in vacuumed}, "written_after_maintenance": written_after_maintenance,
        "gold": {spec.name: _rows(read_table(spark, settings, spec)) for spec in GOLD},
        "full": {name: _rows(frame) for name, frame in full_rebuild(spark, settings).items()},
    }
