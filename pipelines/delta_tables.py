"""Create the warehouse's Delta tables from ``schemas/`` and write to them idempotently."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines.storage import join
from schemas.table_spec import TableSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType


def table_path(settings: Settings, spec: TableSpec) -> str:
    """The table's location: ``<warehouse>/<layer>/<table>``, a URI or an absolute local path (as the
    warehouse setting is), for Spark, Delta and delta-rs alike."""
    return join(settings.warehouse_uri, spec.relative_path)


def table_exists(settings: Settings, spec: TableSpec) -> bool:
    """Whether ``spec``'s Delta table exists in the warehouse; no Spark: delta-rs looks for its log, with
    ``storage.delta_rs`` for a remote warehouse. A warehouse it cannot reach raises
    ``WarehouseUnreachable`` (one line naming the warehouse and the cause)."""
    from deltalake import DeltaTable

    try:
        return bool(DeltaTable.is_deltatable(table_path(settings, spec), dict(settings.storage.delta_rs) or None))
    except OSError as exc:
        raise WarehouseUnreachable(settings, exc) from exc


def newest_version(settings: Settings, spec: TableSpec) -> int:
    """The table's newest version from its log through delta-rs, no Spark job (``latest_version`` asks Spark's
    history, which in a new JVM takes seconds). delta-rs raises
    ``TableNotFoundError`` for a table that does not exist."""
    from deltalake import DeltaTable

    return int(DeltaTable(table_path(settings, spec), storage_options=dict(settings.storage.delta_rs) or None)
               .version())


class WarehouseUnreachable(RuntimeError):
    """The warehouse's storage did not answer (wrong address, missing credentials, no such bucket)."""

    def __init__(self, settings: Settings, cause: BaseException) -> None:
        first = " ".join(str(cause).split())[:300]
        super().__init__(f"warehouse {settings.warehouse_uri} cannot be read ({first}); check the setting "
                         "warehouse and the storage.delta_rs options (credentials, endpoint)")


def ensure_table(spark: SparkSession, settings: Settings, spec: TableSpec) -> str:
    """Create the table (with column comments and partitioning) unless it exists."""
    from delta.tables import DeltaTable

    path = table_path(settings, spec)
    if not DeltaTable.isDeltaTable(spark, path):
        builder = DeltaTable.createIfNotExists(spark).location(path).addColumns(delta_schema(spec))
        builder = builder.comment(spec.description)
        if spec.partition_by:
            builder = builder.partitionedBy(*spec.partition_by)
        if spec.cluster_by:
            builder = builder.clusterBy(*spec.cluster_by)
        for key, value in spec.properties:
            builder = builder.property(key, value)
        builder = builder.property(SPEC_PROPERTY, spec_fingerprint(spec))
        # The CHECK constraints as the properties Delta keeps them in: created with the table in one commit, not
        # one ALTER TABLE commit each (Delta enforces them so: tests/pipelines/test_delta_tables.py).
        for constraint in spec.constraints:
            builder = builder.property(constraint.property_key, constraint.expression)
        builder.execute()
    return path


def add_constraints(spark: SparkSession, spec: TableSpec, path: str, properties: Mapping[str, str]) -> None:
    """Give the table at ``path`` each of ``spec.constraints`` its ``properties`` lack (or hold differently).

    With Delta's own ``ALTER TABLE ... ADD CONSTRAINT``, which checks the rows already there: a table holding a
    row that violates one keeps going without it (a one-line warning; ``offsetlake check`` then runs the rule
    as a query and shows the rows).
    """
    from pyspark.errors import AnalysisException

    for constraint in spec.constraints:
        if constraint.held_in(properties):
            continue
        if constraint.property_key in properties:  # as an older offsetlake wrote it
            spark.sql(f"ALTER TABLE delta.`{path}` DROP CONSTRAINT {constraint.name}")
        try:
            spark.sql(f"ALTER TABLE delta.`{path}` ADD CONSTRAINT {constraint.name} CHECK ({constraint.expression})")
        except AnalysisException as error:
            if "DELTA_NEW_CHECK_CONSTRAINT_VIOLATION" not in str(error):
                raise
            print(f"offsetlake: warning: {spec.name} holds rows that violate {constraint.name}; not enforced at "
                  "write (offsetlake check shows them)", file=sys.stderr)


SPEC_PROPERTY = "offsetlake.spec"
"""The table property recording which spec a table was last made to (``spec_fingerprint``): how a process knows,
from the table itself, that ``evolve_table`` has nothing to do (reading a table's details and schema through Spark
costs a fraction of a second a table, at every refresh)."""


def spec_fingerprint(spec: TableSpec) -> str:
    """A digest of what ``ensure_table``/``evolve_table`` make of ``spec``: schema, layout, properties, constraints."""
    import hashlib
    import json

    made = {"schema": delta_schema(spec).jsonValue(), "partition_by": list(spec.partition_by),
            "cluster_by": list(spec.cluster_by), "properties": sorted(map(list, spec.properties)),
            "constraints": sorted([c.property_key, c.expression] for c in spec.constraints)}
    return hashlib.sha256(json.dumps(made, sort_keys=True).encode()).hexdigest()[:20]


