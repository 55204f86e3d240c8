"""Every table of the warehouse, by name."""

from __future__ import annotations

from schemas import (
    consumer_group_records,
    group_members,
    group_metadata,
    ingest_batches,
    offset_commits,
    offsets_topic_records,
    quarantine,
)
from schemas.table_spec import TableSpec

BRONZE = offsets_topic_records.TABLE
SILVER: tuple[TableSpec, ...] = (
    offset_commits.TABLE, group_metadata.TABLE, group_members.TABLE, consumer_group_records.TABLE,
    quarantine.TABLE, ingest_batches.TABLE,
)
TABLES: dict[str, TableSpec] = {spec.name: spec for spec in (BRONZE, *SILVER)}
