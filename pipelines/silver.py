"""Silver rows from decoded records: one function per silver table, each a projection of the decode.

Input is ``pipelines.decode.decode_raw_records`` output (one frame per record family)
with ``cluster_name`` and ``ingested_at`` columns added to each; each function reads
the family its table comes from and returns exactly the table's columns
(``schemas/<table>.py``). ``TABLES`` pairs each table with its function: the ingest writes
them per micro-batch, ``tables_from_bronze`` derives them again from bronze.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines import decode
from schemas import consumer_group_records, group_members, group_metadata, offset_commits, quarantine

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    from pipelines.decode import DecodedFamilies
    from schemas.table_spec import TableSpec


def for_cluster(families: DecodedFamilies, cluster_name: str, ingested_at: Column) -> DecodedFamilies:
    """``families`` with the two columns every silver row carries beside its decode: the cluster the records
    were read from and when they were ingested."""
    from pyspark.sql import functions as F

    return families.map(lambda frame: frame.withColumns({"cluster_name": F.lit(cluster_name),
                                                         "ingested_at": ingested_at}))


def _position() -> list[Column]:
    from pyspark.sql import functions as F

    return [
        F.col("cluster_name"), F.col("topic_name").alias("source_topic"), F.col("source_partition"),
        F.col("source_offset"), F.col("record_timestamp"),
    ]


def _ms(column: str) -> Column:
    from pyspark.sql import functions as F

    return F.timestamp_millis(F.col(column))


def offset_commit_rows(families: DecodedFamilies) -> DataFrame:
    from pyspark.sql import functions as F

    return decode.offset_commits(families).select(
        *_position(),
        "group", "topic", "partition", "offset", "leader_epoch", "metadata",
        _ms("commit_timestamp").alias("commit_timestamp"), _ms("expire_timestamp").alias("expire_timestamp"),
        "topic_id", "is_tombstone", "record_type", "value_version",
        F.to_date(F.col("record_timestamp")).alias("commit_date"),
    ).select(*offset_commits.TABLE.schema.fieldNames())


def group_metadata_rows(families: DecodedFamilies) -> DataFrame:
    from pyspark.sql import functions as F

    v = "group_metadata.value"
    return decode.group_metadata_records(families).select(
        *_position(),
        F.col("group_metadata.key.group").alias("group"),
        F.col(f"{v}.protocol_type").alias("protocol_type"), F.col(f"{v}.generation").alias("generation"),
        F.col(f"{v}.protocol").alias("protocol"), F.col(f"{v}.leader").alias("leader"),
        _ms(f"{v}.current_state_timestamp").alias("current_state_timestamp"),
        F.size(F.col(f"{v}.members")).alias("member_count"),
        F.col("is_tombstone"), F.col("value_version"),
    ).withColumn("member_count", F.when(F.col("is_tombstone"), None).otherwise(F.col("member_count"))) \
        .select(*group_metadata.TABLE.schema.fieldNames())


def group_member_rows(families: DecodedFamilies) -> DataFrame:
    from pyspark.sql import functions as F

    v = "group_metadata.value"
    members = decode.group_metadata_records(families).filter("NOT is_tombstone").select(
        *_position(), F.col("group_metadata.key.group").alias("group"),
        F.col(f"{v}.generation").alias("generation"), F.col(f"{v}.protocol_type").alias("protocol_type"),
        F.col(f"{v}.protocol").alias("protocol"), F.col(f"{v}.leader").alias("leader"),
        F.explode(F.col(f"{v}.members")).alias("m"),
    )
    sub, asg = "m.subscription", "m.assignment"
    return members.select(
        "cluster_name", "source_topic", "source_partition", "source_offset", "record_timestamp", "group",
        "generation", "protocol_type", "protocol",
        F.col("m.member_id").alias("member_id"),
        F.coalesce(F.col("m.member_id") == F.col("leader"), F.lit(False)).alias("is_leader"),
        F.col("m.group_instance_id").alias("group_instance_id"), F.col("m.client_id").alias("client_id"),
        F.col("m.client_host").alias("client_host"),
        F.col("m.rebalance_timeout").alias("rebalance_timeout_ms"),
        F.col("m.session_timeout").alias("session_timeout_ms"),
        F.col(f"{sub}.topics").alias("subscribed_topics"),
        F.col(f"{sub}.owned_partitions").alias("owned_partitions"),
        F.col(f"{sub}.generation_id").alias("subscription_generation_id"),
        F.col(f"{sub}.rack_id").alias("rack_id"),
        F.col(f"{asg}.partitions").alias("assigned_partitions"),
        F.col(f"{sub}.version").alias("subscription_version"),
        F.col(f"{asg}.version").alias("assignment_version"),
        F.col(f"{sub}.sticky_user_data.generation").alias("sticky_generation"),
        F.col("m.undecoded").alias("undecoded"), F.col("m.undecoded_reason").alias("undecoded_reason"),
        F.col("m.subscription_raw").alias("subscription_raw"), F.col("m.assignment_raw").alias("assignment_raw"),
    ).select(*group_members.TABLE.schema.fieldNames())


def consumer_group_record_rows(families: DecodedFamilies) -> DataFrame:
    from pyspark.sql import functions as F

    types = consumer_group_records.RECORD_TYPES
    frame = decode.newer_group_records(families)

    def from_type(path: str, only: tuple[str, ...] | None = None) -> Column:
        """``<type>.<path>`` of whichever record type the row is (null where the type lacks it)."""
        expr = None
        for name in only or types:
            struct = consumer_group_records.TABLE.schema[name].dataType
            if _has_path(struct, path):
                branch = F.when(F.col("type") == name, F.col(f"{name}.{path}"))
                expr = branch if expr is None else expr.when(F.col("type") == name, F.col(f"{name}.{path}"))
        return expr if expr is not None else F.lit(None)

    return frame.select(
        *_position(), F.col("type"), F.col("record_type"),
        from_type("key.group_id").alias("group_id"), from_type("key.member_id").alias("member_id"),
        F.col("is_tombstone"), F.col("value_version"),
        F.coalesce(from_type("value.epoch"), from_type("value.assignment_epoch")).alias("group_epoch"),
        from_type("value.member_epoch").alias("member_epoch"),
        from_type("value.previous_member_epoch").alias("previous_member_epoch"),
        from_type("value.state").alias("member_state"),
        *[F.col(name) for name in types],
    ).select(*consumer_group_records.TABLE.schema.fieldNames())


def _has_path(struct: object, path: str) -> bool:
    from pyspark.sql import types as T

    current = struct
    for part in path.split("."):
        if not isinstance(current, T.StructType) or part not in current.fieldNames():
            return False
        current = current[part].dataType
    return True


def quarantine_rows(families: DecodedFamilies) -> DataFrame:
    from pyspark.sql import functions as F

    return decode.quarantine(families).select(
        *_position(), F.col("record_type"), F.col("value_version"), F.col("quarantine_reason").alias("reason"),
        F.col("raw_key"), F.col("raw_value"), F.col("ingested_at"),
    ).select(*quarantine.TABLE.schema.fieldNames())


#: Each silver table the ingest writes from a micro-batch's decode, with the function that gives its rows.
TABLES: tuple[tuple[TableSpec, Callable[[DecodedFamilies], DataFrame]], ...] = (
    (offset_commits.TABLE, offset_commit_rows),
    (group_metadata.TABLE, group_metadata_rows),
    (group_members.TABLE, group_member_rows),
    (consumer_group_records.TABLE, consumer_group_record_rows),
    (quarantine.TABLE, quarantine_rows),
)


def tables_from_bronze(spark: SparkSession, settings: Settings) -> dict[str, DataFrame]:
    """Each table of ``TABLES`` derived again from every record bronze holds, without writing (name -> rows).

    Issue 14: silver can be re-derived from bronze. bronze.offsets_topic_records keeps each record's raw key
    and value with its source position, exactly once; the same decode the ingest runs per micro-batch (the
    JVM's first stage once, then the Python decoders only for the families where it left rows; ingest's
    ``write_batch``) over all of them gives the rows the ingest wrote, ``ingested_at`` apart (now). So gold
    rebuilt from these frames (``pipelines.gold.refresh.full_rebuild``) is gold rebuilt from bronze. Each
    cluster's records are decoded with its own ``cluster_name`` (one warehouse can hold several clusters). The
    frames are checkpointed (``localCheckpoint``): every gold table reads several of them, and the decode runs
    once.
    """
    from functools import reduce

    from pyspark.sql import functions as F

    from pipelines.delta_tables import read_table, table_exists
    from schemas import offsets_topic_records

    parts: dict[str, list[DataFrame]] = {spec.name: [] for spec, _ in TABLES}
    if table_exists(settings, offsets_topic_records.TABLE):
        bronze = read_table(spark, settings, offsets_topic_records.TABLE)
        for [cluster] in bronze.select("cluster_name").distinct().collect():
            raw = bronze.filter(F.col("cluster_name") == cluster).select(
                "key", "value", F.col("source_topic").alias("topic"), F.col("source_partition").alias("partition"),
                F.col("source_offset").alias("offset"), F.col("record_timestamp").alias("timestamp"))
            # As the ingest does: the JVM's pass once, then Python only for the families where it left rows.
            stage = decode.first_stage(raw).localCheckpoint()
            pending = {row[decode.FAMILY] for row in decode.stage_counts(stage).filter(decode.PENDING).collect()}
            decoded = for_cluster(decode.complete(decode.families(stage), pending), cluster, F.current_timestamp())
            for spec, rows in TABLES:
                parts[spec.name].append(rows(decoded))
    return {spec.name: (reduce(lambda a, b: a.unionByName(b), parts[spec.name]) if parts[spec.name]
                        else spark.createDataFrame([], spec.schema)).localCheckpoint()
            for spec, _ in TABLES}
