"""Benchmark: decoding __consumer_offsets records in Spark, beside a plain scan, pure Python and Kafka's own tools.

    .venv/bin/python bench/decode.py                        # 2M records per mix (the size the ratios are judged at)
    .venv/bin/python bench/decode.py --rows 200000          # quicker
    .venv/bin/python bench/decode.py --mixes commits mixed  # some mixes only
    .venv/bin/python bench/decode.py --runs 12              # the fastest of 12 runs each, steadier on a busy machine
    .venv/bin/python bench/decode.py --marginal             # also the cost per record beyond each job's fixed cost

Three mixes of records, each generated inside Spark and written to Parquet first, so
every measurement of a mix reads the same rows:

* ``commits``: offset commits only (value v4, as Kafka 4.1+ writes; a tenth carry a topic id);
* ``mixed``: 95% those commits, 5% GroupMetadata records of two consumer members;
* ``big-groups``: 99% commits, 1% GroupMetadata of 200 members owning 1,000 partitions.

For each mix, in one run:

* plain scan: the Parquet rows read and aggregated (sum of key and value lengths);
* spark decode: what ingest does with a micro-batch, minus its cache and the writes: every
  record routed to its family and decoded in the JVM in one pass (``pipelines.decode.first_stage``:
  offset commits and GroupMetadata by Kafka's classes), forced and counted by ingest's own job
  (``stage_counts``);
  then the Python stage (``complete``) for families with rows the JVM left, if any. Each
  measurement runs unmeasured (JIT) at least three times and at least ``--warm-up-seconds``, then
  ``--runs`` times (three by default); the fastest is reported, for the scan too;
* pure python: ``decoders.decode_record`` in this process (one core; Spark uses local[2]),
  on at most ``--python-limit`` of the rows;
* kafka formatters: Kafka's ``OffsetsMessageFormatter`` / ``GroupMetadataMessageFormatter``
  in a JVM (bench/KafkaFormatters.java) on at most ``--jvm-limit`` of the rows, after a
  warm-up pass (one core, like the tool).

With ``--marginal``, the scan and the Spark decode are also timed on a fifth of the records (the
same generator's first rows), and the bench prints what a record costs beyond a job's fixed cost
(planning, scheduling, the job's start and end): ``(t(N) - t(N/5)) / (4N/5)``, wall time on the
local[2] task threads, and their ratio. Why: a job's fixed cost is a larger share of the scan's short
time than of the decode's, so the ratio at N records flatters the decode a little at 2M and less as N
grows; the marginal ratio is what a cluster's sustained rate depends on.

Peak memory (VmHWM / ru_maxrss, lifetime peaks so far): the Spark JVM (driver and, in
local mode, the executors), the Python workers, this process, the formatter JVM. The last
line gives the ratios the decode is judged by: ``decode/scan: commits X.XX, mixed X.XX, big-groups X.XX;
decode/kafka-formatter: X.X`` (ratios of records/s; the formatter ratio on the mixed mix).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.results import add_results_argument, start, write_result  # noqa: E402
from conf.settings import Settings, SparkSettings  # noqa: E402
from decoders import decode_record, encode_record  # noqa: E402

MIXES = {"commits": 0, "mixed": 20, "big-groups": 100}  # every n-th record is GroupMetadata (0: none)
BIG_GROUP_MEMBERS = 200
BIG_GROUP_PARTITIONS = 1_000


def group_metadata_record(members: int, partitions: int) -> tuple[bytes, bytes]:
    """A GroupMetadata v3 record: ``members`` consumers sharing ``partitions`` partitions of one topic."""
    per_member = max(partitions // members, 1)
    member_list = [{
        "member_id": f"consumer-{m}-3f1c2b9e-6d0a-4c55-9a43-{m:012d}", "group_instance_id": None,
        "client_id": f"consumer-{m}", "client_host": f"/10.0.{m // 250}.{m % 250}",
        "rebalance_timeout": 300000, "session_timeout": 45000,
        "subscription": {"topics": ["orders"], "user_data": None, "owned_partitions": [], "generation_id": -1,
                         "rack_id": None},
        "assignment": {"partitions": [{"topic": "orders",
                                       "partitions": list(range(m * per_member, (m + 1) * per_member))}],
                       "user_data": None},
    } for m in range(members)]
    return encode_record("group_metadata", {"group": "big-group"}, {
        "protocol_type": "consumer", "generation": 7, "protocol": "range", "leader": member_list[0]["member_id"],
        "current_state_timestamp": 1_700_000_000_000, "members": member_list}, 3)


def generate(spark, path: Path, rows: int, mix: str) -> None:  # type: ignore[no-untyped-def]
    """Raw records generated in the JVM (Python generation of millions of rows would dominate the run)."""
    from pyspark.sql import functions as F

    share = MIXES[mix]
    key_v, value_v = group_metadata_record(2, 6) if mix == "mixed" else group_metadata_record(
        BIG_GROUP_MEMBERS, BIG_GROUP_PARTITIONS)
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
    is_group = (F.col("id") % share == 0) if share else F.lit(False)
    frame = frame.select(
        F.when(is_group, F.lit(key_v)).otherwise(commit_key).alias("key"),
        F.when(is_group, F.lit(value_v)).otherwise(commit_value).alias("value"),
        "topic", "partition", "offset", "timestamp",
    )
    frame.write.mode("overwrite").parquet(str(path))


def timed(label: str, rows: int, func: Callable[[], Any], warm_up: int = 0, runs: int = 1,
          warm_up_seconds: float = 0.0) -> float:
    """Run ``func`` ``warm_up`` times unmeasured, then ``runs`` times; print and return records/s of the fastest.

    The fastest of several runs, for the Spark figures: this machine is shared, and a burst of other
    work during one run says nothing about the decode; scan and decode are timed the same way. A
    fixed number of warm-up runs is not enough: the first mix's decode still ran partly in code the JIT
    had not finished compiling (slower than the mixed mix after it, which does more), so the Spark
    figures also warm up for at least ``warm_up_seconds`` (``--warm-up-seconds``), the scan as long as
    the decode: both are measured once the JIT has compiled what they run.
    """
    started = time.perf_counter()
    done = 0
    while done < warm_up or time.perf_counter() - started < warm_up_seconds:
        func()
        done += 1
    seconds = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        func()
        seconds = min(seconds, time.perf_counter() - started)
    best = f" (best of {runs})" if runs > 1 else ""
    print(f"  {label:<40} {rows:>11,} records  {seconds:8.2f} s  {rows / seconds:>12,.0f} records/s{best}", flush=True)
    return rows / seconds


def scan(raw) -> None:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    raw.select(F.sum(F.length("key") + F.length("value"))).collect()


def marginal(spark, path: Path, mix: str, rows: int, scan_rate: float, decode_rate: float,  # type: ignore[no-untyped-def]
             runs: int) -> None:
    """Time the scan and the decode on a fifth of ``rows`` too, and print each one's cost per record beyond
    its fixed cost, and their ratio (``--marginal``; the module's docstring says why)."""
    fifth = rows // 5
    generate(spark, path, fifth, mix)
    small = spark.read.parquet(str(path))
    print(f"  on a fifth of the records, {fifth:,}, for the cost per record beyond a job's fixed cost:")
    small_scan = timed("plain Spark scan", fifth, lambda: scan(small), warm_up=3, runs=runs)
    small_decode = timed("spark decode (routed families)", fifth, lambda: spark_decode(small), warm_up=3, runs=runs)
    costs: dict[str, tuple[float, float]] = {}  # name -> (seconds per record, fixed seconds)
    for name, big_rate, small_rate in (("scan", scan_rate, small_scan), ("decode", decode_rate, small_decode)):
        big_seconds, small_seconds = rows / big_rate, fifth / small_rate
        per_record = (big_seconds - small_seconds) / (rows - fifth)
        costs[name] = (per_record, big_seconds - per_record * rows)
    ratio = costs["scan"][0] / costs["decode"][0] if costs["decode"][0] > 0 else float("nan")
    print(f"  per record beyond the fixed cost ({fifth:,} -> {rows:,} records): scan {costs['scan'][0] * 1e9:.0f} ns, "
          f"spark decode {costs['decode'][0] * 1e9:.0f} ns (wall, local[2]); fixed cost: scan "
          f"{costs['scan'][1]:.2f} s, decode {costs['decode'][1]:.2f} s; marginal decode/scan {ratio:.2f}", flush=True)


def spark_decode(raw) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """The decode as silver's write_silver runs it, minus the cache and the writes: the first stage
    (every record routed and decoded in the JVM, one pass) forced and counted by ingest's own job
    (``stage_counts``: rows per family, pending flag and source partition; the pending flag is
    whether the JVM's decode returned a row, so every record's decode runs in full), then the Python
    stage only for the families where the JVM left rows (none in these mixes: every record is well
    formed and Kafka's classes decode it)."""
    from pipelines.decode import FAMILY, PENDING, complete, families, first_stage, stage_counts

    stage = first_stage(raw)
    rows = stage_counts(stage).collect()
    pending = {row[FAMILY] for row in rows if row[PENDING]}
    if pending:
        counts = _force(complete(families(stage), pending))
        counts.pop("pending")
        return counts
    totals: dict[str, int] = {}
    for row in rows:
        totals[row[FAMILY]] = totals.get(row[FAMILY], 0) + row["count"]
    return totals | {"quarantined": 0}


def _force(families) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    from functools import reduce

    from pyspark.sql import functions as F

    from pipelines.decode import PENDING

    failed = F.count_if(F.col("quarantine_reason").isNotNull()).alias("failed")

    def pending(frame):  # type: ignore[no-untyped-def]
        return (F.count_if(F.col(PENDING)) if PENDING in frame.columns else F.lit(0)).cast("long").alias("pending")

    parts = [
        families.offset_commits.agg(F.lit("offset_commits").alias("family"), F.count("*").alias("n"),
                                    F.sum("offset").alias("checksum"), failed, pending(families.offset_commits)),
        families.group_metadata.agg(F.lit("group_metadata").alias("family"), F.count("*").alias("n"),
                                    F.sum(F.size("group_metadata.value.members")).alias("checksum"), failed,
                                    pending(families.group_metadata)),
        families.newer_group_records.agg(F.lit("newer_group_records").alias("family"), F.count("*").alias("n"),
                                         F.lit(0).cast("long").alias("checksum"), failed,
                                         pending(families.newer_group_records)),
        families.unroutable.agg(F.lit("unroutable").alias("family"), F.count("*").alias("n"),
                                F.lit(0).cast("long").alias("checksum"), failed, pending(families.unroutable)),
    ]
    summary = reduce(lambda a, b: a.unionByName(b), parts).collect()
    return {row["family"]: row["n"] for row in summary} | {
        "quarantined": sum(row["failed"] for row in summary),
        "pending": {row["family"]: row["pending"] for row in summary}}


def pure_decode(records: list[tuple[bytes, bytes]]) -> None:
    for key, value in records:
        decode_record(key, value)


def kafka_formatters(records: list[tuple[bytes, bytes | None]], work: Path) -> dict[str, Any]:
    """Kafka's formatters over ``records`` in their own JVM; returns its JSON line (records, seconds, peak_kb)."""
    from jvm.artifacts import kafka_classpath

    path = work / "records.bin"
    with path.open("wb") as out:
        for key, value in records:
            out.write(struct.pack(">i", len(key)) + key)
            out.write(struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value)
    source = Path(__file__).resolve().parent / "KafkaFormatters.java"
    result = subprocess.run(
        ["java", "-Xmx3g", "-XX:+UseParallelGC", "-XX:ActiveProcessorCount=1", "-cp", kafka_classpath(),
         str(source), str(path)],
        capture_output=True, text=True, check=False)
    path.unlink()
    if result.returncode != 0:
        raise SystemExit(f"KafkaFormatters.java failed: {result.stderr.strip()[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def jvm_peak_mb(spark) -> float:  # type: ignore[no-untyped-def]
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    return _vm_hwm_mb(pid)


def _vm_hwm_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def python_workers_peak_mb(spark) -> float:  # type: ignore[no-untyped-def]
    """The largest peak RSS among the Spark JVM's Python worker processes (pyspark.daemon and its forks)."""
    import psutil

    jvm = psutil.Process(spark._jvm.java.lang.ProcessHandle.current().pid())
    return max((_vm_hwm_mb(child.pid) for child in jvm.children(recursive=True)), default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000, help="records per mix (default 2,000,000)")
    parser.add_argument("--mixes", nargs="+", choices=list(MIXES), default=list(MIXES))
    parser.add_argument("--python-limit", type=int, default=200_000,
                        help="decode at most this many records in pure Python (it is single-threaded)")
    parser.add_argument("--warm-up-seconds", type=float, default=20.0,
                        help="run the scan and the Spark decode unmeasured for at least this long first "
                             "(and at least three times), so that the JIT has compiled them (default 20)")
    parser.add_argument("--runs", type=int, default=3,
                        help="measured runs of the scan and of the Spark decode after the warm-up; the fastest is "
                             "reported (default 3; more steady both sides of the ratio on a shared machine)")
    parser.add_argument("--marginal", action="store_true",
                        help="also time the scan and the decode on a fifth of the records and print each one's cost "
                             "per record beyond a job's fixed cost, and their ratio")
    parser.add_argument("--jvm-limit", type=int, default=1_000_000,
                        help="give Kafka's formatters at most this many records")
    add_results_argument(parser)
    args = parser.parse_args()
    if args.marginal and args.rows < 10:
        parser.error(f"--marginal times a fifth of --rows too: give at least 10 rows, got {args.rows}")

    run = start("decode", args)
    from pipelines.spark_session import build_spark_session

    work = Path(tempfile.mkdtemp(prefix="offsetlake-bench-"))
    atexit.register(shutil.rmtree, work, True)  # its data can take hundreds of MB of /tmp
    spark = build_spark_session(Settings(warehouse=str(work / "warehouse"),
                                         spark=SparkSettings(shuffle_partitions=4, driver_memory="4g",
                                                             log_level="ERROR")))
    print(f"decode benchmark: Spark {spark.version}, master {spark.sparkContext.master}, {args.rows:,} records "
          f"per mix, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ratios: dict[str, float] = {}
    rates: dict[str, dict[str, float]] = {}  # mix -> path -> records/s
    formatter_ratio: float | None = None  # on the mixed mix only, as the last line reports it
    for mix in args.mixes:
        path = work / f"raw-{mix}"
        generate(spark, path, args.rows, mix)
        raw = spark.read.parquet(str(path))
        print(f"\n{mix}: {args.rows:,} records ({'no' if not MIXES[mix] else f'1 in {MIXES[mix]}'} GroupMetadata)")
        scan_rate = timed("plain Spark scan", args.rows, lambda frame=raw: scan(frame), warm_up=3, runs=args.runs,
                          warm_up_seconds=args.warm_up_seconds)
        counts: dict[str, int] = {}
        decode_rate = timed("spark decode (routed families)", args.rows,
                            lambda frame=raw, out=counts: out.update(spark_decode(frame)), warm_up=3, runs=args.runs,
                            warm_up_seconds=args.warm_up_seconds)
        rates[mix] = {"scan": round(scan_rate), "spark_decode": round(decode_rate)}
        quarantined = counts.pop("quarantined")
        assert sum(counts.values()) == args.rows and not counts.get("unroutable") and not quarantined, counts
        ratios[mix] = decode_rate / scan_rate
        if args.marginal:
            marginal(spark, work / f"raw-{mix}-fifth", mix, args.rows, scan_rate, decode_rate, args.runs)
        limit = min(args.rows, max(args.python_limit, args.jvm_limit))
        records = [(bytes(row["key"]), None if row["value"] is None else bytes(row["value"]))
                   for row in raw.select("key", "value").limit(limit).toLocalIterator()]
        n_python = min(len(records), args.python_limit)
        rates[mix]["pure_python"] = round(
            timed("pure python decode_record", n_python, lambda batch=records[:n_python]: pure_decode(batch)))
        kafka = kafka_formatters(records[:args.jvm_limit], work)
        kafka_rate = kafka["records"] / kafka["seconds"]
        rates[mix]["kafka_formatters"] = round(kafka_rate)
        print(f"  {'kafka formatters (JVM, 1 core, warm)':<40} {kafka['records']:>11,} records  "
              f"{kafka['seconds']:8.2f} s  {kafka_rate:>12,.0f} records/s  (printed {kafka['bytes']:,} bytes)")
        del records
        if mix == "mixed":
            formatter_ratio = decode_rate / kafka_rate
        print(f"  peak memory so far: Spark JVM {jvm_peak_mb(spark):,.0f} MB, Python workers "
              f"{python_workers_peak_mb(spark):,.0f} MB, this process "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB, formatter JVM "
              f"{kafka['peak_kb'] / 1024:,.0f} MB; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
              flush=True)
    spark.stop()
    parts = ", ".join(f"{mix} {ratio:.2f}" for mix, ratio in ratios.items())
    formatter = "n/a (the mixed mix was not run)" if formatter_ratio is None else f"{formatter_ratio:.1f}"
    line = f"decode/scan: {parts}; decode/kafka-formatter: {formatter}"
    write_result(run, {"decode_over_scan": {mix: round(ratio, 3) for mix, ratio in ratios.items()},
                       "decode_over_kafka_formatter": None if formatter_ratio is None else round(formatter_ratio, 2),
                       "spark_decode_records_per_second": {mix: r["spark_decode"] for mix, r in rates.items()}},
                 {"scan_records_per_second": {mix: r["scan"] for mix, r in rates.items()},
                  "pure_python_records_per_second": {mix: r["pure_python"] for mix, r in rates.items()},
                  "kafka_formatters_records_per_second": {mix: r["kafka_formatters"] for mix, r in rates.items()}},
                 line)
    print(f"\n{line}")


if __name__ == "__main__":
    main()
