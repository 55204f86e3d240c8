"""Silver from bronze: a streaming query over bronze's raw records that decodes them into the silver tables.

Silver is decoded from bronze through Delta's streaming source, so it can always be derived again from bronze.
``derive_silver`` runs, per cluster and source topic, a Structured Streaming query whose source is bronze
(Delta's streaming source) and whose ``foreachBatch`` (``write_silver``) decodes the batch's raw records and
appends each silver table's rows; the ingest runs it after each of its own micro-batches (Kafka -> bronze, a
plain copy), so silver is current when gold's query starts.

Exactly once, as the ingest: the query's checkpoint (``checkpoint_path``) holds each batch's range of bronze
before it runs, a batch is run again over the same range after a crash, and every silver append carries
``txnAppId = offsetlake-silver:<cluster>:<topic>`` and ``txnVersion = batch id``, so a table already written
is skipped. A query without a checkpoint reads bronze from its beginning, or, when silver already holds
rows of that cluster and topic (a warehouse whose ingest wrote silver itself, before this query existed),
from bronze's newest version on, without the records silver holds (``offsets_held``).

Below it, one function per silver table, each a projection of the decode: input is
``pipelines.decode`` output (one frame per record family) with ``cluster_name`` and ``ingested_at``
columns added to each; each function reads the family its table comes from and returns exactly the table's
columns (``schemas/<table>.py``). ``TABLES`` pairs each table with its function: ``write_silver`` writes
them per micro-batch, ``tables_from_bronze`` derives them again from all of bronze without writing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines import decode
from pipelines.checkpoints import topic_checkpoint
from pipelines.delta_tables import idempotent_append, latest_version, table_path
from pipelines.storage import Storage
from schemas import (
    consumer_group_records,
    group_members,
    group_metadata,
    offset_commits,
    offsets_topic_records,
    quarantine,
)

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


def checkpoint_path(settings: Settings, topic: str) -> str:
    """Silver's query for one cluster and source topic: beside the ingest's (``pipelines.ingest.checkpoint_path``)."""
    return topic_checkpoint(settings, topic, "silver")


def app_id(settings: Settings, topic: str) -> str:
    return f"offsetlake-silver:{settings.cluster_name}:{topic}"


# The silver table a decoded family's rows go to (failed rows of any family go to quarantine).
_FAMILY_TABLE = {"offset_commits": "offset_commits", "group_metadata": "group_metadata",
                 "newer_group_records": "consumer_group_records", "unroutable": "quarantine"}


def no_rows() -> dict[str, int]:
    """Rows per silver table, as ``write_silver`` counts them (``group_records``: group_metadata's and
    consumer_group_records' together)."""
    return {"offset_commits": 0, "group_metadata": 0, "consumer_group_records": 0, "quarantine": 0,
            "group_records": 0}


def derive_silver(spark: SparkSession, settings: Settings, topic: str) -> dict[str, int]:
    """Run silver's query for ``topic`` (this cluster's records of it in bronze) until silver holds everything
    bronze does; return the rows it added per silver table (``no_rows``' keys)."""
    from pyspark.sql import functions as F

    from pipelines.checkpoints import planned_any_batch, run_to_available

    checkpoint = checkpoint_path(settings, topic)
    reader = spark.readStream.format("delta")
    held: dict[int, int] = {}
    if not planned_any_batch(spark, checkpoint):
        Storage(spark).delete(checkpoint)  # a start without a plan: nothing read, nothing to keep
        held = offsets_held(spark, settings, topic)
        if held:
            reader = reader.option("startingVersion", str(latest_version(spark, settings, offsets_topic_records.TABLE)))
    bronze = reader.load(table_path(settings, offsets_topic_records.TABLE)).filter(
        (F.col("cluster_name") == settings.cluster_name) & (F.col("source_topic") == topic))
    for partition, offset in held.items():
        bronze = bronze.filter((F.col("source_partition") != partition) | (F.col("source_offset") > offset))
    totals = no_rows()

    def each_batch(batch: DataFrame, batch_id: int) -> None:
        for table, rows in write_silver(spark, settings, topic, batch, batch_id).items():
            totals[table] += rows

    run_to_available(bronze, checkpoint, f"offsetlake-silver-{settings.cluster_name}-{topic}", each_batch)
    return totals


def offsets_held(spark: SparkSession, settings: Settings, topic: str) -> dict[int, int]:
    """Source partition -> the highest offset of this cluster's ``topic`` any silver table holds (one job).

    Non-empty on a warehouse whose ingest wrote silver itself (an older offsetlake): silver's new query then
    starts at bronze's newest version, the records of that version and older already decoded dropped by these
    offsets (a batch of the old ingest may be in that version). One narrow window is left: a query killed
    after planning its first batch and before committing it runs that batch again without this filter (the
    checkpoint then exists), and the records of bronze's newest version at the upgrade would be decoded twice.
    """
    from functools import reduce

    from pyspark.sql import functions as F

    from pipelines.delta_tables import read_table, table_exists

    held = [read_table(spark, settings, spec).filter(
        (F.col("cluster_name") == settings.cluster_name) & (F.col("source_topic") == topic))
        .select("source_partition", "source_offset") for spec, _ in TABLES if table_exists(settings, spec)]
    if not held:
        return {}
    rows = reduce(lambda a, b: a.unionByName(b), held).groupBy("source_partition").agg(
        F.max("source_offset").alias("offset")).collect()
    return {row["source_partition"]: row["offset"] for row in rows}


def kafka_shaped(bronze: DataFrame) -> DataFrame:
    """Bronze rows with the columns of Spark's Kafka source, which the decode reads."""
    from pyspark.sql import functions as F

    return bronze.select("key", "value", F.col("source_topic").alias("topic"),
                         F.col("source_partition").alias("partition"), F.col("source_offset").alias("offset"),
                         F.col("record_timestamp").alias("timestamp"))


def write_silver(spark: SparkSession, settings: Settings, topic: str, bronze: DataFrame, batch_id: int
                 ) -> dict[str, int]:
    """Decode one batch of bronze rows and append each silver table's rows, each table at most once per batch
    id; return the rows per table (``no_rows``' keys).

    Decoded in two stages (``pipelines/decode.py``): the JVM's, one pass over the batch, cached and counted
    in one job (records per family), then the Python decoders only for the families where the JVM left rows,
    so each record is decoded once.
    """
    from pyspark.sql import functions as F

    from pipelines.decode import (
        FAMILY,
        PENDING,
        DecodedFamilies,
        complete,
        families,
        family_counts,
        first_stage,
        stage_counts,
    )

    txn = app_id(settings, topic)
    stage = first_stage(kafka_shaped(bronze)).persist()
    completed: DecodedFamilies | None = None
    try:
        pending: set[str] = set()
        per_family: dict[str, int] = {}
        for row in stage_counts(stage).collect():
            per_family[row[FAMILY]] = per_family.get(row[FAMILY], 0) + row["count"]
            if row[PENDING]:
                pending.add(row[FAMILY])
        completed = complete(families(stage), pending)
        # (family, status, rows): all decoded in the JVM, unless the Python stage had rows to decode.
        counts = [(family, "decoded", n) for family, n in per_family.items()]
        if pending:  # cached too, so that each table written from such a family decodes it once
            completed = DecodedFamilies(**{name: frame.persist() if name in pending else frame
                                           for name, frame in completed.frames().items()})
            counts = [(r["family"], r["status"], r["count"]) for r in family_counts(completed).collect()]
        decoded = for_cluster(completed, settings.cluster_name, F.current_timestamp())
        rows = no_rows()
        for family, status, n in counts:
            rows["quarantine" if status == "quarantined" else _FAMILY_TABLE[family]] += n
        rows["group_records"] = rows["group_metadata"] + rows["consumer_group_records"]
        added = {offset_commits.TABLE.name: rows["offset_commits"], group_metadata.TABLE.name: rows["group_metadata"],
                 group_members.TABLE.name: rows["group_metadata"],
                 consumer_group_records.TABLE.name: rows["consumer_group_records"],
                 quarantine.TABLE.name: rows["quarantine"]}
        # A table with nothing to add is not written: the decode of a batch is deterministic, so a replay
        # would find nothing for it either. Each append is idempotent on its own, so a batch that dies between
        # two is completed when run again.
        for spec, build in TABLES:
            if added[spec.name]:
                idempotent_append(build(decoded), settings, spec, txn, batch_id)
        return rows
    finally:
        if completed is not None:
            completed.unpersist()
        stage.unpersist()


def tables_from_bronze(spark: SparkSession, settings: Settings) -> dict[str, DataFrame]:
    """Each table of ``TABLES`` derived again from every record bronze holds, without writing (name -> rows).

    Silver can be derived again from bronze: bronze.offsets_topic_records keeps each record's raw key
    and value with its source position, exactly once; the same decode the ingest runs per micro-batch (the
    JVM's first stage once, then the Python decoders only for the families where it left rows;
    ``write_silver``) over all of them gives the rows silver's query wrote, ``ingested_at`` apart (now). So gold
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
            raw = kafka_shaped(bronze.filter(F.col("cluster_name") == cluster))
            # As the ingest does: the JVM's pass once, then Python only for the families where it left rows.
            stage = decode.first_stage(raw).localCheckpoint()
            pending = {row[decode.FAMILY] for row in decode.stage_counts(stage).filter(decode.PENDING).collect()}
            decoded = for_cluster(decode.complete(decode.families(stage), pending), cluster, F.current_timestamp())
            for spec, rows in TABLES:
                parts[spec.name].append(rows(decoded))
    return {spec.name: (reduce(lambda a, b: a.unionByName(b), parts[spec.name]) if parts[spec.name]
                        else spark.createDataFrame([], spec.schema)).localCheckpoint()
            for spec, _ in TABLES}
