"""Decode a DataFrame of raw ``__consumer_offsets`` records into typed columns, in Spark.

Records are **routed by the key's record type before any decoding** (issue 13): the
type is the key's leading int16, computed in the JVM (``record_type_column``), and each
family is decoded by its own ``mapInArrow`` pass into its own narrow schema
(``schemas.decoded_records``):

* **offset commits** (types 0, 1; over 90% of real traffic): flat columns, decoded
  in the JVM by Kafka's own generated classes (``jvm/offset-commit-udf``, a Spark UDF
  built at set-up, Kafka shaded), no Python at all. It accepts a record only when
  Kafka's classes write it back byte for byte; the rare record it does not accept
  goes to a Python pass (``decoders.offset_commit_arrow``'s numpy decode, then the
  pure decoder, which decodes it or names the precise error);
* **GroupMetadata** (type 2): one nested struct with its members and decoded
  consumer-protocol bytes, decoded in the JVM by Kafka's own generated classes
  (``GroupMetadataUdf`` in the same jar, same contract: exact write-back or null); the
  records it leaves (sticky assignors' user data, future consumer-protocol versions,
  malformed bytes) go per record through the generated readers (``decoders.readers``);
* **the newer group protocols** (KIP-848 consumer, KIP-932 share, KIP-1071 streams
  records): one struct column per record type, the shape of
  ``silver.consumer_group_records``;
* **unroutable** records (null or short key, unknown type): straight to quarantine.

Each family keeps three quarantine columns (reason, raw key, raw value): a record
that fails to decode stays in its family's pass and is split off by ``quarantine``.
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
    """What ``GroupMetadataUdf`` returns: the family's columns that depend on the record's bytes."""
    from pyspark.sql import types as T

    return T.StructType([GROUP_METADATA_FAMILY["value_version"], GROUP_METADATA_FAMILY["is_tombstone"],
                         GROUP_METADATA_FAMILY["group_metadata"]])
_QUARANTINE_COLUMNS = tuple(f.name for f in QUARANTINE_FIELDS)


RECORD_TYPE_UDF = "offsetlake_record_type"
OFFSET_COMMIT_UDF = "offsetlake_decode_offset_commit"
GROUP_METADATA_UDF = "offsetlake_decode_group_metadata"
GROUP_METADATA_EXACT_UDF = "offsetlake_group_metadata_decodes_exactly"


def register_jvm_udfs(spark: Any) -> None:
    """Register the JVM UDFs of ``jvm/offset-commit-udf`` (the jar is on ``spark.jars``,
    pipelines/spark_session.py); idempotent. ``build_spark_session`` calls it.

    The offset-commit and GroupMetadata UDFs are registered as nondeterministic although it is not: Spark's optimizer
    inlines a struct-valued UDF into every ``d.field`` that reads it (CollapseProject), which ran
    the decode once per output column, thirteen times per record. A nondeterministic expression
    is evaluated once where it is projected. The UDF objects are built by static Java methods:
    py4j would pick the untyped Scala overload of ``functions.udf``, which Spark refuses. They are
    loaded through the thread's context class loader, which holds ``spark.jars``.
    """

    from jvm.artifacts import GROUP_METADATA_UDF_CLASS, RECORD_TYPE_UDF_CLASS, UDF_CLASS

    jvm = spark.sparkContext._jvm
    loader = jvm.Thread.currentThread().getContextClassLoader()

    def udf_class(name: str) -> Any:
        return jvm.java.lang.Class.forName(name, True, loader)

    udfs = spark._jsparkSession.udf()
    no_args = spark.sparkContext._gateway.new_array(jvm.java.lang.Object, 0)
    no_types = spark.sparkContext._gateway.new_array(jvm.java.lang.Class, 0)
    record_type = udf_class(RECORD_TYPE_UDF_CLASS).getMethod("udf", no_types).invoke(None, no_args)
    types = spark.sparkContext._gateway.new_array(jvm.java.lang.Class, 1)
    types[0] = udf_class("org.apache.spark.sql.types.DataType")

    def evaluated_once(class_name: str, returns: T.StructType) -> Any:
        args = spark.sparkContext._gateway.new_array(jvm.java.lang.Object, 1)
        args[0] = spark._jsparkSession.parseDataType(returns.json())
        return udf_class(class_name).getMethod("evaluatedOnce", types).invoke(None, args)

    udfs.register(RECORD_TYPE_UDF, record_type)
    udfs.register(OFFSET_COMMIT_UDF, evaluated_once(UDF_CLASS, _udf_type()))
    udfs.register(GROUP_METADATA_UDF, evaluated_once(GROUP_METADATA_UDF_CLASS, _group_metadata_udf_type()))
    udfs.register(GROUP_METADATA_EXACT_UDF,
                  udf_class(GROUP_METADATA_UDF_CLASS).getMethod("decodesExactly", no_types).invoke(None, no_args))


def record_type_column(key: Column) -> Column:
    """The key's leading big-endian int16, null when the key is shorter than two bytes (a JVM UDF)."""
    from pyspark.sql import functions as F

    return F.call_function(RECORD_TYPE_UDF, key)


