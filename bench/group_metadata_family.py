"""Benchmark: GroupMetadata records per record, as the Spark decode runs them.

    .venv/bin/python bench/group_metadata_family.py             # about 8 minutes
    .venv/bin/python bench/group_metadata_family.py --scale 0.2

Per record, for each case, on ONE core (Spark ``local[1]``; the pure decoders in this process):

* table-driven ``decode_record``: ``decoders.records._decode_generic``, what ``decode_record`` was
  before the generated readers (the baseline a tenfold gain per record is judged against), in this process;
* generated ``decode_record``: ``decoders.records._decode_generated``, what it runs first today;
* Spark family pass, Python: the GroupMetadata family as it was decoded before the JVM UDF: one
  ``mapInArrow`` per record through the generated readers, ``from_pylist`` into Arrow;
* Spark family pass, JVM: the GroupMetadata family as ingest decodes it today: the JVM stage
  (``pipelines.decode.first_stage``: ``GroupMetadataExpression``, Kafka's own classes), then the Python
  stage (``complete``) only if the JVM left records (none of these cases);
* plain Spark scan of the same rows, for scale (the two Spark figures include it).

A Spark figure is the marginal cost of a record: one job over ``rows`` copies of the record in
Parquet, read and forced (rows counted, members summed), and the same job over a fifth of them,
each the best of three runs after a warm-up run (JIT); the difference in wall time divided by the difference in
rows. A job's fixed costs (planning, starting Python workers: about 2 s on the loaded 2-core
machine, 50 µs a record over 40,000 rows) are thus left out, as they are of the pure decoders.
Cases: the 200-member / 1,000-partition range group of bench/decode.py's big-groups mix; the
2-member group of its mixed mix; bench/group_records.py's small (3 members; range and
cooperative-sticky) and big (200 members, cooperative-sticky, 20 topics) groups.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.decode import group_metadata_record  # noqa: E402
from bench.group_records import group_metadata, per_record_seconds  # noqa: E402
from bench.results import add_results_argument, start, write_result  # noqa: E402
from conf.settings import Settings, SparkSettings  # noqa: E402
from decoders.records import _decode_generated, _decode_generic  # noqa: E402

Record = tuple[bytes, bytes]


def cases() -> dict[str, tuple[Record, int]]:
    """name -> (record, rows in the Spark runs)."""
    return {
        "decode.py big-groups: 200 members, 1,000 partitions, range": (group_metadata_record(200, 1_000), 2_000),
        "decode.py mixed: 2 members, range": (group_metadata_record(2, 6), 40_000),
        "group_records.py small: 3 members, range": (group_metadata("billing", "range", 3, 2, 6, 4), 40_000),
        "group_records.py small: 3 members, cooperative-sticky": (
            group_metadata("shipping", "cooperative-sticky", 3, 3, 4, 4), 40_000),
        "group_records.py big: 200 members, cooperative-sticky": (
            group_metadata("analytics", "cooperative-sticky", 200, 20, 50, 5), 2_000),
    }


def spark_seconds(label: str, rows: int, job: Callable[[Any], Any], frames: tuple[Any, Any]) -> float:
    """Marginal seconds per record of ``job`` between ``frames`` (a fifth of ``rows``, then ``rows``)."""
    seconds = []
    for frame in frames:
        job(frame)
        runs = []
        for _ in range(3):
            started = time.perf_counter()
            job(frame)
            runs.append(time.perf_counter() - started)
        seconds.append(min(runs))
    per_record = (seconds[1] - seconds[0]) / (rows - rows // 5)
    print(f"  {label:<42} {per_record * 1e6:10.1f} µs/record  ({seconds[0]:.2f} s for {rows // 5:,} rows, "
          f"{seconds[1]:.2f} s for {rows:,})", flush=True)
    return per_record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every case's Spark rows by this")
    parser.add_argument("--seconds", type=float, default=1.0, help="time budget per pure-Python figure")
    add_results_argument(parser)
    args = parser.parse_args()
    run = start("group_metadata_family", args)

    from pyspark.sql import functions as F

    from pipelines.decode import PENDING, RAW_COLUMNS, _per_record, complete, families, first_stage, record_type_column
    from pipelines.spark_session import build_spark_session
    from schemas.decoded_records import GROUP_METADATA_FAMILY

    work = Path(tempfile.mkdtemp(prefix="offsetlake-bench-gm-"))
    atexit.register(shutil.rmtree, work, True)  # its data can take hundreds of MB of /tmp
    spark = build_spark_session(Settings(warehouse=str(work / "warehouse"), spark=SparkSettings(
        master="local[1]", shuffle_partitions=1, driver_memory="2g", log_level="ERROR")))
    print(f"GroupMetadata per record: Spark {spark.version}, master local[1]; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    def force(frame) -> int:  # type: ignore[no-untyped-def]
        """Rows counted, members summed; returns the rows left pending (first stage) or 0."""
        pending = F.count_if(F.col(PENDING)) if PENDING in frame.columns else F.lit(0)
        return frame.agg(F.count("*"), F.sum(F.size("group_metadata.value.members")), pending).first()[2]

    def two_stages(frame) -> None:  # type: ignore[no-untyped-def]
        """As ingest decodes: the JVM stage, then the Python stage only if the JVM left rows."""
        first = families(first_stage(frame))
        if force(first.group_metadata):
            force(complete(first, {"group_metadata"}).group_metadata)

    summary = []
    figures: dict[str, dict[str, float]] = {}  # case -> path -> µs per record
    for name, ((key, value), rows) in cases().items():
        rows = max(1, int(rows * args.scale))
        frames = []
        for n in (rows // 5, rows):
            path = str(work / f"raw-{len(summary)}-{n}")
            spark.range(n).select(F.lit(key).alias("key"), F.lit(value).alias("value"),
                                  F.lit("__consumer_offsets").alias("topic"), F.lit(0).alias("partition"),
                                  F.col("id").alias("offset"), F.current_timestamp().alias("timestamp")) \
                .write.mode("overwrite").parquet(path)
            frames.append(spark.read.parquet(path))
        print(f"\n{name}: {len(key) + len(value):,} bytes, {rows:,} rows")
        table = per_record_seconds(_decode_generic, [(key, value)], args.seconds)
        generated = per_record_seconds(_decode_generated, [(key, value)], args.seconds)
        print(f"  {'table-driven decode_record (1 core)':<42} {table * 1e6:10.1f} µs/record")
        print(f"  {'generated decode_record (1 core)':<42} {generated * 1e6:10.1f} µs/record")
        spark_seconds("plain Spark scan", rows, lambda frame: frame.agg(
            F.sum(F.length("key") + F.length("value"))).collect(), frames)
        python = spark_seconds("Spark family pass, Python (before)", rows, lambda frame: force(
            frame.select(*RAW_COLUMNS, record_type_column(F.col("key")).alias("record_type"))
            .mapInArrow(_per_record(GROUP_METADATA_FAMILY), GROUP_METADATA_FAMILY)), frames)
        jvm = spark_seconds("Spark family pass, JVM (now)", rows, two_stages, frames)
        print(f"  speed-up of the JVM pass: {table / jvm:.1f}x the table-driven decode_record, "
              f"{generated / jvm:.1f}x the generated one, {python / jvm:.1f}x the Python pass")
        summary.append(f"{name.split(':')[1].strip()} {table / jvm:.1f}x")
        figures[name] = {"jvm_pass": jvm * 1e6, "python_pass": python * 1e6, "table_driven": table * 1e6,
                         "generated": generated * 1e6}
    spark.stop()
    print(f"\nload average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    line = f"JVM family pass vs table-driven decode_record, per record: {'; '.join(summary)}"
    write_result(run, {"jvm_pass_us_per_record": {case: round(f["jvm_pass"], 3) for case, f in figures.items()}},
                 {"table_driven_us_per_record": {case: round(f["table_driven"], 3) for case, f in figures.items()},
                  "generated_us_per_record": {case: round(f["generated"], 3) for case, f in figures.items()},
                  "python_pass_us_per_record": {case: round(f["python_pass"], 3) for case, f in figures.items()}},
                 line)
    print(line)


if __name__ == "__main__":
    main()
