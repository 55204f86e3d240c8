"""Decode a DataFrame of raw ``__consumer_offsets`` records into typed columns, in Spark.

Records are **routed by the key's record type before any decoding**: the
type is the key's leading int16, computed in the JVM (``record_type_column``), and each
family has its own narrow schema (``schemas.decoded_records``):

* **offset commits** (types 0, 1; over 90% of real traffic): flat columns, decoded
  in the JVM by Kafka's own generated classes (``OffsetCommitExpression`` in
  ``jvm/offset-commit-udf``, a Catalyst expression built at set-up, Kafka shaded), no
  Python at all. It accepts a record only when Kafka's classes write it back byte for
  byte; the rare record it does not accept goes to the Python decoders
  (``decoders.offset_commit_arrow``'s numpy decode, then the pure decoder, which decodes
  it or names the precise error);
* **GroupMetadata** (type 2): one nested struct with its members and decoded
  consumer-protocol bytes, decoded in the JVM by Kafka's own generated classes
  (``GroupMetadataExpression`` in the same jar, same contract: exact write-back or null); the
  records it leaves (sticky assignors' user data, future consumer-protocol versions,
  malformed bytes) go per record through the generated readers (``decoders.readers``);
* **the newer group protocols** (KIP-848 consumer, KIP-932 share, KIP-1071 streams
  records): one struct column per record type, the shape of
  ``silver.consumer_group_records``, decoded in the JVM by Kafka's own generated classes
  (``GroupRecordExpression``, same jar, same contract); the records it leaves (type 9, which
  only Kafka 4.0 wrote; tags newer than the shaded Kafka; malformed bytes) go per record
  through the Python decoders;
* **unroutable** records (null or short key, unknown type): straight to quarantine.

Two stages, so that each record is decoded once and read once: ``first_stage`` routes
and decodes every record in the JVM in one projection and marks the rows it leaves
(``PENDING``, raw bytes kept); ``families`` splits it; ``complete`` decodes the pending
rows in Python workers, only for the families that have any. ``ingest`` caches the first
stage and counts it in one job (``stage_counts``) before completing; ``decode_raw_records``
does both in one plan for small inputs.

Each family keeps three quarantine columns (reason, raw key, raw value): a record
that fails to decode stays in its family and is split off by ``quarantine``.
Before this split, one union schema (34 columns, 206 leaf fields) made every offset
commit carry 21 all-null nested columns through Arrow, the JVM and ``persist()``.

Callers that read several views of the result (ingest writes five tables from it)
should ``persisted()`` it once, or each family's decode runs once per view.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Any

from decoders.layout import RECORD_SPECS, Shape, struct_shape
from schemas.decoded_records import (
    GROUP_METADATA_FAMILY,
    GROUP_METADATA_RECORD_TYPE,
    NEWER_GROUP_RECORD_TYPE_IDS,
    NEWER_GROUP_RECORD_TYPES,
    NEWER_GROUP_RECORDS_FAMILY,
    OFFSET_COMMIT_FAMILY,
    OFFSET_COMMIT_FIELDS,
    OFFSET_COMMIT_RECORD_TYPES,
    OFFSET_COMMIT_TYPES,
    QUARANTINE_FIELDS,
    UNROUTABLE_FAMILY,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame
    from pyspark.sql import types as T

RAW_COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp")


def _udf_type() -> T.StructType:
    from pyspark.sql import types as T

    return T.StructType([*OFFSET_COMMIT_FIELDS.fields, T.StructField("value_version", T.ShortType()),
                         T.StructField("is_tombstone", T.BooleanType())])


def _group_metadata_udf_type() -> T.StructType:
    """What ``GroupMetadataExpression`` returns: the family's columns that depend on the record's bytes."""
    from pyspark.sql import types as T

    return T.StructType([GROUP_METADATA_FAMILY["value_version"], GROUP_METADATA_FAMILY["is_tombstone"],
                         GROUP_METADATA_FAMILY["group_metadata"]])


def _group_record_udf_type() -> T.StructType:
    """What ``GroupRecordExpression`` decodes to: value_version, is_tombstone and one struct per newer record type
    (it returns the record's struct as bytes, which ``GROUP_RECORD_STRUCT_UDF`` shows as its column)."""
    from pyspark.sql import types as T

    return T.StructType([NEWER_GROUP_RECORDS_FAMILY["value_version"], NEWER_GROUP_RECORDS_FAMILY["is_tombstone"],
                         *[NEWER_GROUP_RECORDS_FAMILY[name] for name in NEWER_GROUP_RECORD_TYPES]])


def _group_record_udf_spec() -> str:
    """What ``GroupRecordExpression`` must know of the reference beyond the Spark type, one tab-separated line each:
    the value versions it reads (``versions <record> <low> <high>``) and every tagged field with its default
    (``tagged <record>.value.<field>... <json>``: an int, ``[]``, ``null``, or ``-`` for another default), which
    a record decodes to when its tag is absent and which the JVM uses for a tag newer than its Kafka classes."""
    from decoders.layout import BY_NAME
    from decoders.spec import ArrayOf, StructSpec

    lines = []

    def tagged_defaults(struct: StructSpec, path: str) -> None:
        for f in struct.fields:
            element = f.type.element if isinstance(f.type, ArrayOf) else f.type
            if isinstance(element, StructSpec):
                tagged_defaults(element, f"{path}.{f.name}")
            if f.tag is None:
                continue
            default = f.default
            if default is None or default == []:
                text = "null" if default is None else "[]"
            elif isinstance(default, int) and not isinstance(default, bool):
                text = str(default)
            else:
                text = "-"
            lines.append(f"tagged\t{path}.{f.name}\t{text}")

    for name in NEWER_GROUP_RECORD_TYPES:
        spec = BY_NAME[name]
        assert spec.value_versions.high is not None
        lines.append(f"versions\t{name}\t{spec.value_versions.low}\t{spec.value_versions.high}")
        tagged_defaults(spec.value, f"{name}.value")
    return "\n".join(lines)


_QUARANTINE_COLUMNS = tuple(f.name for f in QUARANTINE_FIELDS)


RECORD_TYPE_UDF = "offsetlake_record_type"
OFFSET_COMMIT_UDF = "offsetlake_decode_offset_commit"
GROUP_METADATA_UDF = "offsetlake_decode_group_metadata"
GROUP_RECORD_UDF = "offsetlake_decode_group_record"
GROUP_RECORD_STRUCT_UDF = "offsetlake_group_record_struct"


def register_jvm_udfs(spark: Any) -> None:
    """Register the JVM functions of ``jvm/offset-commit-udf`` (the jar is on ``spark.jars``,
    pipelines/spark_session.py); idempotent. ``build_spark_session`` calls it.

    The three decodes and the record type are Catalyst expressions (``RecordDecodeExpression`` and
    ``RecordTypeExpression`` say why), registered by their own static methods in the session's
    function registry; the decodes report themselves nondeterministic although they are not:
    Spark's optimizer would otherwise inline a struct-valued function into every ``d.field`` that
    reads it (CollapseProject), running the decode once per output column. Classes are loaded
    through the thread's context class loader, which holds ``spark.jars``.
    """

    from jvm.artifacts import (
        GROUP_METADATA_EXPRESSION_CLASS,
        GROUP_RECORD_EXPRESSION_CLASS,
        OFFSET_COMMIT_EXPRESSION_CLASS,
        RECORD_TYPE_EXPRESSION_CLASS,
    )

    gateway = spark.sparkContext._gateway
    jvm = spark.sparkContext._jvm
    loader = jvm.Thread.currentThread().getContextClassLoader()

    def jvm_class(name: str) -> Any:
        return jvm.java.lang.Class.forName(name, True, loader)

    def call_static(class_name: str, method: str, *arguments: tuple[str, Any]) -> Any:
        """``class_name.method(arguments)``, each argument given as (its declared class, its value)."""
        types = gateway.new_array(jvm.java.lang.Class, len(arguments))
        values = gateway.new_array(jvm.java.lang.Object, len(arguments))
        for i, (declared, value) in enumerate(arguments):
            types[i], values[i] = jvm_class(declared), value
        return jvm_class(class_name).getMethod(method, types).invoke(None, values)

    session = ("org.apache.spark.sql.classic.SparkSession", spark._jsparkSession)
    call_static(RECORD_TYPE_EXPRESSION_CLASS, "register", session)
    call_static(OFFSET_COMMIT_EXPRESSION_CLASS, "register", session)
    group_type = spark._jsparkSession.parseDataType(_group_metadata_udf_type().json())
    call_static(GROUP_METADATA_EXPRESSION_CLASS, "register", session,
                ("org.apache.spark.sql.types.DataType", group_type))
    newer_type = spark._jsparkSession.parseDataType(_group_record_udf_type().json())
    call_static(GROUP_RECORD_EXPRESSION_CLASS, "register", session,
                ("org.apache.spark.sql.types.DataType", newer_type), ("java.lang.String", _group_record_udf_spec()))


def record_type_column(key: Column) -> Column:
    """The key's leading big-endian int16, null when the key is shorter than two bytes (a JVM expression)."""
    from pyspark.sql import functions as F

    return F.call_function(RECORD_TYPE_UDF, key)


PENDING = "decoded_in_python"
"""Column of the first stage (``first_stage``): true for a row the JVM left to the Python decoders."""

FAMILY_SCHEMAS = {"offset_commits": OFFSET_COMMIT_FAMILY, "group_metadata": GROUP_METADATA_FAMILY,
                  "newer_group_records": NEWER_GROUP_RECORDS_FAMILY, "unroutable": UNROUTABLE_FAMILY}


@dataclass(frozen=True)
class DecodedFamilies:
    """Each family's decode of one set of raw records, failed rows included (``quarantine_reason`` set).

    From ``families`` (the first stage split) each frame also has the ``PENDING`` column; ``complete``
    turns those frames into the final ones.
    """

    offset_commits: DataFrame  # OFFSET_COMMIT_FAMILY
    group_metadata: DataFrame  # GROUP_METADATA_FAMILY
    newer_group_records: DataFrame  # NEWER_GROUP_RECORDS_FAMILY
    unroutable: DataFrame  # UNROUTABLE_FAMILY

    def frames(self) -> dict[str, DataFrame]:
        return {"offset_commits": self.offset_commits, "group_metadata": self.group_metadata,
                "newer_group_records": self.newer_group_records, "unroutable": self.unroutable}

    def map(self, transform: Callable[[DataFrame], DataFrame]) -> DecodedFamilies:
        """The same transform (e.g. adding ``cluster_name``) applied to every family."""
        return DecodedFamilies(**{name: transform(frame) for name, frame in self.frames().items()})

    def persisted(self) -> DecodedFamilies:
        return self.map(lambda frame: frame.persist())

    def unpersist(self) -> None:
        for frame in self.frames().values():
            frame.unpersist()


def decode_raw_records(raw: DataFrame) -> DecodedFamilies:
    """Raw records (key, value, topic, partition, offset, timestamp) -> one decoded frame per family.

    Both stages in one plan: ``complete(families(first_stage(raw)))``. The first stage is then
    evaluated once per family and once more for the rows left to Python; callers with much data
    persist the first stage and count it first (silver's ``write_silver``), so that each record is
    decoded once and a family with no pending row never starts a Python worker.
    """
    return complete(families(first_stage(raw)))


FAMILY = "family"
"""Column of the first stage: the family a record belongs to, by its key's record type, as its index in
``FAMILIES`` (a tinyint: ``stage_counts`` turns it back into the name after counting).

A code rather than the name because every row carries it and is filtered and grouped by it: grouping the
first stage by the code instead of the name string is faster (bench/decode.py measures it)."""

FAMILIES = ("offset_commits", "group_metadata", "newer_group_records", "unroutable")


def _sql_in(column: str, values: Collection[int]) -> str:
    return f"{column} IN ({', '.join(str(v) for v in sorted(values))})"


def _sql_family_code(name: str) -> str:
    """``family_code`` as SQL text."""
    return f"CAST({FAMILIES.index(name)} AS TINYINT)"


def _first_stage_sql() -> tuple[list[str], list[str], list[str]]:
    """The first stage's three projections as SQL expression text (see ``first_stage`` for why text)."""
    is_commit = _sql_in("record_type", OFFSET_COMMIT_RECORD_TYPES)
    is_group = f"record_type = {GROUP_METADATA_RECORD_TYPE}"
    is_newer = _sql_in("record_type", NEWER_GROUP_RECORD_TYPE_IDS)
    raw = [f"`{name}`" for name in RAW_COLUMNS]
    routed = [*raw, f"{RECORD_TYPE_UDF}(key) AS record_type"]
    family = (f"CASE WHEN {is_commit} THEN {_sql_family_code('offset_commits')}"
              f" WHEN {is_group} THEN {_sql_family_code('group_metadata')}"
              f" WHEN {is_newer} THEN {_sql_family_code('newer_group_records')}"
              f" ELSE {_sql_family_code('unroutable')} END AS {FAMILY}")
    # Each JVM decode runs only for its own family's rows (CASE WHEN evaluates one branch).
    decoded = [*raw, "record_type", family,
               f"CASE WHEN {is_commit} THEN {OFFSET_COMMIT_UDF}(key, value) END AS `commit`",
               f"CASE WHEN {is_group} THEN {GROUP_METADATA_UDF}(key, value) END AS `group`",
               f"CASE WHEN {is_newer} THEN {GROUP_RECORD_UDF}(key, value) END AS `newer`"]
    left = (f"CASE WHEN {FAMILY} = {_sql_family_code('offset_commits')} THEN `commit` IS NULL"
            f" WHEN {FAMILY} = {_sql_family_code('group_metadata')} THEN `group` IS NULL"
            f" WHEN {FAMILY} = {_sql_family_code('newer_group_records')} THEN `newer` IS NULL ELSE true END")
    stage = ["topic AS topic_name", "partition AS source_partition", "offset AS source_offset",
             "`timestamp` AS record_timestamp", "record_type", FAMILY, "`commit`", "`group`", "`newer`",
             f"{left} AS {PENDING}", f"CASE WHEN {left} THEN key END AS raw_key",
             f"CASE WHEN {left} THEN value END AS raw_value"]
    return routed, decoded, stage


def first_stage(raw: DataFrame) -> DataFrame:
    """The first stage: one row per record, routed to its family and decoded in the JVM where Kafka's classes can.

    One projection, no Python, one pass over the records whatever families they hold: the source
    position, ``record_type``, ``FAMILY``, the JVM's struct for an offset commit (``commit``), a
    GroupMetadata record (``group``) or a newer group record (``newer``; each null for every other
    row: a null bit in the JVM, nothing in Arrow, since no Python reads this frame), and ``PENDING``
    with the raw bytes for each row the JVM does not decode exactly (and every unroutable record: no
    JVM decoder for them). ``families`` splits it; ``stage_counts`` counts it.

    Written as SQL text, not ``pyspark.sql.functions``: built from Column objects, this plan would take
    about a thousand py4j calls per micro-batch, a fifth of the whole decode of bench/decode.py's commits
    (recorded in CHANGELOG.md); each text expression is one call, parsed in the JVM.
    """
    routed, decoded, stage = _first_stage_sql()
    return raw.selectExpr(*routed).selectExpr(*decoded).selectExpr(*stage)


def families(stage: DataFrame) -> DecodedFamilies:
    """The first stage split by family, each in its family's schema plus ``PENDING``."""
    from pyspark.sql import functions as F

    position = ["topic_name", "source_partition", "source_offset", "record_timestamp", "record_type"]
    quarantine_columns = [F.lit(None).cast("string").alias("quarantine_reason"), "raw_key", "raw_value", PENDING]

    def of(name: str) -> DataFrame:
        return stage.filter(F.col(FAMILY) == family_code(name))

    def all_pending(name: str) -> DataFrame:
        kept = {*position, "raw_key", "raw_value"}
        return of(name).select(*[F.col(f.name) if f.name in kept else F.lit(None).cast(f.dataType).alias(f.name)
                                 for f in FAMILY_SCHEMAS[name].fields], F.col(PENDING))

    return DecodedFamilies(
        offset_commits=of("offset_commits").select(
            *position,
            F.when(F.col("record_type") == 1, "offset_commit").otherwise("legacy_offset_commit").alias("type"),
            "commit.value_version", "commit.is_tombstone",
            *[f"commit.{name}" for name in OFFSET_COMMIT_FIELDS.fieldNames()], *quarantine_columns),
        group_metadata=of("group_metadata").select(
            *position, F.lit("group_metadata").alias("type"), "group.value_version", "group.is_tombstone",
            "group.group_metadata", *quarantine_columns),
        newer_group_records=of("newer_group_records").select(
            *position, F.when(F.col("newer").isNotNull(), _type_name(F.col("record_type"))).alias("type"),
            "newer.value_version", "newer.is_tombstone", *_record_structs(), *quarantine_columns),
        unroutable=all_pending("unroutable"),
    )


def _record_structs() -> list[Column]:
    """The newer family's struct columns from the JVM decode's record bytes: the row's own type set, others null."""
    from pyspark.sql import functions as F

    from decoders.layout import BY_NAME

    return [F.when(F.col("record_type") == BY_NAME[name].type_id,
                   F.call_function(GROUP_RECORD_STRUCT_UDF, F.col("newer.record"), F.lit(name))).alias(name)
            for name in NEWER_GROUP_RECORD_TYPES]


def _type_name(record_type: Column) -> Column:
    """A newer group record's type name (``consumer_group_metadata`` ...) from its type id."""
    from pyspark.sql import functions as F

    from decoders.layout import BY_NAME

    names = F.create_map(*[F.lit(x) for name in NEWER_GROUP_RECORD_TYPES for x in (BY_NAME[name].type_id, name)])
    return F.element_at(names, record_type.cast("int"))


def complete(first: DecodedFamilies, pending: Collection[str] | None = None) -> DecodedFamilies:
    """The second stage: the rows the JVM left (``PENDING``) decoded by the Python decoders.

    ``first``: ``families`` of the first stage, with no column added (add them to the result).
    ``pending``: the families that have such rows (e.g. from ``family_counts`` of the first stage);
    the others keep only their JVM rows and never start a Python worker. ``None``: every family may.
    The Python pass decodes a record as the reference decoder does or quarantines it with its reason.
    """
    from pyspark.sql import functions as F

    def finish(name: str, frame: DataFrame) -> DataFrame:
        schema = FAMILY_SCHEMAS[name]
        done = frame.filter(~F.col(PENDING)).drop(PENDING)
        if pending is not None and name not in pending:
            return done
        raw = frame.filter(F.col(PENDING)).select(
            F.col("raw_key").alias("key"), F.col("raw_value").alias("value"), F.col("topic_name").alias("topic"),
            F.col("source_partition").alias("partition"), F.col("source_offset").alias("offset"),
            F.col("record_timestamp").alias("timestamp"),
        )
        body = decode_offset_commit_batches if name == "offset_commits" else _per_record(schema)
        return done.unionByName(raw.mapInArrow(body, schema))

    return DecodedFamilies(**{name: finish(name, frame) for name, frame in first.frames().items()})


def family_code(name: str) -> Column:
    """The ``FAMILY`` value of the family ``name`` (one of ``FAMILIES``), as a tinyint literal."""
    from pyspark.sql import functions as F

    return F.lit(FAMILIES.index(name)).cast("tinyint")


def family_name(code: Column) -> Column:
    """The name of the family whose ``FAMILY`` code is ``code``."""
    from pyspark.sql import functions as F

    return F.element_at(F.array(*[F.lit(name) for name in FAMILIES]), code.cast("int") + 1)


def stage_counts(stage: DataFrame) -> DataFrame:
    """(family, pending, source_partition, count) of the first stage, in one job: what ``write_silver`` writes where.

    Grouped by one bigint packing the three (family code << 33 | pending << 32 | partition + 2^31, so
    that any int partition fits the low 32 bits and casts back within range under ANSI), unpacked
    on the few counted rows (SQL text, as in ``first_stage``): Spark's hash aggregate on the three
    columns costs more than on one long. Nothing else is aggregated here: this is the job bench/decode.py
    times as the decode, and a max(record_timestamp) added to it made it measurably slower (both recorded
    in CHANGELOG.md); the ingest takes a batch's newest record time from its cached Kafka batch instead.
    """
    names = ", ".join(f"'{name}'" for name in FAMILIES)
    packed = (f"shiftleft(CAST({FAMILY} AS BIGINT), 33) | shiftleft(CAST({PENDING} AS BIGINT), 32)"
              " | (CAST(source_partition AS BIGINT) + 2147483648) AS counted")
    counts = stage.selectExpr(packed).groupBy("counted").count()
    return counts.selectExpr(f"element_at(array({names}), CAST(shiftright(counted, 33) AS INT) + 1) AS {FAMILY}",
                             f"(shiftright(counted, 32) & 1) = 1 AS {PENDING}",
                             "CAST((counted & 4294967295) - 2147483648 AS INT) AS source_partition", "count")


def offset_commits(families: DecodedFamilies) -> DataFrame:
    """Decoded offset commits, flat, with their source position."""
    return _decoded(families.offset_commits)


def group_metadata_records(families: DecodedFamilies) -> DataFrame:
    return _decoded(families.group_metadata)


def newer_group_records(families: DecodedFamilies) -> DataFrame:
    return _decoded(families.newer_group_records)


def quarantine(families: DecodedFamilies) -> DataFrame:
    """Every record that did not decode, whatever its family, with its raw bytes and the decoder's reason."""
    from pyspark.sql import functions as F

    columns = ["topic_name", "source_partition", "source_offset", "record_timestamp", "record_type", "value_version",
               *_QUARANTINE_COLUMNS]
    extra = [c for c in families.unroutable.columns if c not in UNROUTABLE_FAMILY.fieldNames()]
    failed = [frame.filter(F.col("quarantine_reason").isNotNull()).select(*columns, *extra)
              for frame in families.frames().values()]
    return reduce(lambda left, right: left.unionByName(right), failed)


def family_counts(families: DecodedFamilies) -> DataFrame:
    """(family, status, count) over every family, as one Spark job.

    ``status``: ``decoded``, ``quarantined``, or -- on the first stage's ``families`` --
    ``pending`` for the rows the JVM left to the Python decoders.
    """
    from pyspark.sql import functions as F

    def status(frame: DataFrame) -> Column:
        done = F.when(F.col("quarantine_reason").isNull(), "decoded").otherwise("quarantined")
        return F.when(F.col(PENDING), "pending").otherwise(done) if PENDING in frame.columns else done

    parts = [frame.select(F.lit(name).alias("family"), status(frame).alias("status"))
             for name, frame in families.frames().items()]
    return reduce(lambda left, right: left.unionByName(right), parts).groupBy("family", "status").count()


def _decoded(frame: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    return frame.filter(F.col("quarantine_reason").isNull()).drop(*_QUARANTINE_COLUMNS)


# ------------------------------------------------------------------ inside the Python workers
def decode_offset_commit_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body for offset commits: vectorized rows, then the few it did not accept, per record."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    from decoders.offset_commit_arrow import decode_offset_commits

    schema = to_arrow_schema(OFFSET_COMMIT_FAMILY)
    for batch in batches:
        commits = decode_offset_commits(batch.column("key"), batch.column("value"))
        if commits.ok.all():
            yield _offset_commit_batch(batch, commits, schema)
            continue
        if commits.ok.any():
            yield _offset_commit_batch(batch.filter(pa.array(commits.ok)), commits, schema, pa.array(commits.ok))
        yield _per_record_batch(batch.filter(pa.array(~commits.ok)), schema)


def _offset_commit_batch(good: pa.RecordBatch, commits: Any, schema: pa.Schema,
                         ok: pa.Array | None = None) -> pa.RecordBatch:
    """The rows the vectorized decoder accepted (``ok``; all when None), as an OFFSET_COMMIT_FAMILY batch."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def accepted(array: pa.Array) -> pa.Array:
        return array if ok is None else array.filter(ok)

    n = good.num_rows
    record_type = accepted(pa.array(commits.record_type))
    arrays: dict[str, pa.Array] = {
        "topic_name": good.column("topic"),
        "source_partition": good.column("partition"),
        "source_offset": good.column("offset"),
        "record_timestamp": good.column("timestamp"),
        "record_type": record_type,
        "type": pc.if_else(pc.equal(record_type, 1), "offset_commit", "legacy_offset_commit"),
        "value_version": accepted(pa.array(commits.value_version, pa.int16(), mask=commits.is_tombstone)),
        "is_tombstone": accepted(pa.array(commits.is_tombstone)),
        **{name: accepted(column) for name, column in commits.columns.items()},
    }
    return pa.RecordBatch.from_arrays(
        [arrays[f.name].cast(f.type) if f.name in arrays else pa.nulls(n, f.type) for f in schema], schema=schema,
    )


def _per_record(family: T.StructType) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """``mapInArrow`` body decoding each record of ``family`` with the pure decoders."""

    def decode_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark.sql.pandas.types import to_arrow_schema

        schema = to_arrow_schema(family)
        for batch in batches:
            if batch.num_rows:
                yield _per_record_batch(batch, schema)

    return decode_batches


def _per_record_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    import pyarrow as pa

    columns = batch.select(list(RAW_COLUMNS)).to_pydict()
    flat = "offset_commit" not in schema.names and "group" in schema.names
    rows = []
    for key, value, topic, partition, offset, timestamp in zip(*columns.values(), strict=True):
        row = decoded_row(key, value, topic, partition, offset, timestamp)
        if flat and "offset_commit" in row:
            row.update(row.pop("offset_commit"))
        rows.append(row)
    return pa.RecordBatch.from_pylist(rows, schema=schema)


def decoded_row(key: bytes | None, value: bytes | None, topic: str, partition: int, offset: int,
                timestamp: Any) -> dict[str, Any]:
    """One decoded row from raw bytes, never raising: bad input gets a ``quarantine_reason`` and its raw bytes.

    Offset commits come back under ``offset_commit`` (key and value fields merged), every other
    record type under its own name as ``{"key": ..., "value": ...}``.
    """
    from decoders import DecodedRecord, DecodeError, decode_record

    row: dict[str, Any] = {
        "topic_name": topic, "source_partition": partition, "source_offset": offset, "record_timestamp": timestamp,
    }
    if key is None:
        return {**row, "quarantine_reason": "null key: not a coordinator record", "raw_value": value}
    try:
        record = decode_record(bytes(key), None if value is None else bytes(value))
    except DecodeError as exc:
        return {**row, "record_type": exc.record_type, "value_version": exc.version,
                "quarantine_reason": str(exc), "raw_key": key, "raw_value": value}
    except Exception as exc:  # noqa: BLE001 - a decoder bug must not stop the stream
        return {**row, "quarantine_reason": f"internal decoder error: {exc!r}", "raw_key": key, "raw_value": value}
    if not isinstance(record, DecodedRecord):
        return {**row, "record_type": record.record_type,
                "quarantine_reason": f"unknown record type {record.record_type}", "raw_key": key, "raw_value": value}
    row.update({
        "record_type": record.key_version, "type": record.type, "value_version": record.value_version,
        "is_tombstone": record.is_tombstone,
    })
    if record.type in OFFSET_COMMIT_TYPES:
        value = dict(record.value or {})
        if value.get("topic_id") == _ZERO_UUID:
            value["topic_id"] = None  # the tag's default: no topic id was written
        row["offset_commit"] = {**record.key, **_arrow_ready(value)}
    elif record.type in _WITHOUT_UUIDS:
        row[record.type] = {"key": record.key, "value": record.value}
    else:
        row[record.type] = {"key": _arrow_ready(record.key), "value": _arrow_ready(record.value)}
    return row


_ZERO_UUID = bytes(16)


def _has_uuid(shape: Shape) -> bool:
    return shape.kind == "uuid" or any(_has_uuid(child) for child in shape.children)


# Record types with no uuid field anywhere need no walk to turn Uuid objects into text: for a
# GroupMetadata record of 200 members the walk cost as much as reading the record.
_WITHOUT_UUIDS = frozenset(spec.name for spec in RECORD_SPECS if not _has_uuid(struct_shape(spec.name)))


def _arrow_ready(value: Any) -> Any:
    """Uuid objects become Kafka's base64url text; containers are walked."""
    from decoders import Uuid

    if isinstance(value, dict):
        return {k: _arrow_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_arrow_ready(v) for v in value]
    if isinstance(value, Uuid):
        return str(value)
    return value
