"""Hand-built silver rows of classic groups' GroupMetadata records, for the gold transforms' own tests.

A record is ``(group, offset, generation, append time, currentStateTimestamp, members)`` with times in
seconds after ``T0`` and each member ``(member id, group.instance.id, topic, partitions)``, optionally
followed by a dict of other silver.group_members columns (session_timeout_ms, client_host, ...). All
records are in ``__consumer_offsets`` partition 0 of cluster ``c``, in offset order.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from schemas import group_members, group_metadata

T0 = dt.datetime(2026, 11, 25, 2, 0)

Member = tuple[Any, ...]
Record = tuple[str, int, int, int, int, list[Member]]


def at(seconds: int) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def seconds(moment: dt.datetime | None) -> int | None:
    return None if moment is None else int((moment - T0).total_seconds())


def silver_frames(spark: Any, records: list[Record]) -> tuple[Any, Any]:
    """(silver.group_metadata, silver.group_members) DataFrames of ``records``, in the tables' schemas."""
    def position(group: str, offset: int, appended: int) -> dict[str, Any]:
        return {"cluster_name": "c", "source_topic": "__consumer_offsets", "source_partition": 0,
                "source_offset": offset, "record_timestamp": at(appended), "group": group}

    metadata = [{**position(group, offset, appended), "protocol_type": "consumer", "generation": generation,
                 "protocol": "range", "leader": members[0][0] if members else None,
                 "current_state_timestamp": at(formed), "member_count": len(members), "is_tombstone": False,
                 "value_version": 3}
                for group, offset, generation, appended, formed, members in records]
    members = [{**position(group, offset, appended), "generation": generation, "member_id": member[0],
                "is_leader": index == 0, "group_instance_id": member[1], "client_id": f"client-{member[0]}",
                "assigned_partitions": [{"topic": member[2], "partitions": member[3]}], "undecoded": False,
                **(member[4] if len(member) > 4 else {})}
               for group, offset, generation, appended, _formed, listed in records
               for index, member in enumerate(listed)]

    def frame(spec: Any, rows: list[dict[str, Any]]) -> Any:
        return spark.createDataFrame([tuple(row.get(f.name) for f in spec.schema.fields) for row in rows],
                                     spec.schema)

    return frame(group_metadata.TABLE, metadata), frame(group_members.TABLE, members)
