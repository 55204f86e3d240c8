"""Benchmark: an incremental gold refresh beside a full rebuild, on a warehouse of 1M commits.

    .venv/bin/python bench/gold.py                       # 1M commits, then 10k more
    .venv/bin/python bench/gold.py --commits 200000 --increment 5000

What it does, in one Spark session on the embedded broker:

1. produces ``--commits`` OffsetCommit v4 records for ``--groups`` groups (200 topics x 12
   partitions), interleaved with GroupMetadata v3 records: every group rebalances
   ``--generations`` times (two members, range), with record times increasing as on a real
   cluster and spanning ``--days`` days; ingests them (``ingest --once``) into silver;
2. **first refresh** (``refresh_gold`` with no gold yet: reads all of silver);
3. produces ``--increment`` more commits touching ``--touched`` groups plus one new
   generation for each of those groups, ingests them;
4. **incremental refresh**: ``refresh_gold`` again (reads only what silver gained);
5. **baseline, full rebuild**: the gold directory is deleted and ``refresh_gold`` rebuilds
   every gold table from all of silver (a missing gold table makes gold's query start afresh:
   ``pipelines/gold/silver_changes.py``; what a non-incremental job would do every run);
   its result is compared with the incremental one (same rows in every table).

Prints seconds and silver records/s for each, and the peak memory of the Python process and
of the Spark JVM (VmHWM).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.decode import jvm_peak_mb  # noqa: E402
from bench.results import add_results_argument, start, write_result  # noqa: E402
from decoders import encode_record  # noqa: E402

BASE_MS = 1_700_000_000_000
STEP_MS = 10
"""Time between two generated records; main() sets it so the initial commits span ``--days``."""


def group_metadata(group: str, generation: int, timestamp_ms: int) -> tuple[bytes, bytes]:
    """A Stable GroupMetadata v3 record: two members, range over topic ``orders`` (6 partitions)."""
    members = [{
        "member_id": f"consumer-{m}-{group}-{generation:05d}", "group_instance_id": None,
        "client_id": f"consumer-{m}", "client_host": "/10.0.0.1", "rebalance_timeout": 300000,
        "session_timeout": 45000,
        "subscription": {"topics": ["orders"], "user_data": None, "owned_partitions": [], "generation_id": -1,
                         "rack_id": None},
        "assignment": {"partitions": [{"topic": "orders", "partitions": [m * 3, m * 3 + 1, m * 3 + 2]}],
                       "user_data": None},
    } for m in range(2)]
    return encode_record("group_metadata", {"group": group}, {
        "protocol_type": "consumer", "generation": generation, "protocol": "range",
        "leader": members[0]["member_id"], "current_state_timestamp": timestamp_ms, "members": members}, 3)


def offset_commit(group: str, i: int, timestamp_ms: int) -> tuple[bytes, bytes]:
    return encode_record(
        "offset_commit", {"group": group, "topic": f"topic-{i % 200:03d}", "partition": i % 12},
        {"offset": i * 7, "leader_epoch": 5, "metadata": "", "commit_timestamp": timestamp_ms}, 4)


def records(commits: int, groups: list[str], generations: int, first_generation: int, start: int,
            ) -> Iterator[tuple[bytes, bytes]]:
    """``commits`` commits spread over ``groups``, each group rebalancing ``generations`` times on the way."""
    every = max(1, commits // max(1, generations))
    for n in range(commits):
        i = start + n
        if n % every == 0 and n // every < generations:
            generation = first_generation + n // every
            for group in groups:
                yield group_metadata(group, generation, BASE_MS + i * STEP_MS)
        yield offset_commit(groups[i % len(groups)], i, BASE_MS + i * STEP_MS + 1)


def produce(config: dict[str, str], topic: str, batch: Iterator[tuple[bytes, bytes]]) -> int:
    from confluent_kafka import Producer

    producer = Producer({**config, "linger.ms": 20, "batch.num.messages": 10000, "compression.type": "lz4"})
    count = 0
    for key, value in batch:
        while True:
            try:
                # One partition keeps the records of a group in time order, as the coordinator writes them.
                producer.produce(topic, key=key, value=value, partition=0)
                break
            except BufferError:
                producer.poll(0.1)
        count += 1
        if count % 10000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0
    return count


def report(label: str, seconds: float, silver_rows: int) -> None:
    print(f"  {label:<52} {seconds:8.1f} s  {silver_rows:>11,} silver rows read "
          f"{silver_rows / seconds:>10,.0f} rows/s", flush=True)


def workload_arguments(description: str | None, increment_help: str) -> argparse.Namespace:
    """The generated warehouse's arguments (also bench/check.py's); sets ``STEP_MS`` so the initial commits span
    ``--days``."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=1_000_000, help="commits in the initial warehouse")
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--generations", type=int, default=10, help="rebalances per group in the initial data")
    parser.add_argument("--increment", type=int, default=10_000, help=increment_help)
    parser.add_argument("--touched", type=int, default=50, help="groups the increment touches")
    parser.add_argument("--days", type=float, default=30.0,
                        help="days of history the initial commits span (silver.offset_commits is partitioned by day)")
    add_results_argument(parser)
    args = parser.parse_args()
    global STEP_MS
    STEP_MS = max(1, int(args.days * 86_400_000 / args.commits))
    return args


