"""Benchmark: ``offsetlake ingest --once`` throughput on an embedded broker, beside a plain copy.

    .venv/bin/python bench/ingest.py                  # 1M records
    .venv/bin/python bench/ingest.py --records 200000 --max-offsets-per-trigger 100000

Records shaped like a real ``__consumer_offsets`` (95% OffsetCommit v4, 5%
GroupMetadata v3 with two members; encoded by ``decoders.encode_record``) are
produced to a plain topic with 3 partitions on the embedded KRaft broker. Then,
in one Spark session:

* baseline: the same topic read by Spark's Kafka source (AvailableNow) and
  appended as-is to one Delta table: the cost of Kafka + Spark + Delta alone;
* ingest: ``pipelines.ingest.run_ingest`` (bronze + decode + silver + audit,
  exactly-once writes).

Prints records/s for both and the peak memory of the Python process and the
Spark JVM (VmHWM).
"""

from __future__ import annotations

import argparse
import atexit
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.decode import group_metadata_record, jvm_peak_mb  # noqa: E402
from bench.results import add_results_argument, start, write_result  # noqa: E402
from decoders import encode_record  # noqa: E402


def produce(config: dict[str, str], topic: str, count: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({**config, "linger.ms": 20, "batch.num.messages": 10000, "compression.type": "lz4"})
    group_key, group_value = group_metadata_record(2, 6)  # two members, as in bench/decode.py's mixed mix
    for i in range(count):
        if i % 20 == 0:
            key, value = group_key, group_value
        else:
            key, value = encode_record(
                "offset_commit", {"group": f"group-{i % 1000:04d}", "topic": f"topic-{i % 200:03d}",
                                  "partition": i % 12},
                {"offset": i * 7, "leader_epoch": 5, "metadata": "", "commit_timestamp": 1_700_000_000_000 + i}, 4)
        while True:
            try:
                producer.produce(topic, key=key, value=value, partition=i % 3)
                break
            except BufferError:
                producer.poll(0.1)
        if i % 10000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--max-offsets-per-trigger", type=int, default=None)
    add_results_argument(parser)
    args = parser.parse_args()
    run = start("ingest", args)

    from broker.embedded import EmbeddedBroker
    from broker.workload import create_topic
    from conf.settings import KafkaSettings, Settings, SparkSettings
    from pipelines.ingest import IngestOptions, run_ingest
    from pipelines.offsets_topic_source import read_offsets_topic_stream
    from pipelines.spark_session import build_spark_session

    work = Path(tempfile.mkdtemp(prefix="offsetlake-bench-ingest-"))
    atexit.register(shutil.rmtree, work, True)  # its data can take hundreds of MB of /tmp
    with EmbeddedBroker(work / "broker", heap="1g") as broker:
        config = {"bootstrap.servers": broker.bootstrap_servers}
        topic = "bench-offsets"
        create_topic(config, topic, partitions=3)
        started = time.perf_counter()
        produce(config, topic, args.records)
        print(f"produced {args.records:,} records in {time.perf_counter() - started:.1f}s", flush=True)

        settings = Settings(warehouse=str(work / "warehouse"), cluster_name="bench",
                            kafka=KafkaSettings(bootstrap_servers=broker.bootstrap_servers),
                            spark=SparkSettings(shuffle_partitions=4, driver_memory="4g", log_level="ERROR"))
        spark = build_spark_session(settings)

        started = time.perf_counter()
        stream = read_offsets_topic_stream(spark, settings, topic, args.max_offsets_per_trigger)
        query = (stream.writeStream.format("delta").trigger(availableNow=True)
                 .option("checkpointLocation", str(work / "baseline-checkpoint"))
                 .start(str(work / "baseline-table")))
        query.awaitTermination()
        baseline = time.perf_counter() - started
        print(f"  {'baseline: Kafka source -> one Delta table':<44} {args.records:>11,} records "
              f"{baseline:8.1f} s {args.records / baseline:>10,.0f} records/s", flush=True)

        started = time.perf_counter()
        reports = run_ingest(spark, settings.model_copy(),
                             IngestOptions(topic=topic, once=True,
                                           max_offsets_per_trigger=args.max_offsets_per_trigger))
        seconds = time.perf_counter() - started
        ingested = sum(r.records for r in reports)
        assert ingested == args.records, (ingested, args.records)
        print(f"  {'offsetlake ingest --once (bronze+silver)':<44} {ingested:>11,} records "
              f"{seconds:8.1f} s {ingested / seconds:>10,.0f} records/s  ({len(reports)} batches)", flush=True)
        line = (f"peak memory: python {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB, "
                f"Spark JVM {jvm_peak_mb(spark):,.0f} MB")
        spark.stop()
    write_result(run, {"ingest_seconds": round(seconds, 2), "ingest_records_per_second": round(ingested / seconds),
                       "batches": len(reports)},
                 {"kafka_to_delta_seconds": round(baseline, 2),
                  "kafka_to_delta_records_per_second": round(args.records / baseline)}, line)
    print(line)


if __name__ == "__main__":
    main()