@dataclass(frozen=True)
class DecodedFamilies:
    """Each family's decode of one set of raw records, failed rows included (``quarantine_reason`` set)."""

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


def decode_raw_records(raw: DataFrame, present: Collection[int | None] | None = None) -> DecodedFamilies:
    """Raw records (key, value, topic, partition, offset, timestamp) -> one decoded frame per family.

    ``present``: the record types the records hold (``None`` for keys too short to have one), e.g.
    from ``record_type_counts``. A family none of them belongs to is an empty frame that reads
    nothing: each family is a filtered pass over ``raw``, and an empty pass still scans it and
    starts Python workers. Without ``present`` every family is built.
    """
    from pyspark.sql import functions as F

    routed = raw.select(*RAW_COLUMNS, record_type_column(F.col("key")).alias("record_type"))
    kind = F.col("record_type")
    spark = raw.sparkSession
    types = None if present is None else set(present)

    def family(ids: Collection[int], unroutable: bool, body: Any, schema: T.StructType) -> DataFrame:
        if types is not None and not (types & set(ids) or unroutable and types - set(_KNOWN_TYPE_IDS)):
            return spark.createDataFrame([], schema)
        condition = (kind.isNull() | ~kind.isin(*_KNOWN_TYPE_IDS)) if unroutable else kind.isin(*ids)
        return routed.filter(condition).mapInArrow(body, schema)

    if types is not None and not types & set(OFFSET_COMMIT_RECORD_TYPES):
        commits = spark.createDataFrame([], OFFSET_COMMIT_FAMILY)
    else:
        commits = _offset_commit_family(routed.filter(kind.isin(*OFFSET_COMMIT_RECORD_TYPES)))
    if types is not None and GROUP_METADATA_RECORD_TYPE not in types:
        group_metadata = spark.createDataFrame([], GROUP_METADATA_FAMILY)
    else:
        group_metadata = _group_metadata_family(routed.filter(kind == GROUP_METADATA_RECORD_TYPE))
    return DecodedFamilies(
        offset_commits=commits,
        group_metadata=group_metadata,
        newer_group_records=family(NEWER_GROUP_RECORD_TYPE_IDS, False, _per_record(NEWER_GROUP_RECORDS_FAMILY),
                                   NEWER_GROUP_RECORDS_FAMILY),
        unroutable=family((), True, _per_record(UNROUTABLE_FAMILY), UNROUTABLE_FAMILY),
    )