def main() -> None:
    args = workload_arguments(__doc__, "commits added before the incremental run")
    run = start("gold", args)

    from broker.embedded import EmbeddedBroker
    from broker.workload import create_topic
    from conf.settings import KafkaSettings, Settings, SparkSettings
    from pipelines.delta_tables import read_table
    from pipelines.gold.refresh import GOLD, refresh_gold
    from pipelines.ingest import IngestOptions, run_ingest
    from pipelines.spark_session import build_spark_session

    work = Path(tempfile.mkdtemp(prefix="offsetlake-bench-gold-"))
    groups = [f"group-{g:04d}" for g in range(args.groups)]
    with EmbeddedBroker(work / "broker", heap="1g") as broker:
        config = {"bootstrap.servers": broker.bootstrap_servers}
        topic = "bench-offsets"
        create_topic(config, topic, partitions=1, config={"retention.ms": "-1"})
        settings = Settings(warehouse=str(work / "warehouse"), cluster_name="bench",
                            kafka=KafkaSettings(bootstrap_servers=broker.bootstrap_servers),
                            spark=SparkSettings(shuffle_partitions=4, driver_memory="4g", log_level="ERROR"))
        spark = build_spark_session(settings)
        options = IngestOptions(topic=topic, once=True)

        started = time.perf_counter()
        initial = produce(config, topic, records(args.commits, groups, args.generations, 1, 0))
        ingested = sum(r.records for r in run_ingest(spark, settings, options))
        assert ingested == initial, (ingested, initial)
        print(f"set-up: {initial:,} records ({args.commits:,} commits, {initial - args.commits:,} GroupMetadata) "
              f"produced and ingested in {time.perf_counter() - started:.1f}s", flush=True)

        started = time.perf_counter()
        refresh_gold(spark, settings)
        report("first refresh (all of silver, empty gold)", time.perf_counter() - started, initial)

        touched = groups[:args.touched]
        added = produce(config, topic, records(args.increment, touched, 1, args.generations + 1, args.commits))
        assert sum(r.records for r in run_ingest(spark, settings, options)) == added
        started = time.perf_counter()
        refresh_gold(spark, settings)
        incremental_seconds = time.perf_counter() - started
        report(f"incremental refresh (+{added:,} records, {len(touched)} groups)", incremental_seconds, added)
        incremental = {spec.name: read_table(spark, settings, spec).localCheckpoint() for spec in GOLD}
        for frame in incremental.values():
            frame.count()

        shutil.rmtree(Path(settings.warehouse) / "gold")
        started = time.perf_counter()
        refresh_gold(spark, settings)
        full_seconds = time.perf_counter() - started
        report("baseline: full rebuild (gold deleted, all of silver)", full_seconds, initial + added)

        all_equal = True
        for spec in GOLD:
            rebuilt = read_table(spark, settings, spec)
            columns = [c for c in spec.schema.fieldNames() if c not in ("refreshed_at",)]
            diff = incremental[spec.name].select(*columns).exceptAll(rebuilt.select(*columns)).count() + \
                rebuilt.select(*columns).exceptAll(incremental[spec.name].select(*columns)).count()
            all_equal = all_equal and diff == 0
            print(f"  {spec.name:<28} incremental == full rebuild: {'yes' if diff == 0 else f'NO ({diff} rows)'}")
        print(f"peak memory: python {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB, "
              f"Spark JVM {jvm_peak_mb(spark):,.0f} MB; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        spark.stop()
    # What an incremental refresh costs beside a full rebuild (target: 5 % or less).
    line = f"gold: incremental/full = {100 * incremental_seconds / full_seconds:.1f}% at {args.commits:,} commits"
    write_result(run, {"incremental_seconds": round(incremental_seconds, 2),
                       "incremental_over_full_percent": round(100 * incremental_seconds / full_seconds, 1),
                       "tables_equal": all_equal},
                 {"full_rebuild_seconds": round(full_seconds, 2)}, line)
    print(line)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
