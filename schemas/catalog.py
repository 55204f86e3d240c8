"""Every table of the warehouse, by name."""

from __future__ import annotations

from pipelines.gold import (
    committed_offsets,
    consumer_lag,
    group_generations,
    group_membership,
    group_state_history,
    offset_commit_rate,
    partition_assignments,
    rebalance_events,
    streams_task_assignments,
    streams_topology,
)
from schemas import (
    consumer_group_records,
    data_quality_results,
    group_members,
    group_metadata,
    ingest_batches,
    offset_commits,
    offsets_topic_records,
    partition_end_offsets,
    pending_end_offsets,
    quarantine,
    topic_names,
    validation_diffs,
)
from schemas.table_spec import TableSpec

BRONZE = offsets_topic_records.TABLE
SILVER: tuple[TableSpec, ...] = (
    offset_commits.TABLE, group_metadata.TABLE, group_members.TABLE, consumer_group_records.TABLE,
    quarantine.TABLE, ingest_batches.TABLE,
)
"""What the ingest writes (and creates on its first run)."""
GOLD: tuple[TableSpec, ...] = (
    committed_offsets.TABLE, offset_commit_rate.TABLE, group_generations.TABLE, group_membership.TABLE,
    partition_assignments.TABLE, group_state_history.TABLE, rebalance_events.TABLE, streams_task_assignments.TABLE,
    streams_topology.TABLE, consumer_lag.TABLE, validation_diffs.TABLE,
)
AUDIT: tuple[TableSpec, ...] = (data_quality_results.TABLE,)
"""What ``offsetlake check`` writes."""
TABLES: dict[str, TableSpec] = {
    spec.name: spec for spec in (BRONZE, *SILVER, partition_end_offsets.TABLE, pending_end_offsets.TABLE,
                                 topic_names.TABLE, *GOLD, *AUDIT)
}
"""Every user-facing table of the warehouse, by name (gold's refresh state is its query's checkpoint)."""
