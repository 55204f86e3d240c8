"""Create the warehouse's Delta tables from ``schemas/`` and write to them idempotently."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from conf.settings import Settings
from schemas.table_spec import TableSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType


def table_path(settings: Settings, spec: TableSpec) -> Path:
    return settings.warehouse_path / spec.relative_path


def table_uri(settings: Settings, spec: TableSpec) -> str:
    """The table's location as a string for delta-rs (``deltalake.DeltaTable(uri, storage_options=...)``):
    ``<warehouse>/<layer>/<table>`` under a warehouse given as a URI (``s3://bucket/wh``), else the
    absolute local path ``table_path`` gives."""
    if "://" in settings.warehouse:
        return f"{settings.warehouse.rstrip('/')}/{spec.relative_path}"
    return str(table_path(settings, spec))


def table_exists(settings: Settings, spec: TableSpec) -> bool:
    """Whether ``spec``'s Delta table exists in the warehouse (its directory holds a Delta log); no Spark."""
    return (table_path(settings, spec) / "_delta_log").is_dir()


def ensure_table(spark: SparkSession, settings: Settings, spec: TableSpec) -> Path:
    """Create the table (with column comments and partitioning) unless it exists."""
    from delta.tables import DeltaTable

    path = table_path(settings, spec)
    if not DeltaTable.isDeltaTable(spark, str(path)):
        builder = DeltaTable.createIfNotExists(spark).location(str(path)).addColumns(delta_schema(spec))
        builder = builder.comment(spec.description)
        if spec.partition_by:
            builder = builder.partitionedBy(*spec.partition_by)
        for key, value in spec.properties:
            builder = builder.property(key, value)
        builder.execute()
    return path


def delta_schema(spec: TableSpec) -> StructType:
    """The table schema with every *nested* field nullable.

    Delta enforces NOT NULL only on top-level columns and refuses nested NOT NULL
    declarations (DELTA_NESTED_NOT_NULL_CONSTRAINT); top-level constraints stay.
    """
    from pyspark.sql import types as T

    def relax(data_type: T.DataType) -> T.DataType:
        if isinstance(data_type, T.StructType):
            return T.StructType([T.StructField(f.name, relax(f.dataType), True, f.metadata) for f in data_type])
        if isinstance(data_type, T.ArrayType):
            return T.ArrayType(relax(data_type.elementType), True)
        if isinstance(data_type, T.MapType):
            return T.MapType(relax(data_type.keyType), relax(data_type.valueType), True)
        return data_type

    return T.StructType([T.StructField(f.name, relax(f.dataType), f.nullable, f.metadata) for f in spec.schema])


def evolve_table(spark: SparkSession, settings: Settings, spec: TableSpec) -> None:
    """Bring a table made by an older offsetlake up to ``spec``: add missing columns, drop NOT NULLs it no longer
    has, set the table properties it lacks.

    Tables gain columns (gold's ``group_type`` for KIP-848 groups, silver.partition_end_offsets'
    ``topic_id``); without this a write into a warehouse made before would fail on the schema. Added
    columns are nullable (Delta cannot add NOT NULL columns); rows written before get null in them
    (gold: until their groups are recomputed). Properties: e.g. deletion vectors on the MERGE targets.
    """
    path = str(table_path(settings, spec))
    if spec.properties:
        from delta.tables import DeltaTable

        props = DeltaTable.forPath(spark, path).detail().select("properties").collect()[0]["properties"]
        missing_properties = [(key, value) for key, value in spec.properties if props.get(key) != value]
        if missing_properties:
            spark.sql(f"ALTER TABLE delta.`{path}` SET TBLPROPERTIES ("
                      + ", ".join(f"'{key}' = '{value}'" for key, value in missing_properties) + ")")
    have = {f.name: f for f in spark.read.format("delta").load(path).schema.fields}
    target = delta_schema(spec)
    missing = [f for f in target.fields if f.name not in have]
    if missing:
        def comment(f):  # type: ignore[no-untyped-def]
            return f.metadata.get("comment", "").replace("\\", "\\\\").replace("'", "\\'")

        spark.sql(f"ALTER TABLE delta.`{path}` ADD COLUMNS ("
                  + ", ".join(f"`{f.name}` {f.dataType.simpleString()} COMMENT '{comment(f)}'" for f in missing)
                  + ")")
    for f in target.fields:
        if f.name in have and f.nullable and not have[f.name].nullable:
            spark.sql(f"ALTER TABLE delta.`{path}` ALTER COLUMN `{f.name}` DROP NOT NULL")


def idempotent_append(frame: DataFrame, settings: Settings, spec: TableSpec, app_id: str, version: int) -> None:
    """Append ``frame`` unless this (app_id, version) was already committed to the table.

    Delta records the highest ``txnVersion`` per ``txnAppId`` in the table's log
    and silently skips a write whose version is not higher; a micro-batch that is
    re-run after a crash therefore writes each table at most once.
    """
    columns = [field.name for field in spec.schema.fields]
    (
        frame.select(*columns).write.format("delta").mode("append")
        .option("txnAppId", app_id).option("txnVersion", str(version))
        .save(str(table_path(settings, spec)))
    )


def read_table(spark: SparkSession, settings: Settings, spec: TableSpec) -> DataFrame:
    return spark.read.format("delta").load(str(table_path(settings, spec)))
