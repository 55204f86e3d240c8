"""Spark types of decoded ``__consumer_offsets`` records, derived from the decoders' layouts.

The decoders describe every record layout once, as data; ``decoders.struct_shape``
turns a record type into a neutral type tree and this module maps that tree to
Spark types, so the Spark schema cannot drift from the decoder. UUIDs (topic ids)
become strings in Kafka's base64url text form, the form Kafka's tools print and
users paste into queries.
"""

from __future__ import annotations

from pyspark.sql import types as T

from decoders.layout import RECORD_SPECS, Shape, struct_shape

_PRIMITIVES: dict[str, T.DataType] = {
    "string": T.StringType(),
    "binary": T.BinaryType(),
    "uuid": T.StringType(),
    "boolean": T.BooleanType(),
    "int8": T.ByteType(),
    "int16": T.ShortType(),
    "uint16": T.IntegerType(),
    "int32": T.IntegerType(),
    "int64": T.LongType(),
}

OFFSET_COMMIT_TYPES = ("legacy_offset_commit", "offset_commit")
# Every record type that is not an offset commit gets its own struct column.
GROUP_RECORD_TYPES: tuple[str, ...] = tuple(spec.name for spec in RECORD_SPECS if spec.name not in OFFSET_COMMIT_TYPES)


def spark_type(shape: Shape) -> T.DataType:
    if shape.kind == "struct":
        return T.StructType([
            T.StructField(child.name, spark_type(child), child.nullable, _comment(child)) for child in shape.children
        ])
    if shape.kind == "array":
        (element,) = shape.children
        return T.ArrayType(spark_type(element), element.nullable)
    try:
        return _PRIMITIVES[shape.kind]
    except KeyError:
        raise ValueError(f"no Spark type for shape kind {shape.kind!r} ({shape.name})") from None


def _comment(shape: Shape) -> dict[str, str]:
    return {"comment": shape.note} if shape.note else {}


def key_type(record_type: str) -> T.StructType:
    result = spark_type(struct_shape(record_type).child("key"))
    assert isinstance(result, T.StructType)
    return result


def value_type(record_type: str) -> T.StructType:
    result = spark_type(struct_shape(record_type).child("value"))
    assert isinstance(result, T.StructType)
    return result


def record_struct(record_type: str) -> T.StructType:
    """``struct<key: ..., value: ...>`` for one record type (value null for a tombstone)."""
    return T.StructType([
        T.StructField("key", key_type(record_type), False),
        T.StructField("value", value_type(record_type), True),
    ])


# The flat offset-commit columns: key fields then value fields of every version.
OFFSET_COMMIT_FIELDS = T.StructType([
    T.StructField("group", T.StringType(), True, {"comment": "consumer group id"}),
    T.StructField("topic", T.StringType(), True, {"comment": "topic name"}),
    T.StructField("partition", T.IntegerType(), True, {"comment": "partition of the committed topic"}),
    T.StructField("offset", T.LongType(), True,
                  {"comment": "committed offset (next message to read); null for a tombstone"}),
    T.StructField("leader_epoch", T.IntegerType(), True,
                  {"comment": "leader epoch of the commit (value v3+), -1 unknown"}),
    T.StructField("metadata", T.StringType(), True, {"comment": "client-supplied commit metadata"}),
    T.StructField("commit_timestamp", T.LongType(), True, {"comment": "commit time, epoch ms"}),
    T.StructField("expire_timestamp", T.LongType(), True, {"comment": "expiry time, epoch ms (value v1 only)"}),
    T.StructField("topic_id", T.StringType(), True, {"comment": "topic id, base64url (value v4, Kafka 4.1+)"}),
])

SOURCE_POSITION_FIELDS = [
    T.StructField("topic_name", T.StringType(), False, {"comment": "source topic (usually __consumer_offsets)"}),
    T.StructField("source_partition", T.IntegerType(), False, {"comment": "source topic partition"}),
    T.StructField("source_offset", T.LongType(), False, {"comment": "offset of the record in the source partition"}),
    T.StructField("record_timestamp", T.TimestampType(), True, {"comment": "the record's Kafka timestamp"}),
]

RECORD_FIELDS = [
    T.StructField("record_type", T.ShortType(), True, {"comment": "the key's int16 record type, if readable"}),
    T.StructField("type", T.StringType(), True, {"comment": "snake_case record type name"}),
    T.StructField("value_version", T.ShortType(), True, {"comment": "value version; null for a tombstone"}),
    T.StructField("is_tombstone", T.BooleanType(), True, {"comment": "the value is null (a delete)"}),
]

QUARANTINE_FIELDS = [
    T.StructField("quarantine_reason", T.StringType(), True,
                  {"comment": "why the record could not be decoded; null for a decoded row"}),
    T.StructField("raw_key", T.BinaryType(), True, {"comment": "raw key bytes (quarantined rows only)"}),
    T.StructField("raw_value", T.BinaryType(), True, {"comment": "raw value bytes (quarantined rows only)"}),
]

# Records are routed by the key's record type (computed in SQL) before any decoding, and
# each family is decoded into its own narrow schema: an offset commit carries
# 20 flat columns instead of a union of every record type's nested struct (206 leaves,
# almost all null). Every family keeps the three quarantine columns, so a record of that
# family that fails to decode stays in the same pass and is split off afterwards.
OFFSET_COMMIT_RECORD_TYPES = (0, 1)
GROUP_METADATA_RECORD_TYPE = 2
NEWER_GROUP_RECORD_TYPES: tuple[str, ...] = tuple(name for name in GROUP_RECORD_TYPES if name != "group_metadata")
NEWER_GROUP_RECORD_TYPE_IDS: tuple[int, ...] = tuple(spec.type_id for spec in RECORD_SPECS
                                                     if spec.name in NEWER_GROUP_RECORD_TYPES)

OFFSET_COMMIT_FAMILY = T.StructType(SOURCE_POSITION_FIELDS + RECORD_FIELDS + list(OFFSET_COMMIT_FIELDS)
                                    + QUARANTINE_FIELDS)
"""Offset commits (record types 0 and 1), flat: the key and value fields are top-level columns."""

GROUP_METADATA_FAMILY = T.StructType(SOURCE_POSITION_FIELDS + RECORD_FIELDS
                                     + [T.StructField("group_metadata", record_struct("group_metadata"), True)]
                                     + QUARANTINE_FIELDS)
"""Classic GroupMetadata records (type 2) with their members and decoded consumer-protocol bytes."""

NEWER_GROUP_RECORDS_FAMILY = T.StructType(
    SOURCE_POSITION_FIELDS + RECORD_FIELDS
    + [T.StructField(name, record_struct(name), True) for name in NEWER_GROUP_RECORD_TYPES]
    + QUARANTINE_FIELDS
)
"""KIP-848 consumer-group, KIP-932 share-group and KIP-1071 streams-group records: one struct column per type,
the shape of silver.consumer_group_records."""

UNROUTABLE_FAMILY = T.StructType(SOURCE_POSITION_FIELDS + RECORD_FIELDS + QUARANTINE_FIELDS)
"""Records with a null or short key or an unknown record type: all of them end in quarantine."""