def recorded_spec(settings: Settings, spec: TableSpec) -> str | None:
    """The table's ``SPEC_PROPERTY`` ("" when an older offsetlake made it without one), None when there is no table;
    read through delta-rs (no Spark job)."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        table = DeltaTable(table_path(settings, spec), storage_options=dict(settings.storage.delta_rs) or None)
    except TableNotFoundError:
        return None
    return table.metadata().configuration.get(SPEC_PROPERTY, "")


class LayoutChanged(RuntimeError):
    """A table an older offsetlake made is partitioned otherwise than its spec says. Delta cannot repartition a
    table in place; a table derived from others (gold) is rebuilt instead (``pipelines.gold.refresh``)."""

    def __init__(self, spec: TableSpec, path: str, partitioned_by: list[str]) -> None:
        def columns(names: list[str] | tuple[str, ...]) -> str:
            return f"partitioned by ({', '.join(names)})" if names else "not partitioned"

        super().__init__(f"{spec.name} at {path} is {columns(partitioned_by)}; offsetlake now makes it "
                         f"{columns(spec.partition_by)}")


def ensure_current_table(spark: SparkSession, settings: Settings, spec: TableSpec, *,
                         same_partitioning: bool = False) -> None:
    """Create the table as ``spec`` says, or bring one an older offsetlake made up to it (``evolve_table``), unless
    the table records that it was made to this very spec (``SPEC_PROPERTY``). ``same_partitioning``: raise
    ``LayoutChanged`` for a table partitioned otherwise than ``spec`` says, and leave it as it is (for the tables
    a caller can rebuild; any other keeps its partitioning, which Delta's writes follow)."""
    fingerprint = spec_fingerprint(spec)
    recorded = recorded_spec(settings, spec)
    if recorded == fingerprint:
        return
    if recorded is None:
        ensure_table(spark, settings, spec)
        return
    evolve_table(spark, settings, spec, same_partitioning=same_partitioning)
    spark.sql(f"ALTER TABLE delta.`{table_path(settings, spec)}` SET TBLPROPERTIES ('{SPEC_PROPERTY}' = "
              f"'{fingerprint}')")


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


def evolve_table(spark: SparkSession, settings: Settings, spec: TableSpec, *, same_partitioning: bool = False) -> None:
    """Bring a table made by an older offsetlake up to ``spec``: add missing columns, drop NOT NULLs it no longer
    has, set the table properties and add the CHECK constraints it lacks, cluster it as ``spec`` says.

    Tables gain columns (gold's ``group_type`` for KIP-848 groups, silver.partition_end_offsets'
    ``topic_id``); without this a write into a warehouse made before would fail on the schema. Added
    columns are nullable (Delta cannot add NOT NULL columns); rows written before get null in them
    (gold: until their groups are recomputed). Properties: e.g. deletion vectors on the MERGE targets, the change
    data feed on the silver tables gold reads. With ``same_partitioning``, a table partitioned otherwise than
    ``spec`` says raises ``LayoutChanged`` before anything is changed.
    """
    path = table_path(settings, spec)
    props: dict[str, str] = {}
    if spec.properties or spec.constraints or spec.cluster_by or same_partitioning:
        from delta.tables import DeltaTable

        detail = DeltaTable.forPath(spark, path).detail().head()
        partitioned_by = list(detail["partitionColumns"] or [])
        if same_partitioning and partitioned_by != list(spec.partition_by):
            raise LayoutChanged(spec, path, partitioned_by)
        props = detail["properties"]
        if spec.cluster_by and list(detail["clusteringColumns"] or []) != list(spec.cluster_by):
            spark.sql(f"ALTER TABLE delta.`{path}` CLUSTER BY ({', '.join(f'`{c}`' for c in spec.cluster_by)})")
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
    add_constraints(spark, spec, path, props)  # last: a constraint may name a column just added


def idempotent_append(frame: DataFrame, settings: Settings, spec: TableSpec, app_id: str, version: int,
                      user_metadata: str | None = None) -> None:
    """Append ``frame`` unless this (app_id, version) was already committed to the table; ``user_metadata`` goes
    into the commit (Delta's ``userMetadata``).

    Delta records the highest ``txnVersion`` per ``txnAppId`` in the table's log
    and silently skips a write whose version is not higher; a micro-batch that is
    re-run after a crash therefore writes each table at most once.
    """
    columns = [field.name for field in spec.schema.fields]
    writer = (frame.select(*columns).write.format("delta").mode("append")
              .option("txnAppId", app_id).option("txnVersion", str(version)))
    if user_metadata is not None:
        writer = writer.option("userMetadata", user_metadata)
    writer.save(table_path(settings, spec))


def user_metadata_entry(user_metadata: str | None, key: str) -> object | None:
    """``key``'s value in a Delta commit's ``userMetadata`` as offsetlake writes it (a JSON object); None when the
    commit has none, or other text (a commit by someone else)."""
    import json

    if not user_metadata:
        return None
    try:
        return json.loads(user_metadata).get(key)
    except (ValueError, AttributeError):
        return None


def read_table(spark: SparkSession, settings: Settings, spec: TableSpec) -> DataFrame:
    return spark.read.format("delta").load(table_path(settings, spec))


def read_version(spark: SparkSession, settings: Settings, spec: TableSpec, version: int) -> DataFrame:
    """The table as it was at ``version`` (Delta time travel)."""
    return spark.read.format("delta").option("versionAsOf", version).load(table_path(settings, spec))


def latest_version(spark: SparkSession, settings: Settings, spec: TableSpec) -> int | None:
    """The table's newest Delta version (its history's last entry), or None when the table does not exist."""
    from delta.tables import DeltaTable

    path = table_path(settings, spec)
    if not DeltaTable.isDeltaTable(spark, path):
        return None
    return int(DeltaTable.forPath(spark, path).history(1).head()["version"])
