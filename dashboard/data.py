"""What the dashboard shows, computed from table rows by pure functions (no Spark, no browser).

Rows are dicts of column -> value with timestamps as epoch milliseconds (both readers in
``dashboard/read.py`` normalise them so). The result, ``DashboardData``, is what the page embeds as
JSON and its inline script draws; the questions are those of the SQL views in
``pipelines/sql_views/`` (rebalance timeline, lag over time, partition ownership, consumer status now),
answered here in Python because the page is built without a SparkSession when delta-rs can read the
tables.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

Row = dict[str, Any]
MAX_OWNERSHIP_LANES = 200
"""Partitions drawn in the ownership timeline at most (the page says how many were left out)."""

# The columns each chart needs, per table: readers fetch only these (those a table has: an older
# warehouse may lack a newer column, e.g. assignment_kind, and its rows then lack the key).
COLUMNS: dict[str, tuple[str, ...]] = {
    "gold.rebalance_events": ("cluster_name", "group", "event_type", "from_generation", "to_generation",
                              "stable_at", "stopped_ms_lower_bound", "stopped_ms_upper_bound", "members_before",
                              "members_after",
                              "partitions_moved", "likely_cause", "is_storm"),
    "gold.consumer_lag": ("cluster_name", "group", "snapshot_id", "snapshot_time", "partition_status",
                          "lag", "group_lag", "group_status", "lag_seconds_interpolated",
                          "lag_seconds_message_timestamp"),
    "gold.partition_assignments": ("cluster_name", "group", "topic", "partition", "member_id", "client_id",
                                   "generation", "valid_from", "valid_to", "assignment_kind"),
    "gold.group_state_history": ("cluster_name", "group", "state", "at", "generation"),
    "gold.group_membership": ("cluster_name", "group", "member_id", "valid_to"),
    "gold.committed_offsets": ("cluster_name", "group", "commit_timestamp"),
}


@dataclass(frozen=True)
class Filters:
    """``groups``: only these group ids (empty: all); ``since``: epoch ms, drop what ended before."""

    groups: tuple[str, ...] = ()
    since: int | None = None

    def keeps(self, row: Row) -> bool:
        return not self.groups or row["group"] in self.groups


@dataclass
class DashboardData:
    generated_at: int
    warehouse: str
    clusters: list[str]
    rebalances: list[Row] = field(default_factory=list)
    lag: list[Row] = field(default_factory=list)
    ownership: list[Row] = field(default_factory=list)
    ownership_lanes_total: int = 0
    status: list[Row] = field(default_factory=list)
    missing_tables: list[str] = field(default_factory=list)

    def as_json_dict(self) -> dict[str, Any]:
        return asdict(self)


def group_label(cluster: str, group: str, multi_cluster: bool) -> str:
    return f"{cluster}/{group}" if multi_cluster else group


def rebalance_points(events: Iterable[Row], filters: Filters, multi_cluster: bool = False) -> list[Row]:
    """One point per completed rebalance (static restarts are not rebalances), oldest first."""
    points = [
        {"group": group_label(e["cluster_name"], e["group"], multi_cluster), "t": e["stable_at"],
         "from_generation": e["from_generation"], "to_generation": e["to_generation"],
         "cause": e["likely_cause"], "storm": bool(e["is_storm"]), "members_before": e["members_before"],
         "members_after": e["members_after"], "partitions_moved": e["partitions_moved"],
         # bounds, not a measurement: the start of a classic rebalance is never recorded (an older
         # warehouse has neither column until its groups are recomputed)
         "stopped_ms_lower_bound": e.get("stopped_ms_lower_bound"),
         "stopped_ms_upper_bound": e.get("stopped_ms_upper_bound")}
        for e in events
        if e["event_type"] == "rebalance" and filters.keeps(e)
        and (filters.since is None or e["stable_at"] >= filters.since)
    ]
    return sorted(points, key=lambda p: (p["group"], p["t"], p["to_generation"]))


def lag_series(rows: Iterable[Row], filters: Filters, multi_cluster: bool = False) -> list[Row]:
    """Per group, its total lag at each snapshot it has rows in: ``{"group", "points": [{t, lag, status}]}``."""
    by_snapshot: dict[tuple[str, int], Row] = {}
    for r in rows:
        if not filters.keeps(r) or (filters.since is not None and r["snapshot_time"] < filters.since):
            continue
        label = group_label(r["cluster_name"], r["group"], multi_cluster)
        point = by_snapshot.setdefault((label, r["snapshot_time"]), {
            "t": r["snapshot_time"], "lag": r["group_lag"], "status": r["group_status"]})
        if point["lag"] is None:
            point["lag"] = r["group_lag"]
    series: dict[str, list[Row]] = defaultdict(list)
    for (label, _), point in sorted(by_snapshot.items(), key=lambda item: (item[0][0], item[0][1])):
        series[label].append(point)
    return [{"group": label, "points": points} for label, points in sorted(series.items())]


def ownership_lanes(rows: Iterable[Row], filters: Filters, now: int, multi_cluster: bool = False,
                    max_lanes: int = MAX_OWNERSHIP_LANES) -> tuple[list[Row], int]:
    """One lane per (group, topic, partition) with one bar per owner interval; open intervals end ``now``.

    Returns the first ``max_lanes`` lanes (by group, topic, partition) and how many there were. KIP-848
    target assignments (what the coordinator wants a member to own) are not ownership and are left out.
    """
    lanes: dict[tuple[str, str, int], list[Row]] = defaultdict(list)
    for r in rows:
        end = r["valid_to"] if r["valid_to"] is not None else now
        if r.get("assignment_kind") == "target" or not filters.keeps(r) or (
                filters.since is not None and end < filters.since):
            continue
        start = r["valid_from"] if filters.since is None else max(r["valid_from"], filters.since)
        label = group_label(r["cluster_name"], r["group"], multi_cluster)
        lanes[(label, r["topic"] or "?", r["partition"])].append({
            "from": start, "to": end, "open": r["valid_to"] is None, "client": r["client_id"] or r["member_id"],
            "member": r["member_id"], "generation": r["generation"]})
    ordered = sorted(lanes.items())
    return ([{"group": g, "topic": t, "partition": p, "bars": sorted(bars, key=lambda b: b["from"])}
             for (g, t, p), bars in ordered[:max_lanes]], len(ordered))


def consumer_status(committed: Sequence[Row], states: Sequence[Row], members: Sequence[Row],
                    lag: Sequence[Row], filters: Filters, multi_cluster: bool = False) -> list[Row]:
    """One row per group, as the view dashboards.consumer_status_now defines it."""
    keys: set[tuple[str, str]] = set()
    state_now: dict[tuple[str, str], Row] = {}
    for r in states:
        key = (r["cluster_name"], r["group"])
        keys.add(key)
        if key not in state_now or r["at"] > state_now[key]["at"]:
            state_now[key] = r
    member_count: dict[tuple[str, str], int] = defaultdict(int)
    for r in members:
        if r["valid_to"] is None:
            member_count[(r["cluster_name"], r["group"])] += 1
    commits: dict[tuple[str, str], list[int]] = defaultdict(list)
    for r in committed:
        key = (r["cluster_name"], r["group"])
        keys.add(key)
        commits[key].append(r["commit_timestamp"])
    newest: dict[tuple[str, str], int] = {}
    for r in lag:
        key = (r["cluster_name"], r["group"])
        keys.add(key)
        newest[key] = max(newest.get(key, r["snapshot_time"]), r["snapshot_time"])
    lag_now: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in lag:
        key = (r["cluster_name"], r["group"])
        if r["snapshot_time"] == newest[key]:
            lag_now[key].append(r)
    rows = []
    for cluster, group in sorted(keys):
        key = (cluster, group)
        if filters.groups and group not in filters.groups:
            continue
        state = state_now.get(key)
        partitions = lag_now.get(key, [])
        times = [t for t in commits.get(key, []) if t is not None]
        rows.append({
            "cluster": cluster, "group": group_label(cluster, group, multi_cluster),
            "state": state["state"] if state else None,
            "generation": state["generation"] if state else None,
            "members": member_count.get(key, 0) if state else (member_count.get(key) or None),
            "last_commit": max(times) if times else None,
            "committed_partitions": len(commits.get(key, [])),
            "burrow_status": max((p["group_status"] for p in partitions), default=None),
            "total_lag": max((p["group_lag"] for p in partitions if p["group_lag"] is not None), default=None),
            "lagging_partitions": sum(1 for p in partitions if (p["lag"] or 0) > 0),
            **lag_seconds("interpolated", partitions),
            **lag_seconds("message_timestamp", partitions),
            "partitions_not_ok": sum(1 for p in partitions
                                     if p["partition_status"] is not None and p["partition_status"] != "OK"),
            "snapshot": newest.get(key),
        })
    return rows


def lag_seconds(estimator: str, partitions: list[Row]) -> dict[str, Any]:
    """The group's largest lag in seconds by one estimator, and how many lagging partitions it cannot age.

    A partition with positive lag has aged by more than 0 s, whatever an estimator says: interpolation
    has no estimate when the high watermark passed the committed offset before the first snapshot, and
    the message-timestamp estimator none without the message (issue 12, item 8: a page showed 0.0 s for a
    group with lag 20 and status STOP because its only lagging partition had no interpolated estimate
    and the others, at lag 0, had 0.0). Such partitions are counted in ``lag_seconds_unknown_<estimator>``
    rather than dropped, so the page can say "at least" or "unknown", never 0 s.
    """
    column = f"lag_seconds_{estimator}"
    lagging = [p for p in partitions if (p["lag"] or 0) > 0]
    known = [p.get(column) for p in lagging if p.get(column) is not None and p.get(column) > 0]
    return {f"max_lag_seconds_{estimator}": max(known, default=0.0 if partitions and not lagging else None),
            f"lag_seconds_unknown_{estimator}": len(lagging) - len(known)}


def build_data(tables: dict[str, list[Row]], filters: Filters, *, now: int, warehouse: str) -> DashboardData:
    """Everything the page shows, from the rows of ``COLUMNS``' tables (absent tables count as empty)."""

    def rows(name: str) -> list[Row]:
        return tables.get(name) or []

    clusters = sorted({r["cluster_name"] for name in COLUMNS for r in rows(name)})
    multi = len(clusters) > 1
    lanes, total = ownership_lanes(rows("gold.partition_assignments"), filters, now, multi)
    return DashboardData(
        generated_at=now, warehouse=warehouse, clusters=clusters,
        rebalances=rebalance_points(rows("gold.rebalance_events"), filters, multi),
        lag=lag_series(rows("gold.consumer_lag"), filters, multi),
        ownership=lanes, ownership_lanes_total=total,
        status=consumer_status(rows("gold.committed_offsets"), rows("gold.group_state_history"),
                               rows("gold.group_membership"), rows("gold.consumer_lag"), filters, multi),
        missing_tables=sorted(name for name in COLUMNS if name not in tables),
    )
