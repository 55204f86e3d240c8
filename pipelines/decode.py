"""Decode a DataFrame of raw ``__consumer_offsets`` records into typed columns, in Spark.

One ``mapInArrow`` pass, two paths inside each Arrow batch, one result
(``schemas.decoded_records.DECODED_RECORDS_SCHEMA``):

* **Offset commits, vectorized.** They are over 90% of real traffic and their
  layouts are fixed, so ``decoders.offset_commit_arrow`` reads every field of the
  batch with numpy gathers: no per-row Python. It accepts a row only when every
  length is consistent, no byte is left over and the strings are valid UTF-8.
* **Everything else, per record.** Group metadata (nested members and
  consumer-protocol blobs), KIP-848, share and streams records, and any offset
  commit the vectorized path did not accept go to the pure decoders
  (``decoders.decode_record``), which also give the precise ``DecodeError``
  reason for quarantine.

An earlier version parsed offset commits with Spark SQL expressions
(``conv(hex(substring(...)))`` per field); it ran at about 30k records/s on two
cores, far slower than this (see bench/decode.py).

Callers that read several views of the result (offset commits, group records,
quarantine) should ``persist()`` it once, or the decode runs once per view.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from schemas.decoded_records import DECODED_RECORDS_SCHEMA, OFFSET_COMMIT_TYPES

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame


def decode_raw_records(raw: DataFrame) -> DataFrame:
    """Raw records (key, value, topic, partition, offset, timestamp) -> DECODED_RECORDS_SCHEMA rows."""
    columns = raw.select("key", "value", "topic", "partition", "offset", "timestamp")
    return columns.mapInArrow(decode_arrow_batches, DECODED_RECORDS_SCHEMA)


def offset_commits(decoded: DataFrame) -> DataFrame:
    """Flat offset-commit rows with their source position."""
    return decoded.filter("kind = 'offset_commit'").select(
        "topic_name", "source_partition", "source_offset", "record_timestamp", "record_type", "value_version",
        "is_tombstone", "offset_commit.*",
    )


def group_records(decoded: DataFrame) -> DataFrame:
    return decoded.filter("kind = 'group_record'")


def quarantine(decoded: DataFrame) -> DataFrame:
    return decoded.filter("kind = 'quarantine'").select(
        "topic_name", "source_partition", "source_offset", "record_timestamp", "record_type", "value_version",
        "quarantine_reason", "raw_key", "raw_value",
    )


# ------------------------------------------------------------------ the Python path
def decode_arrow_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body: each input batch becomes up to two output batches (vectorized, per record)."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    from decoders.offset_commit_arrow import decode_offset_commits

    schema = to_arrow_schema(DECODED_RECORDS_SCHEMA)
    for batch in batches:
        commits = decode_offset_commits(batch.column("key"), batch.column("value"))
        if commits.ok.any():
            yield _offset_commit_batch(batch, commits, schema)
        rest = batch.filter(pa.array(~commits.ok)) if commits.ok.any() else batch
        if rest.num_rows:
            columns = rest.to_pydict()
            rows = [
                decoded_row(key, value, topic, partition, offset, timestamp)
                for key, value, topic, partition, offset, timestamp in zip(
                    columns["key"], columns["value"], columns["topic"], columns["partition"], columns["offset"],
                    columns["timestamp"], strict=True,
                )
            ]
            yield pa.RecordBatch.from_pylist(rows, schema=schema)


def _offset_commit_batch(batch: pa.RecordBatch, commits: Any, schema: pa.Schema) -> pa.RecordBatch:
    """The rows the vectorized decoder accepted, as a DECODED_RECORDS_SCHEMA batch."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ok = pa.array(commits.ok)
    good = batch.filter(ok)
    n = good.num_rows
    record_type = pa.array(commits.record_type).filter(ok)
    tombstone = pa.array(commits.is_tombstone).filter(ok)
    struct_type = schema.field("offset_commit").type
    struct = pa.StructArray.from_arrays(
        [commits.columns[f.name].filter(ok).cast(f.type) for f in struct_type], fields=list(struct_type),
    )
    arrays: dict[str, pa.Array] = {
        "topic_name": good.column("topic"),
        "source_partition": good.column("partition"),
        "source_offset": good.column("offset"),
        "record_timestamp": good.column("timestamp"),
        "kind": pa.array(["offset_commit"] * n, pa.string()),
        "record_type": record_type,
        "type": pc.if_else(pc.equal(record_type, 1), "offset_commit", "legacy_offset_commit"),
        "value_version": pa.array(commits.value_version, pa.int16(), mask=commits.is_tombstone).filter(ok),
        "is_tombstone": tombstone,
        "offset_commit": struct,
    }
    return pa.RecordBatch.from_arrays(
        [arrays[f.name].cast(f.type) if f.name in arrays else pa.nulls(n, f.type) for f in schema], schema=schema,
    )


def decoded_row(key: bytes | None, value: bytes | None, topic: str, partition: int, offset: int,
                timestamp: Any) -> dict[str, Any]:
    """One DECODED_RECORDS_SCHEMA row from raw bytes; never raises (bad input becomes quarantine)."""
    from decoders import DecodedRecord, DecodeError, decode_record

    row: dict[str, Any] = {
        "topic_name": topic, "source_partition": partition, "source_offset": offset, "record_timestamp": timestamp,
    }
    if key is None:
        return {**row, "kind": "quarantine", "quarantine_reason": "null key: not a coordinator record",
                "raw_value": value}
    try:
        record = decode_record(bytes(key), None if value is None else bytes(value))
    except DecodeError as exc:
        return {**row, "kind": "quarantine", "record_type": exc.record_type, "value_version": exc.version,
                "quarantine_reason": str(exc), "raw_key": key, "raw_value": value}
    except Exception as exc:  # noqa: BLE001 - a decoder bug must not stop the stream
        return {**row, "kind": "quarantine", "quarantine_reason": f"internal decoder error: {exc!r}",
                "raw_key": key, "raw_value": value}
    if not isinstance(record, DecodedRecord):
        return {**row, "kind": "quarantine", "record_type": record.record_type,
                "quarantine_reason": f"unknown record type {record.record_type}", "raw_key": key, "raw_value": value}
    row.update({
        "record_type": record.key_version, "type": record.type, "value_version": record.value_version,
        "is_tombstone": record.is_tombstone,
    })
    if record.type in OFFSET_COMMIT_TYPES:
        row["kind"] = "offset_commit"
        value = dict(record.value or {})
        if value.get("topic_id") == _ZERO_UUID:
            value["topic_id"] = None  # the tag's default: no topic id was written
        row["offset_commit"] = {**record.key, **_arrow_ready(value)}
    else:
        row["kind"] = "group_record"
        row[record.type] = {"key": _arrow_ready(record.key), "value": _arrow_ready(record.value)}
    return row


_ZERO_UUID = bytes(16)


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
