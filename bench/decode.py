"""Benchmark: decoding __consumer_offsets records, pure Python vs Spark, beside a plain Spark scan.

    .venv/bin/python bench/decode.py                 # 1M and 10M records
    .venv/bin/python bench/decode.py --sizes 200000  # quicker

The workload mimics a real topic: 95% offset commits (value v4, as Kafka 4.1+
writes; a tenth of them carry a topic id) and 5% GroupMetadata records with two
consumer members. Records are generated inside Spark and written to Parquet
first, so every Spark measurement reads the same rows from disk:

* baseline: a plain scan of the rows (sum of key and value lengths);
* spark decode: pipelines.decode.decode_raw_records (vectorized numpy decode of offset
  commits in mapInArrow, per-record Python for the rest), forced by aggregating the output;
* pure python: decoders.decode_record over the same records, in this process
  (one core; Spark uses local[2]), on at most 1M records.

Peak memory: the Python process's peak RSS for the pure path (ru_maxrss), and the
Spark JVM's VmHWM (from /proc) after the Spark measurements.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conf.settings import Settings, SparkSettings  # noqa: E402
from decoders import decode_record, encode_record  # noqa: E402

GROUP_SHARE = 20  # every 20th record is GroupMetadata


def group_metadata_record(i: int) -> tuple[bytes, bytes]:
    members = [{
        "member_id": f"consumer-{m}-{i:08d}", "group_instance_id": None, "client_id": f"consumer-{m}",
        "client_host": "/10.0.0.1", "rebalance_timeout": 300000, "session_timeout": 45000,
        "subscription": {"topics": ["orders"], "user_data": None, "owned_partitions": [], "generation_id": -1,
                         "rack_id": None},
        "assignment": {"partitions": [{"topic": "orders", "partitions": [m * 3, m * 3 + 1, m * 3 + 2]}],
                       "user_data": None},
    } for m in range(2)]
    return encode_record("group_metadata", {"group": f"group-{i % 1000}"}, {
        "protocol_type": "consumer", "generation": i % 100, "protocol": "range", "leader": members[0]["member_id"],
        "current_state_timestamp": 1_700_000_000_000 + i, "members": members}, 3)


def generate(spark, path: Path, rows: int) -> None:  # type: ignore[no-untyped-def]
    """Raw records generated in the JVM (Python generation of 10M rows would dominate the run)."""
    from pyspark.sql import functions as F

    key_v, value_v = group_metadata_record(0)
    frame = spark.range(rows).select(
        F.col("id"),
        F.lit("__consumer_offsets").alias("topic"),
        (F.col("id") % 3).cast("int").alias("partition"),
        F.col("id").alias("offset"),
        F.timestamp_millis(F.lit(1_700_000_000_000) + F.col("id")).alias("timestamp"),
    )
    group = F.format_string("group-%04d", F.col("id") % 1000)
    topic = F.format_string("topic-%03d", F.col("id") % 200)
    commit_key = F.concat(
        F.unhex(F.lit("0001")), F.unhex(F.lpad(F.hex(F.length(group)), 4, "0")), F.encode(group, "UTF-8"),
        F.unhex(F.lpad(F.hex(F.length(topic)), 4, "0")), F.encode(topic, "UTF-8"),
        F.unhex(F.lpad(F.hex((F.col("id") % 12).cast("int")), 8, "0")),
    )
    with_id = F.col("id") % 10 == 0
    commit_value = F.concat(
        F.unhex(F.lit("0004")), F.unhex(F.lpad(F.hex(F.col("id") * 7), 16, "0")), F.unhex(F.lit("00000005")),
        F.unhex(F.lit("01")),  # empty metadata: compact string length 0 + 1
        F.unhex(F.lpad(F.hex(F.lit(1_700_000_000_000) + F.col("id")), 16, "0")),
        F.when(with_id, F.unhex(F.lit("010010" + "00112233445566778899aabbccddeeff"))).otherwise(F.unhex(F.lit("00"))),
    )
    is_group = F.col("id") % GROUP_SHARE == 0
    frame = frame.select(
        F.when(is_group, F.lit(key_v)).otherwise(commit_key).alias("key"),
        F.when(is_group, F.lit(value_v)).otherwise(commit_value).alias("value"),
        "topic", "partition", "offset", "timestamp",
    )
    frame.write.mode("overwrite").parquet(str(path))


def timed(label: str, rows: int, func) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    func()
    seconds = time.perf_counter() - started
    print(f"  {label:<34} {rows:>11,} records  {seconds:8.2f} s  {rows / seconds:>12,.0f} records/s", flush=True)
    return seconds


def scan(raw) -> None:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    raw.select(F.sum(F.length("key") + F.length("value"))).collect()


def spark_decode(decoded) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Force every output column kind: offsets of commits, members of group records."""
    from pyspark.sql import functions as F

    summary = decoded.groupBy("kind").agg(
        F.count("*").alias("n"), F.sum("offset_commit.offset").alias("offsets"),
        F.sum(F.size("group_metadata.value.members")).alias("members"),
    ).collect()
    return {row["kind"]: row["n"] for row in summary}


def pure_decode(records: list[tuple[bytes, bytes]]) -> None:
    for key, value in records:
        decode_record(key, value)


def jvm_peak_mb(spark) -> float:  # type: ignore[no-untyped-def]
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--python-limit", type=int, default=1_000_000,
                        help="decode at most this many records in pure Python (it is single-threaded)")
    args = parser.parse_args()

    from pipelines.decode import decode_raw_records
    from pipelines.spark_session import build_spark_session

    work = Path(tempfile.mkdtemp(prefix="offsetlake-bench-"))
    spark = build_spark_session(Settings(warehouse=str(work / "warehouse"),
                                         spark=SparkSettings(shuffle_partitions=4, driver_memory="4g",
                                                             log_level="ERROR")))
    print(f"decode benchmark: Spark {spark.version}, master {spark.sparkContext.master}, "
          f"{GROUP_SHARE - 1} of {GROUP_SHARE} records are v4 offset commits, the rest GroupMetadata v3")
    for rows in args.sizes:
        path = work / f"raw-{rows}"
        generate(spark, path, rows)
        raw = spark.read.parquet(str(path))
        print(f"\n{rows:,} records")
        timed("baseline: plain Spark scan", rows, lambda frame=raw: scan(frame))
        counts: dict[str, int] = {}
        timed("spark decode (vectorized + per-record)", rows,
              lambda frame=raw, out=counts: out.update(spark_decode(decode_raw_records(frame))))
        assert counts.get("quarantine", 0) == 0 and sum(counts.values()) == rows, counts
        n_python = min(rows, args.python_limit)
        records = [(row["key"], row["value"]) for row in raw.limit(n_python).toLocalIterator()]
        timed("pure python decode_record", n_python, lambda batch=records: pure_decode(batch))
        del records
    print(f"\npeak memory: python process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB "
          f"(includes the records held for the pure-python run), Spark JVM {jvm_peak_mb(spark):,.0f} MB")
    spark.stop()


if __name__ == "__main__":
    main()
