"""``dashboards.consumer_status_now`` over hand-built rows, answered by the embedded engine (no JVM).

The page's status table is that view's rows (``dashboard/data.py``: ``status_rows``), so a test of what the
table shows for given lag, states, members and commits writes those rows as the four small Delta tables the
view reads (with delta-rs) and reads the view back as the page does (``dashboard/read.py``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from conf.settings import Settings
from dashboard.data import STATUS_VIEW
from dashboard.read import read_tables
from pipelines.delta_tables import table_path
from schemas.catalog import TABLES

Row = dict[str, Any]

_SCHEMAS: dict[str, list[tuple[str, str]]] = {  # the columns the view reads
    "gold.committed_offsets": [("cluster_name", "string"), ("group", "string"), ("commit_timestamp", "timestamp")],
    "gold.group_state_history": [("cluster_name", "string"), ("group", "string"), ("state", "string"),
                                 ("at", "timestamp"), ("until", "timestamp"), ("generation", "int32"),
                                 ("group_type", "string")],
    "gold.group_membership": [("cluster_name", "string"), ("group", "string"), ("member_id", "string"),
                              ("valid_to", "timestamp")],
    "gold.consumer_lag": [("cluster_name", "string"), ("group", "string"), ("snapshot_time", "timestamp"),
                          ("partition_status", "string"), ("lag", "int64"), ("group_lag", "int64"),
                          ("group_status", "string"), ("lag_seconds_interpolated", "float64"),
                          ("lag_seconds_message_timestamp", "float64")],
}


def _value(kind: str, value: Any) -> Any:
    if kind == "timestamp" and isinstance(value, int):  # epoch milliseconds, as the page's rows
        return dt.datetime.fromtimestamp(value / 1000, dt.UTC)
    if kind == "timestamp" and isinstance(value, dt.datetime) and value.tzinfo is None:  # Spark's naive UTC
        return value.replace(tzinfo=dt.UTC)
    return value


def consumer_status_view(warehouse: Path, committed: Iterable[Row] = (), states: Iterable[Row] = (),
                         members: Iterable[Row] = (), lag: Iterable[Row] = ()) -> list[Row]:
    """The view's rows over these rows (timestamps as epoch ms or datetimes; extra keys ignored), as the
    page reads them: epoch-millisecond timestamps."""
    import pyarrow as pa
    from deltalake import write_deltalake

    settings = Settings(warehouse=str(warehouse))
    for name, rows in (("gold.committed_offsets", committed), ("gold.group_state_history", states),
                       ("gold.group_membership", members), ("gold.consumer_lag", lag)):
        types = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(), "float64": pa.float64(),
                 "timestamp": pa.timestamp("us", tz="UTC")}
        schema = pa.schema([(column, types[kind]) for column, kind in _SCHEMAS[name]])
        data = {column: [_value(kind, r.get(column)) for r in rows] for column, kind in _SCHEMAS[name]}
        write_deltalake(str(table_path(settings, TABLES[name])), pa.Table.from_pydict(data, schema=schema))
    tables, report = read_tables(settings, {}, engine="delta-rs", views=(STATUS_VIEW,))
    assert report.engines == {STATUS_VIEW: "delta-rs"}, report
    return tables[STATUS_VIEW]
