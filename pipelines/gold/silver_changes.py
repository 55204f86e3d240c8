"""What silver gained since gold last saw it: one Structured Streaming query over silver's change data feeds.

The engine, not offsetlake, keeps gold's bookkeeping: one streaming query reads the change data feeds of
the five silver tables gold is built from (``SOURCES``, Delta's streaming source with ``readChangeFeed``),
unioned into one frame, and its checkpoint (``checkpoint_path``) records how far each table has been read;
``pipelines.gold.refresh`` applies each micro-batch to gold in ``foreachBatch``. (An older warehouse may hold
a table ``gold._refresh_state``, which nothing reads.)
Exactly once as the ingest is: a batch's offsets are in the checkpoint before it runs, a batch that dies
half-way is run again over the same rows after a restart, and every gold write is idempotent (MERGEs that
apply only newer rows, groups replayed from all of their records in silver).

Why one query over a union and not one per table: a batch's rows of all five tables arrive together, so
the group tables are recomputed once per batch for all the groups any of them touched, and the sources'
offsets are committed atomically. The union's rows carry one struct column per table (``column_of``), null
for the other tables' rows: the frame is never written, only split again (``changed_rows``).

The change data feed, rather than Delta's plain streaming source: it says what kind each change is
(``_change_type``) and in which version (``_commit_version``). Silver is append-only, so every change is an
``insert``; anything else (a retention DELETE, an UPDATE by hand) makes the refresh rebuild gold from the
whole of silver instead of failing the stream, as the plain source would. OPTIMIZE's commits carry no
change data (``dataChange=false``) and are passed over by Delta itself.

A query is started fresh (``bootstrap_needed``) when it never planned a batch, or when a gold table is
missing (deleted to force a rebuild): gold is then rebuilt from all of silver at pinned versions and the
query starts reading at those versions (``startingVersion``; Delta refuses a version after the newest, so
the last version's rows are read once more, and dropped by ``after_versions`` before anything is written).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines.delta_tables import table_path
from pipelines.storage import join
from schemas import consumer_group_records, group_members, group_metadata, offset_commits, topic_names
from schemas.table_spec import TableSpec

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import DataType

SOURCES: tuple[TableSpec, ...] = (offset_commits.TABLE, group_metadata.TABLE, group_members.TABLE,
                                  consumer_group_records.TABLE, topic_names.TABLE)
"""The silver tables gold is built from, in the order the query's sources are declared (a checkpoint records
its sources by position: changing this tuple needs a fresh checkpoint, which ``bootstrap_needed`` cannot
tell; a new offsetlake that changes it must move ``checkpoint_path``)."""

#: The columns every row of the union carries beside the per-table structs.
SOURCE_TABLE, CHANGE_TYPE, COMMIT_VERSION = "_source_table", "_change_type", "_commit_version"


def checkpoint_path(settings: Settings) -> str:
    """The gold query's checkpoint: ``<warehouse>/_checkpoints/gold`` (the ingest's are per cluster and topic;
    gold is one for the warehouse, built from every cluster's silver rows)."""
    return join(settings.warehouse_uri, "_checkpoints", "gold")


def column_of(spec: TableSpec) -> str:
    """The union's struct column holding ``spec``'s rows: ``silver.group_members`` -> ``group_members``."""
    return spec.name.split(".", 1)[1]


