"""Hand-built rows of warehouse tables, for testing rule queries on tiny DataFrames."""

from __future__ import annotations

import datetime as dt
from typing import Any

from schemas.table_spec import TableSpec

T0 = dt.datetime(2026, 11, 1, 12, 0, 0)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def frame(spark, spec: TableSpec, rows: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    """``rows`` as a DataFrame of ``spec``'s schema; unnamed columns are null."""
    names = spec.schema.fieldNames()
    return spark.createDataFrame([tuple(row.get(n) for n in names) for row in rows], spec.schema)


def source(offset: int, seconds: float | None = None, partition: int = 0) -> dict[str, Any]:
    """The source-position columns of a record at ``offset`` of __consumer_offsets partition ``partition``."""
    return {"cluster_name": "test", "source_topic": "__consumer_offsets", "source_partition": partition,
            "source_offset": offset, "record_timestamp": at(offset if seconds is None else seconds)}
