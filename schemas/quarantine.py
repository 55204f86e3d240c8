"""silver.quarantine: records that could not be decoded, kept whole with the reason."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.source_position import SOURCE_KEY, SOURCE_POSITION
from schemas.table_spec import TableSpec, column

TABLE = TableSpec(
    name="silver.quarantine",
    description="Undecodable or unknown-type records: raw bytes, source position and the decoder's reason.",
    schema=T.StructType(SOURCE_POSITION + [
        column("record_type", T.ShortType(), "the key's record type, when it could be read"),
        column("value_version", T.ShortType(), "the value version, when it could be read"),
        column("reason", T.StringType(), "the decoder's error: record type, version, byte position and reason", False),
        column("raw_key", T.BinaryType(), "raw key bytes"),
        column("raw_value", T.BinaryType(), "raw value bytes"),
        column("ingested_at", T.TimestampType(), "when offsetlake wrote the row", False),
    ]),
    key=SOURCE_KEY,
)
