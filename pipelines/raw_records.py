"""The smoke path: ``__consumer_offsets`` as raw records into one Delta table.

A first, undecoded landing of the topic that proves the stack end to end
(Kafka source, checkpointed streaming, Delta). The decoded bronze/silver
pipeline replaces it as the main job.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines.offsets_topic_source import OFFSETS_TOPIC, read_offsets_topic_stream

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class RawLanding:
    table_path: Path
    checkpoint_path: Path


def raw_landing(settings: Settings, topic: str = OFFSETS_TOPIC) -> RawLanding:
    base = settings.warehouse_path
    safe_topic = topic.replace("/", "_")
    return RawLanding(
        table_path=base / "raw" / "offsets_topic_records",
        checkpoint_path=base / "_checkpoints" / settings.cluster_name / safe_topic / "raw",
    )


def with_key_type(frame: "DataFrame") -> "DataFrame":
    """Add ``key_type``: the key's leading big-endian int16 (the record type)."""
    from pyspark.sql import functions as F

    first_two = F.substring(F.col("key"), 1, 2)
    return frame.withColumn(
        "key_type",
        F.when(F.length("key") >= 2, F.conv(F.hex(first_two), 16, 10).cast("int")),
    )


def land_raw_records(spark: "SparkSession", settings: Settings, topic: str = OFFSETS_TOPIC) -> RawLanding:
    """Drain what the topic holds now (``Trigger.AvailableNow``) into the raw Delta table."""
    from pyspark.sql import functions as F

    landing = raw_landing(settings, topic)
    stream = read_offsets_topic_stream(spark, settings, topic)
    rows = with_key_type(stream).select(
        F.lit(settings.cluster_name).alias("cluster_name"),
        "topic", "partition", "offset", "timestamp", "key_type", "key", "value",
        F.current_timestamp().alias("ingested_at"),
    )
    query = (
        rows.writeStream.format("delta")
        .option("checkpointLocation", str(landing.checkpoint_path))
        .trigger(availableNow=True)
        .start(str(landing.table_path))
    )
    query.awaitTermination()
    if query.exception() is not None:  # pragma: no cover - surfaced by awaitTermination
        raise RuntimeError(str(query.exception()))
    return landing


def records_per_key_type(spark: "SparkSession", landing: RawLanding) -> dict[int | None, int]:
    frame = spark.read.format("delta").load(str(landing.table_path))
    return {row["key_type"]: row["count"] for row in frame.groupBy("key_type").count().collect()}