def silver_change_stream(spark: SparkSession, settings: Settings, starting: dict[str, int] | None) -> DataFrame:
    """The streaming frame of every change to ``SOURCES``: ``_source_table``, ``_change_type``,
    ``_commit_version`` and one struct per table (``column_of``), null but for the row's own table.

    ``starting``: table name -> the Delta version to start reading at, for a query without a checkpoint
    (Delta ignores it once the checkpoint has offsets).
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    changes = {}
    for spec in SOURCES:
        reader = spark.readStream.format("delta").option("readChangeFeed", "true")
        if starting is not None:
            reader = reader.option("startingVersion", str(starting[spec.name]))
        changes[spec.name] = reader.load(table_path(settings, spec))
    # Each table's struct type, from the table as Delta reads it (its nested types may be more nullable than
    # the spec's: Delta keeps what the first write declared), every level nullable.
    types = {spec.name: _nullable(T.StructType([changes[spec.name].schema[name] for name in spec.schema.fieldNames()]))
             for spec in SOURCES}
    frames = [changes[spec.name].select(
        F.lit(spec.name).alias(SOURCE_TABLE), F.col(CHANGE_TYPE), F.col(COMMIT_VERSION),
        *[(F.struct(*[F.col(f"`{name}`") for name in other.schema.fieldNames()]) if other is spec
           else F.lit(None)).cast(types[other.name]).alias(column_of(other)) for other in SOURCES])
        for spec in SOURCES]
    return reduce(lambda a, b: a.unionByName(b), frames)


def _nullable(data_type: DataType) -> DataType:
    """``data_type`` with every field, array element and map value nullable, at every level: each branch of
    the union gives a table's struct one type (a table's NOT NULL columns are null in the other tables' rows),
    so that Spark's optimizer, pruning branches, keeps the plan's output types (else it warns, once per
    batch, that they differ)."""
    from pyspark.sql import types as T

    if isinstance(data_type, T.StructType):
        return T.StructType([T.StructField(f.name, _nullable(f.dataType), True, f.metadata) for f in data_type.fields])
    if isinstance(data_type, T.ArrayType):
        return T.ArrayType(_nullable(data_type.elementType), True)
    if isinstance(data_type, T.MapType):
        return T.MapType(_nullable(data_type.keyType), _nullable(data_type.valueType), True)
    return data_type


def after_versions(versions: dict[str, int]) -> Column:
    """The union's rows of versions after ``versions`` (table name -> version; a table not named: all rows)."""
    from pyspark.sql import functions as F

    keep = F.lit(True)
    for table, version in versions.items():
        keep = keep & ((F.col(SOURCE_TABLE) != table) | (F.col(COMMIT_VERSION) > version))
    return keep


@dataclass(frozen=True)
class BatchSummary:
    """What one micro-batch of the query holds, from one aggregate over it (``summarize``)."""

    rows: dict[str, int]  # table name -> inserted rows in the batch (tables with none are absent)
    versions: dict[str, int]  # table name -> the newest Delta version of it the batch read a row of
    other_changes: int  # rows whose change is not an insert: silver was changed, not appended to
    # (cluster_name, group) of the inserted rows that touch a group (``summarize``'s ``touching``), sorted
    groups: tuple[tuple[str, str], ...] = ()

    @property
    def total(self) -> int:
        return sum(self.rows.values())


def summarize(batch: DataFrame, touching: Column | None = None) -> BatchSummary:
    """Rows per table and kind of change, each table's newest version and, with ``touching`` (a struct of
    ``cluster_name`` and ``group`` over the batch's rows, null for a row that touches no group), the groups its
    inserted rows touch: in one job.

    The groups in the same aggregate rather than a job of their own (a distinct and a collect): a Spark job's
    fixed cost would sit on the critical path of every refresh with group records.
    """
    from pyspark.sql import functions as F

    rows: dict[str, int] = {}
    versions: dict[str, int] = {}
    groups: set[tuple[str, str]] = set()
    other = 0
    # Collected: a row per (table, kind of change), and with ``touching`` per touched group too: few rows.
    keys = [F.col(SOURCE_TABLE), F.col(CHANGE_TYPE)] + ([touching.alias("_touched")] if touching is not None else [])
    for row in batch.groupBy(*keys).agg(F.count(F.lit(1)).alias("rows"), F.max(COMMIT_VERSION).alias("version")
                                        ).collect():
        table = row[SOURCE_TABLE]
        versions[table] = max(versions.get(table, row["version"]), row["version"])
        if row[CHANGE_TYPE] == "insert":
            rows[table] = rows.get(table, 0) + row["rows"]
            touched = row["_touched"] if touching is not None else None
            if touched is not None:
                groups.add((touched["cluster_name"], touched["group"]))
        else:
            other += row["rows"]
    return BatchSummary(rows=rows, versions=versions, other_changes=other, groups=tuple(sorted(groups)))


def changed_rows(batch: DataFrame, summary: BatchSummary) -> dict[str, DataFrame]:
    """Table name -> the rows the batch inserted into it, with the table's own columns (tables with rows only)."""
    from pyspark.sql import functions as F

    by_name = {spec.name: spec for spec in SOURCES}
    return {name: batch.filter((F.col(SOURCE_TABLE) == name) & (F.col(CHANGE_TYPE) == "insert"))
            .select(f"`{column_of(by_name[name])}`.*") for name in summary.rows}


def bootstrap_needed(spark: SparkSession, settings: Settings, gold_tables_exist: bool) -> bool:
    """Whether gold must be rebuilt from all of silver and the query started afresh: a gold table is missing,
    or the query never planned a batch (``pipelines.checkpoints.planned_any_batch``)."""
    from pipelines.checkpoints import planned_any_batch

    return not gold_tables_exist or not planned_any_batch(spark, checkpoint_path(settings))