def _offset_commit_family(commits: DataFrame) -> DataFrame:
    """Offset commits decoded in the JVM by Kafka's own classes, the rest by the Python decoders.

    The UDF (``jvm/offset-commit-udf``, registered by ``register_jvm_udfs``) returns null for any record it does not
    decode exactly (see its class comment); those few go through ``decode_offset_commit_batches``,
    which decodes them as the reference decoder does or quarantines them with its reason. No row of
    a well-formed commit goes through Python: measured in bench/decode.py, the Arrow round trip to a
    Python worker alone cost more than the whole decode in the JVM.
    """
    from pyspark.sql import functions as F

    decoded = commits.select(*RAW_COLUMNS, "record_type",
                             F.call_function(OFFSET_COMMIT_UDF, F.col("key"), F.col("value")).alias("d"))
    exact = decoded.filter(F.col("d").isNotNull()).select(
        F.col("topic").alias("topic_name"), F.col("partition").alias("source_partition"),
        F.col("offset").alias("source_offset"), F.col("timestamp").alias("record_timestamp"), "record_type",
        F.when(F.col("record_type") == 1, "offset_commit").otherwise("legacy_offset_commit").alias("type"),
        "d.value_version", "d.is_tombstone", *[f"d.{name}" for name in OFFSET_COMMIT_FIELDS.fieldNames()],
        *[F.lit(None).cast(f.dataType).alias(f.name) for f in QUARANTINE_FIELDS],
    )
    rest = decoded.filter(F.col("d").isNull()).select(*RAW_COLUMNS) \
        .mapInArrow(decode_offset_commit_batches, OFFSET_COMMIT_FAMILY)
    return exact.unionByName(rest)


def _group_metadata_family(records: DataFrame) -> DataFrame:
    """GroupMetadata records decoded in the JVM by Kafka's own classes, the rest per record in Python.

    ``GroupMetadataUdf`` (registered by ``register_jvm_udfs``) returns null for any record it does
    not decode exactly as the reference decoder does (see its class comment); those, picked by the
    cheaper ``GROUP_METADATA_EXACT_UDF`` (no row handed to Spark), go through ``_per_record``, which
    decodes them or quarantines them with the reference's reason.

    Why the JVM (issue 13, must-have 3: 10x per record over the table-driven ``decode_record``):
    the generated readers alone already cost 3.7-4.7 ms for the 200-member record of
    bench/decode.py and 35-70 µs for a 2-member one (1.3-1.7 ms and 15-17 µs would be 10x), before
    any Arrow building; Kafka's classes decode them in about 0.3 ms and 4 µs, plus Spark's
    conversion of the row (0.17 ms, 2 µs). Figures: bench/group_metadata_family.py.
    """
    from pyspark.sql import functions as F

    decoded = records.select(*RAW_COLUMNS, "record_type",
                             F.call_function(GROUP_METADATA_UDF, F.col("key"), F.col("value")).alias("d"))
    exact = decoded.filter(F.col("d").isNotNull()).select(
        F.col("topic").alias("topic_name"), F.col("partition").alias("source_partition"),
        F.col("offset").alias("source_offset"), F.col("timestamp").alias("record_timestamp"), "record_type",
        F.lit("group_metadata").alias("type"), "d.value_version", "d.is_tombstone", "d.group_metadata",
        *[F.lit(None).cast(f.dataType).alias(f.name) for f in QUARANTINE_FIELDS],
    )
    rest = records.filter(~F.call_function(GROUP_METADATA_EXACT_UDF, F.col("key"), F.col("value"))) \
        .select(*RAW_COLUMNS).mapInArrow(_per_record(GROUP_METADATA_FAMILY), GROUP_METADATA_FAMILY)
    return exact.unionByName(rest)


_KNOWN_TYPE_IDS = (*OFFSET_COMMIT_RECORD_TYPES, GROUP_METADATA_RECORD_TYPE, *NEWER_GROUP_RECORD_TYPE_IDS)


def record_type_counts(raw: DataFrame) -> DataFrame:
    """(record_type, partition, count) of raw records: which families a batch needs, and its records per partition."""
    from pyspark.sql import functions as F

    return raw.groupBy(record_type_column(F.col("key")).alias("record_type"), F.col("partition")).count()


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
    """(family, decoded, count) over every family, as one Spark job."""
    from pyspark.sql import functions as F

    parts = [frame.select(F.lit(name).alias("family"), F.col("quarantine_reason").isNull().alias("decoded"))
             for name, frame in families.frames().items()]
    return reduce(lambda left, right: left.unionByName(right), parts).groupBy("family", "decoded").count()


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
