"""Benchmark: the newer group records (KIP-848, share, streams) per record, as the Spark decode runs them.

    .venv/bin/python bench/group_records_family.py                    # about 8 minutes
    .venv/bin/python bench/group_records_family.py --rows 200000 --python-rows 10000

bench/group_metadata_family.py's method, for the newer group-records family. Per record, for each case, on
ONE core (Spark ``local[1]``; the pure decoders in this process):

* table-driven ``decode_record``: ``decoders.records._decode_generic``, what ``decode_record`` was before
  the generated readers (the baseline a tenfold gain per record is judged against);
* generated ``decode_record``: ``decoders.records._decode_generated``, what it runs first today;
* Spark family pass, Python: the family as it was decoded before ``GroupRecordExpression``: one
  ``mapInArrow`` per record through ``decode_record``, ``from_pylist`` into Arrow;
* Spark family pass, JVM: as ingest decodes it now: the JVM stage (``pipelines.decode.first_stage``:
  ``GroupRecordExpression``, Kafka's own classes), then the Python stage (``complete``) only for the rows
  the JVM left (none with the shaded Kafka 4.3.1; with 4.2.1, the 4.3 case below);
* plain Spark scan of the same rows, for scale (the two Spark figures include it).

A Spark figure is the marginal cost of a record: one job over ``--rows`` records in Parquet (the case's
records in turn; ``--python-rows`` for the Python pass, and for the JVM pass when it leaves rows to
Python), read and forced (rows and tombstones counted), and the same job over a fifth of them, each the
best of three runs after a warm-up run (JIT); the difference in wall time divided by the difference in
rows, so a job's fixed costs (planning, starting Python workers) are left out, as they are of the pure
decoders. The JVM pass costs about a microsecond a record: over 40,000 rows (group_metadata_family.py's
count) that is within the noise of the loaded 2-core machine, hence a million.

Cases:

* kip848 as Kafka 4.3 writes it: bench/group_records.py's five KIP-848 records (types 3, 5, 6, 7, 8)
  as they are there, with 4.3's AssignmentTimestamp (type 6) and AssignmentEpochs (type 8) tags (Kafka
  4.2.1's classes, shaded before, did not know them and left those two records to Python);
* kip848 as Kafka 4.2 writes it: the same five records without those two tags (what the embedded 4.2
  broker writes): all decoded in the JVM;
* share: a ShareGroupCurrentMemberAssignment (type 14) of three topics, 24 partitions;
* streams: a StreamsGroupCurrentMemberAssignment (type 22) with active and standby tasks and 4.2's
  assignment epochs.

Peak memory: tracemalloc's peak while each pure decoder decodes the case once; the Spark JVM's and the
Python workers' peak RSS so far (VmHWM). The load average is printed at the start, after each case and at
the end; the last line gives the speed-up of the JVM pass over the table-driven ``decode_record``.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.decode import jvm_peak_mb, python_workers_peak_mb  # noqa: E402
from bench.group_metadata_family import spark_seconds  # noqa: E402
from bench.group_records import kip848_records, peak_kib, per_record_seconds  # noqa: E402
from bench.results import add_results_argument, start, write_result  # noqa: E402
from conf.settings import Settings, SparkSettings  # noqa: E402
from decoders import DecodedRecord, decode_record, encode_record  # noqa: E402
from decoders.records import _decode_generated, _decode_generic  # noqa: E402
from decoders.wire import Uuid  # noqa: E402

Record = tuple[bytes, bytes]
TOPIC_IDS = [Uuid(bytes([t]) * 16) for t in range(1, 4)]


def without_kafka_4_3_tags(records: list[Record]) -> list[Record]:
    """The records as a Kafka 4.2 broker writes them: no AssignmentTimestamp, no consumer AssignmentEpochs."""
    out = []
    for key, value in records:
        record = decode_record(key, value)
        assert isinstance(record, DecodedRecord)
        data = dict(record.value or {})
        if "assignment_timestamp" in data:
            data["assignment_timestamp"] = 0
        if record.type == "consumer_group_current_member_assignment":
            for field in ("assigned_partitions", "partitions_pending_revocation"):
                data[field] = [dict(p, assignment_epochs=[]) for p in data[field]]
        new_key, new_value = encode_record(record.type, record.key, data, record.value_version)
        assert new_value is not None
        out.append((new_key, new_value))
    return out


def share_record() -> Record:
    key, value = encode_record("share_group_current_member_assignment", {
        "group_id": "payments-share", "member_id": "share-member-4f1e2d3c-aa01"}, {
        "member_epoch": 12, "previous_member_epoch": 11, "state": 0,
        "assigned_partitions": [{"topic_id": tid, "partitions": list(range(t, 24, 3))}
                                for t, tid in enumerate(TOPIC_IDS)]})
    assert value is not None
    return key, value


def streams_record() -> Record:
    key, value = encode_record("streams_group_current_member_assignment", {
        "group_id": "payments-app", "member_id": "streams-member-9c8b7a6d-0001"}, {
        "member_epoch": 7, "previous_member_epoch": 6, "state": 1,
        "active_tasks": [{"subtopology_id": "0", "partitions": [0, 1, 2], "assignment_epochs": [7, 7, 7]},
                         {"subtopology_id": "1", "partitions": [0, 1], "assignment_epochs": [7, 7]}],
        "standby_tasks": [{"subtopology_id": "0", "partitions": [3], "assignment_epochs": [7]}],
        "warmup_tasks": [], "active_tasks_pending_revocation": [], "standby_tasks_pending_revocation": [],
        "warmup_tasks_pending_revocation": []})
    assert value is not None
    return key, value


def cases() -> dict[str, list[Record]]:
    kip848 = kip848_records()
    return {
        "kip848 as Kafka 4.3 writes it: 5 records, 2 with 4.3 tags": kip848,
        "kip848 as Kafka 4.2 writes it: 5 records": without_kafka_4_3_tags(kip848),
        "share: 1 current member assignment": [share_record()],
        "streams: 1 current member assignment": [streams_record()],
    }


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000,
                        help="rows of the plain scan and the JVM pass (the difference is within noise below ~0.5M)")
    parser.add_argument("--python-rows", type=int, default=40_000, help="rows of the Spark Python pass")
    parser.add_argument("--seconds", type=float, default=1.0, help="time budget per pure-Python figure")
    add_results_argument(parser)
    args = parser.parse_args()
    run = start("group_records_family", args)

    from pyspark.sql import functions as F

    from pipelines.decode import PENDING, RAW_COLUMNS, _per_record, complete, families, first_stage, record_type_column
    from pipelines.spark_session import build_spark_session
    from schemas.decoded_records import NEWER_GROUP_RECORDS_FAMILY

    work = Path(tempfile.mkdtemp(prefix="offsetlake-bench-newer-"))
    atexit.register(shutil.rmtree, work, True)  # its data can take hundreds of MB of /tmp
    spark = build_spark_session(Settings(warehouse=str(work / "warehouse"), spark=SparkSettings(
        master="local[1]", shuffle_partitions=1, driver_memory="2g", log_level="ERROR")))
    print(f"newer group records per record: Spark {spark.version}, master local[1]; load average {load()}")

    def force(frame) -> int:  # type: ignore[no-untyped-def]
        """Rows counted, tombstones counted; returns the rows left pending (first stage) or 0."""
        pending = F.count_if(F.col(PENDING)) if PENDING in frame.columns else F.lit(0)
        return frame.agg(F.count("*"), F.count_if(F.col("is_tombstone")), pending).first()[2]

    left: dict[str, int] = {}

    def two_stages(frame) -> None:  # type: ignore[no-untyped-def]
        """As ingest decodes: the JVM stage, then the Python stage only if the JVM left rows."""
        first = families(first_stage(frame))
        pending = force(first.newer_group_records)
        left[name] = pending
        if pending:
            force(complete(first, {"newer_group_records"}).newer_group_records)

    summary = []
    figures: dict[str, dict[str, float]] = {}  # case -> path -> µs per record

    def parquet(records: list[Record], n: int):  # type: ignore[no-untyped-def]
        """``n`` rows cycling through ``records``, written to Parquet and read back."""
        path = str(work / f"raw-{len(summary)}-{n}")
        pick = (F.col("id") % len(records) + 1).cast("int")
        spark.range(n).select(F.element_at(F.array(*[F.lit(k) for k, _ in records]), pick).alias("key"),
                              F.element_at(F.array(*[F.lit(v) for _, v in records]), pick).alias("value"),
                              F.lit("__consumer_offsets").alias("topic"), F.lit(0).alias("partition"),
                              F.col("id").alias("offset"), F.current_timestamp().alias("timestamp")) \
            .write.mode("overwrite").parquet(path)
        return spark.read.parquet(path)

    for name, records in cases().items():
        rows, python_rows = args.rows, args.python_rows
        frames = tuple(parquet(records, n) for n in (rows // 5, rows))
        python_frames = tuple(parquet(records, n) for n in (python_rows // 5, python_rows))
        sizes = ", ".join(f"{len(k) + len(v):,}" for k, v in records)
        print(f"\n{name}: records of {sizes} bytes; {rows:,} rows ({python_rows:,} for the Python pass)")
        table = per_record_seconds(_decode_generic, records, args.seconds)
        generated = per_record_seconds(_decode_generated, records, args.seconds)
        print(f"  {'table-driven decode_record (1 core)':<42} {table * 1e6:10.2f} µs/record  "
              f"peak {peak_kib(_decode_generic, records):6.1f} KiB")
        print(f"  {'generated decode_record (1 core)':<42} {generated * 1e6:10.2f} µs/record  "
              f"peak {peak_kib(_decode_generated, records):6.1f} KiB")
        spark_seconds("plain Spark scan", rows, lambda frame: frame.agg(
            F.sum(F.length("key") + F.length("value"))).collect(), frames)
        python = spark_seconds("Spark family pass, Python (before)", python_rows, lambda frame: force(
            frame.select(*RAW_COLUMNS, record_type_column(F.col("key")).alias("record_type"))
            .mapInArrow(_per_record(NEWER_GROUP_RECORDS_FAMILY), NEWER_GROUP_RECORDS_FAMILY)), python_frames)
        # Where the JVM leaves rows to Python, the pass costs what Python does: timed on the Python pass's rows.
        some_left = force(families(first_stage(python_frames[0])).newer_group_records) > 0
        jvm_rows, jvm_frames = (python_rows, python_frames) if some_left else (rows, frames)
        jvm = spark_seconds("Spark family pass, JVM (now)", jvm_rows, two_stages, jvm_frames)
        print(f"  rows the JVM left to Python: {left[name]:,} of {jvm_rows:,}")
        print(f"  speed-up of the JVM pass: {table / jvm:.1f}x the table-driven decode_record, "
              f"{generated / jvm:.1f}x the generated one, {python / jvm:.1f}x the Python pass")
        print(f"  peak memory so far: Spark JVM {jvm_peak_mb(spark):,.0f} MB, Python workers "
              f"{python_workers_peak_mb(spark):,.0f} MB; load average {load()}", flush=True)
        summary.append(f"{name.split(':')[0]} {table / jvm:.1f}x")
        figures[name] = {"jvm_pass": jvm * 1e6, "python_pass": python * 1e6, "table_driven": table * 1e6,
                         "generated": generated * 1e6}
    spark.stop()
    print(f"\nload average {load()}")
    line = f"JVM family pass vs table-driven decode_record, per record: {'; '.join(summary)}"
    write_result(run, {"jvm_pass_us_per_record": {case: round(f["jvm_pass"], 3) for case, f in figures.items()}},
                 {"table_driven_us_per_record": {case: round(f["table_driven"], 3) for case, f in figures.items()},
                  "generated_us_per_record": {case: round(f["generated"], 3) for case, f in figures.items()},
                  "python_pass_us_per_record": {case: round(f["python_pass"], 3) for case, f in figures.items()}},
                 line)
    print(line)


if __name__ == "__main__":
    main()
