"""Small gold tables written with delta-rs in the tables' own schemas (no Spark): what the metrics tests read.

Each ``*_row`` gives a row with the columns a test reasons about and the table's other non-null columns filled;
``write`` appends rows to a table as one Delta commit, partitioned as the table is.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from conf.settings import Settings
from pipelines.delta_tables import table_path
from pipelines.gold import consumer_lag, group_membership, group_state_history, rebalance_events
from schemas.table_spec import TableSpec

Row = dict[str, Any]
T0 = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


def at(seconds: float) -> dt.datetime:
    """``seconds`` after T0."""
    return T0 + dt.timedelta(seconds=seconds)


def write(settings: Settings, spec: TableSpec, rows: Iterable[Row]) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(spec.schema)
    table = pa.Table.from_pylist([{f.name: r.get(f.name) for f in schema} for r in rows], schema=schema)
    write_deltalake(table_path(settings, spec), table, mode="append", partition_by=list(spec.partition_by) or None)


def lag_row(group: str, partition: int, lag: int | None, snapshot: dt.datetime, *, topic: str = "orders",
            cluster: str = "c1", status: str | None = "OK", group_status: str = "OK",
            interpolated: float | None = None, message_timestamp: float | None = None) -> Row:
    latest = 1_000
    return {"cluster_name": cluster, "snapshot_id": int(snapshot.timestamp() * 1000), "snapshot_time": snapshot,
            "group": group, "topic": topic, "partition": partition,
            "committed_offset": None if lag is None else latest - lag, "earliest_offset": 0,
            "latest_offset": latest, "last_stable_offset": latest, "lag": lag, "partition_status": status,
            "lag_seconds_interpolated": interpolated, "lag_seconds_message_timestamp": message_timestamp,
            "group_status": group_status, "snapshot_date": snapshot.date()}


def state_row(group: str, state: str, since: dt.datetime, until: dt.datetime | None = None, *,
              cluster: str = "c1", group_type: str = "classic") -> Row:
    return {"cluster_name": cluster, "group": group, "state": state, "at": since, "until": until,
            "generation": 1, "evidence": "record_time", "group_type": group_type}


def member_row(group: str, member: str, since: dt.datetime, until: dt.datetime | None = None, *,
               cluster: str = "c1") -> Row:
    return {"cluster_name": cluster, "group": group, "member_id": member, "valid_from": since, "valid_to": until,
            "first_generation": 1, "last_generation": 1, "group_type": "classic"}


def rebalance_row(group: str, cause: str | None, stable_at: dt.datetime, *, cluster: str = "c1",
                  stopped_ms: tuple[int | None, int | None] = (None, None), storm: bool = False,
                  event_type: str = "rebalance", generation: int = 1) -> Row:
    return {"cluster_name": cluster, "group": group, "event_type": event_type, "from_generation": generation - 1,
            "to_generation": generation, "stable_at": stable_at, "stopped_ms_lower_bound": stopped_ms[0],
            "stopped_ms_upper_bound": stopped_ms[1], "members_before": 1, "members_after": 1,
            "members_joined": [], "members_left": [], "members_kept": 1, "static_restarts": [],
            "partitions_moved": 0, "partitions_kept": 1, "likely_cause": cause, "is_storm": storm,
            "group_type": "classic"}


LAG, STATES, MEMBERS, REBALANCES = (consumer_lag.TABLE, group_state_history.TABLE, group_membership.TABLE,
                                    rebalance_events.TABLE)
