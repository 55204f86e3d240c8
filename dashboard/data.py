"""What the dashboard shows, shaped from table rows by pure functions (no Spark, no browser, no altair).

Rows are dicts of column -> value with timestamps as epoch milliseconds (both readers in
``dashboard/read.py`` normalise them so). The result, ``DashboardData``, is a set of flat row lists,
one per chart, that ``dashboard/render.py`` hands to Vega-Lite as they are: every row carries its
``group`` and the group's ``rank`` so that one group picker and one search box can filter every chart
in the browser, and the charts can show "the N worst groups" without knowing how worst is defined.

Why the shaping happens here and not in the browser: the questions an operator asks (which groups are
worst, who owned a partition when, when did nobody own it) need joins across tables (rebalance events,
assignments, membership), and those are easier to get right, and to unit-test on hand-built rows, in
Python than in Vega transforms. Where a view of ``pipelines/sql_views/`` answers what the page shows, the
page takes the view's rows instead of recomputing them: the status table is ``dashboards.consumer_status_now``
(``STATUS_VIEW``), read by ``dashboard/read.py`` with the embedded engine (no SparkSession) or with Spark.

Scale: the status table lists every group; the charts carry rows for the ``MAX_CHARTED_GROUPS`` worst
groups only (a page of 10,000 groups' ownership timelines would be hundreds of megabytes and
unreadable), and the page says how many groups were left out and that ``--group`` reaches them.
The page is built in two reads (``dashboard/build.py``): first what ranks the groups (``RANKING_COLUMNS``:
the status view, rebalances, tombstones and states, a few rows per group), then the charts' detail
(``CHART_COLUMNS``: assignments, lag per partition and snapshot, membership, commit rate, the bulk of the
warehouse) for the charted groups alone (``charted_groups``: the worst, while their detail rows fit
``MAX_CHART_ROWS``), pushed down to the reader. At 10,000 groups the detail is millions of rows
(bench/scale.py) that no page shows.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

Row = dict[str, Any]

MAX_CHARTED_GROUPS = 50
"""Groups whose rows the charts carry, worst first (every group is in the status table): the page's size and the
time a browser takes to draw it grow with them, and ten times as many took half a minute to draw (bench/scale.py;
the figures are in CHANGELOG.md)."""
MAX_CHART_ROWS = 25_000
"""Detail rows (``CHART_COLUMNS``: assignments, lag per partition and snapshot, members, commit minutes) the
charted groups may hold in all. A group of 1,000 partitions has ~18,000 lag points in 18 snapshots, and at
10,000 groups the 50 worst are mostly such groups: without a cap on rows the page is hundreds of MiB (the figures
are in CHANGELOG.md). A group that does not fit is passed over (the worst one is always charted); its own page
charts it (``--group``, ``--serve``)."""
MINUTE_MS = 60_000
"""gold.offset_commit_rate's step: one row per group and minute with commits."""

# The columns each chart needs, per table: readers fetch only these (those a table has: an older
# warehouse may lack a newer column, e.g. assignment_kind, and its rows then lack the key).
COLUMNS: dict[str, tuple[str, ...]] = {
    "gold.rebalance_events": ("cluster_name", "group", "event_type", "from_generation", "to_generation",
                              "join_completed_at", "stable_at", "stopped_at_lower_bound", "stopped_at_upper_bound",
                              "stopped_ms_lower_bound", "stopped_ms_upper_bound", "members_before",
                              "members_after", "members_joined", "members_left", "static_restarts",
                              "partitions_moved", "likely_cause", "triggered_by", "rebalance_protocol",
                              "is_storm"),
    "gold.consumer_lag": ("cluster_name", "group", "topic", "partition", "snapshot_id", "snapshot_time",
                          "partition_status", "lag", "group_lag", "group_status", "lag_seconds_interpolated",
                          "lag_seconds_message_timestamp"),
    "gold.partition_assignments": ("cluster_name", "group", "topic", "partition", "member_id", "client_id",
                                   "generation", "valid_from", "valid_to", "assignment_kind", "topic_id"),
    "gold.group_state_history": ("cluster_name", "group", "state", "at", "generation"),
    "gold.group_membership": ("cluster_name", "group", "member_id", "client_id", "group_instance_id",
                              "valid_from", "valid_to"),
    "gold.offset_commit_rate": ("cluster_name", "group", "minute", "commit_records", "commit_requests",
                                "partitions"),
    "silver.offset_commits": ("cluster_name", "group", "topic", "partition", "record_timestamp", "is_tombstone"),
}

RANKED_BY = ("gold.rebalance_events", "gold.group_state_history", "silver.offset_commits")
"""The tables read for every group: what ranks the groups (rebalances, deletions), a few rows per group."""
RANKING_COLUMNS = {name: columns for name, columns in COLUMNS.items() if name in RANKED_BY}
CHART_COLUMNS = {name: columns for name, columns in COLUMNS.items() if name not in RANKED_BY}
"""The tables read for the charted groups alone: the bulk of the warehouse (assignments, lag per partition...)."""

STATUS_VIEW = "dashboards.consumer_status_now"
TOPIC_NAMES_VIEW = "dashboards.topic_names"
VIEWS: tuple[str, ...] = (STATUS_VIEW, TOPIC_NAMES_VIEW)
"""The views the page reads whole; their rows come in ``build_data``'s ``tables`` under the view's name,
timestamps as epoch milliseconds like the tables'."""

ROW_FILTERS: dict[str, tuple[str, ...]] = {
    # Only the tombstones (offset deletions and expiries) of silver.offset_commits: the table holds every
    # commit ever made, which the commit-rate chart reads from gold.offset_commit_rate instead.
    "silver.offset_commits": ("is_tombstone",),
}
"""Per table, boolean columns the readers push down: only rows where they are true are read."""

STATUS_SEVERITY = {"ERR": 3, "WARN": 2, "OK": 1, "NOTFOUND": 0}
"""Burrow's group statuses, worst first when sorted by this descending."""

OWNED, OWNER_STOPPING, UNOWNED = "owned", "owner may have stopped", "unowned"
"""The kinds of ownership segment: a stored assignment; its tail, from the earliest moment its owner may have
left or died in the rebalance that ended it (``gold.rebalance_events.stopped_at_lower_bound``); and the time
between one stored assignment of a partition and the next, when no record names an owner."""


@dataclass(frozen=True)
class Filters:
    """``groups``: only these group ids (empty: all); ``since``: epoch ms, drop what ended before."""

    groups: tuple[str, ...] = ()
    since: int | None = None

    def keeps(self, row: Row) -> bool:
        return not self.groups or row["group"] in self.groups

    def keeps_time(self, at: int | None) -> bool:
        return self.since is None or (at is not None and at >= self.since)


@dataclass
class DashboardData:
    """Everything the page shows: one list of flat rows per chart, and the groups ranked worst first."""

    generated_at: int
    warehouse: str
    clusters: list[str]
    data_start: int | None = None
    data_end: int | None = None
    groups: list[Row] = field(default_factory=list)
    groups_total: int = 0
    rebalances: list[Row] = field(default_factory=list)
    ownership: list[Row] = field(default_factory=list)
    lag: list[Row] = field(default_factory=list)
    commit_rate: list[Row] = field(default_factory=list)
    deletions: list[Row] = field(default_factory=list)
    missing_tables: list[str] = field(default_factory=list)

    def as_json_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def charted_groups(self) -> list[Row]:
        return [g for g in self.groups if g["charted"]]


def group_label(cluster: str, group: str, multi_cluster: bool) -> str:
    return f"{cluster}/{group}" if multi_cluster else group


def when(ms: int | None) -> str:
    """A moment as the page prints it (UTC, milliseconds: a dozen rebalances can fit in a minute)."""
    if ms is None:
        return "–"
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def seconds_text(ms: int | None) -> str:
    return "?" if ms is None else f"{ms / 1000:.1f} s"


def member_names(membership: Iterable[Row]) -> dict[str, str]:
    """member id -> what an operator knows it by: its client id (and static instance id, when it has one)."""
    names: dict[str, str] = {}
    for m in membership:
        name = m.get("client_id") or m["member_id"]
        if m.get("group_instance_id"):
            name = f"{name} ({m['group_instance_id']})"
        names[m["member_id"]] = name
    return names


def rebalance_points(events: Iterable[Row], filters: Filters, names: dict[str, str] | None = None,
                     multi_cluster: bool = False) -> list[Row]:
    """One point per completed rebalance and per static member restart, oldest first per group.

    ``joined`` and ``left`` name the members by client id (``names``); ``label`` is what the chart writes
    beside the point (``+a2 -a1``). How long members stopped is a bound, never a duration: the start of a
    classic rebalance is not recorded (``gold.rebalance_events.stopped_ms_*``).
    """
    names = names or {}
    points = []
    for e in events:
        if not filters.keeps(e) or not filters.keeps_time(e["stable_at"]):
            continue
        restart = e["event_type"] == "static_member_restart"
        joined = [names.get(m, m) for m in e.get("members_joined") or []]
        left = [names.get(m, m) for m in e.get("members_left") or []]
        restarted = list(e.get("static_restarts") or [])
        label = " ".join([f"+{n}" for n in joined] + [f"-{n}" for n in left] + [f"~{n}" for n in restarted])
        lower, upper = e.get("stopped_ms_lower_bound"), e.get("stopped_ms_upper_bound")
        points.append({
            "group": group_label(e["cluster_name"], e["group"], multi_cluster), "t": e["stable_at"],
            "at": when(e["stable_at"]), "kind": "static restart" if restart else "rebalance",
            "cause": e["likely_cause"] or "unknown", "storm": bool(e.get("is_storm")),
            "generations": f"{e['from_generation']} → {e['to_generation']}",
            "from_generation": e["from_generation"], "to_generation": e["to_generation"],
            "members": f"{e['members_before']} → {e['members_after']}",
            "joined": ", ".join(joined) or "–", "left": ", ".join(left) or "–",
            "static_restarts": ", ".join(restarted) or "–", "label": label,
            "partitions_moved": e.get("partitions_moved"),
            "protocol": e.get("rebalance_protocol") or "–",
            "triggered_by": ", ".join(names.get(m, m) for m in e.get("triggered_by") or []) or "–",
            # the earliest moment a member may have stopped for it: the rule drawn before the point
            "stopped_from": e.get("stopped_at_lower_bound"),
            "stopped_ms_lower_bound": lower, "stopped_ms_upper_bound": upper,
            "stopped": ("–" if upper is None else
                        f"between {seconds_text(lower)} and {seconds_text(upper)} (bounds from the records)"),
        })
    return sorted(points, key=lambda p: (p["group"], p["t"], p["to_generation"], p["kind"]))


def _ending_rebalance(events: Sequence[Row], generation: int, valid_to: int) -> Row | None:
    """The rebalance that ended an assignment of ``generation``: the first one from it after ``valid_to``."""
    later = [e for e in events if e["event_type"] == "rebalance" and e["from_generation"] == generation
             and e["stable_at"] >= valid_to]
    return min(later, key=lambda e: e["stable_at"]) if later else None


def named(assignments: Iterable[Row], topic_names: Iterable[Row]) -> list[Row]:
    """``assignments`` with each KIP-848 row's null ``topic`` named by its ``topic_id`` (rows of
    ``dashboards.topic_names``): gold keeps the id and joins names at read, so a name that arrives late needs no
    recompute."""
    names = {(r["cluster_name"], r["topic_id"]): r["topic"] for r in topic_names}
    return [r if r.get("topic") is not None or r.get("topic_id") is None
            else {**r, "topic": names.get((r["cluster_name"], r["topic_id"]))} for r in assignments]


def ownership_segments(rows: Iterable[Row], events: Iterable[Row], filters: Filters, data_end: int,
                       multi_cluster: bool = False) -> list[Row]:
    """Who owned each partition when, and when nobody did, as segments of three kinds (see ``OWNED``).

    * a stored assignment is ``owned`` from ``valid_from`` to ``valid_to``; a current one (``valid_to``
      null) to ``data_end``, the newest moment the warehouse knows of (not the page's generation time,
      which would squeeze a minute of rebalances into a sliver);
    * its tail is ``owner may have stopped`` from the ending rebalance's ``stopped_at_lower_bound`` on, when
      the owner left the group in it (``members_left``: it left or died, and its partitions were owned by
      nobody from then until the rebalance handed them out; nothing records when exactly). Members that
      stayed revoke at the rebalance's start (eager) or not at all (cooperative, KIP-429); their bars run
      to ``valid_to``, the table's upper bound;
    * between two stored assignments of the partition it is ``unowned``: the next generation's
      assignment was not stored yet (a rebalance in progress; ``valid_to`` is the new generation's start).
      A cooperative rebalance that left a partition with the same member did not revoke it (KIP-429), so
      that gap is drawn owned, as a continuation of the owner's bar.

    KIP-848 target assignments (what the coordinator wants a member to own) are not ownership and are left
    out. ``since`` clips segments to start no earlier than it (and drops those that ended before it).
    """
    by_group: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for e in events:
        by_group[(e["cluster_name"], e["group"])].append(e)
    lanes: dict[tuple[str, str, str, int], list[Row]] = defaultdict(list)
    for r in rows:
        if r.get("assignment_kind") == "target" or not filters.keeps(r):
            continue
        lanes[(r["cluster_name"], r["group"], r["topic"] or "?", r["partition"])].append(r)
    segments: list[Row] = []
    for (cluster, group, topic, partition), intervals in sorted(lanes.items()):
        label = group_label(cluster, group, multi_cluster)
        lane = f"{topic}-{partition}"
        intervals.sort(key=lambda r: (r["valid_from"], r["generation"]))
        group_events = by_group.get((cluster, group), [])
        pieces: list[Row] = []

        def piece(kind: str, start: int, end: int, r: Row | None, note: str, out: list[Row] = pieces) -> None:
            if end > start or (kind == OWNED and end == start):
                out.append({"kind": kind, "from": start, "to": end, "row": r, "note": note})

        for i, r in enumerate(intervals):
            nxt = intervals[i + 1] if i + 1 < len(intervals) else None
            end = r["valid_to"] if r["valid_to"] is not None else data_end
            stop_from = None
            kept = False
            if r["valid_to"] is not None:
                ending = _ending_rebalance(group_events, r["generation"], r["valid_to"])
                if ending is not None:
                    same_owner = nxt is not None and nxt["member_id"] == r["member_id"]
                    kept = same_owner and ending.get("rebalance_protocol") == "cooperative"
                    lower = ending.get("stopped_at_lower_bound")
                    if r["member_id"] in (ending.get("members_left") or []) and lower is not None:
                        stop_from = max(r["valid_from"], min(lower, end))
            if stop_from is not None and stop_from < end:
                piece(OWNED, r["valid_from"], stop_from, r, "")
                piece(OWNER_STOPPING, stop_from, end, r, "")
            else:
                piece(OWNED, r["valid_from"], end, r, "")
            if nxt is not None and r["valid_to"] is not None and nxt["valid_from"] > r["valid_to"]:
                if kept:
                    piece(OWNED, r["valid_to"], nxt["valid_from"], r, "kept through a cooperative rebalance")
                else:
                    piece(UNOWNED, r["valid_to"], nxt["valid_from"], None, "")
        for p in pieces:
            start, end = p["from"], p["to"]
            if filters.since is not None:
                if end < filters.since:
                    continue
                start = max(start, filters.since)
            r = p["row"]
            segments.append({
                "group": label, "topic": topic, "partition": partition, "lane": f"{label} {lane}",
                "kind": p["kind"], "from": start, "to": end, "from_at": when(start),
                "to_at": when(end) if r is None or r["valid_to"] is not None or end != data_end
                else f"still owned at the newest record ({when(end)})",
                "client": None if r is None else (r["client_id"] or r["member_id"]),
                "member": None if r is None else r["member_id"],
                "generation": None if r is None else r["generation"],
                "open": r is not None and r["valid_to"] is None, "note": p["note"] or None,
            })
    return segments


def lag_points(rows: Iterable[Row], filters: Filters, multi_cluster: bool = False) -> list[Row]:
    """One point per partition and end-offset snapshot: lag in messages and by both seconds estimators.

    The two estimators of ``gold.consumer_lag`` disagree by design (interpolation between end-offset
    snapshots, and the timestamp of the message at the committed offset), so both are kept, labelled;
    ``status`` is the partition's Burrow status (``none`` when nothing is committed).
    """
    points = []
    for r in rows:
        if not filters.keeps(r) or not filters.keeps_time(r["snapshot_time"]):
            continue
        label = group_label(r["cluster_name"], r["group"], multi_cluster)
        points.append({
            "group": label, "topic": r.get("topic"), "partition": r.get("partition"),
            "lane": f"{label} {r.get('topic')}-{r.get('partition')}", "t": r["snapshot_time"],
            "at": when(r["snapshot_time"]), "lag": r["lag"],
            "seconds_interpolated": r.get("lag_seconds_interpolated"),
            "seconds_message_timestamp": r.get("lag_seconds_message_timestamp"),
            "status": r.get("partition_status") or "none", "group_status": r.get("group_status"),
            "group_lag": r.get("group_lag"),
        })
    return sorted(points, key=lambda p: (p["group"], p["t"], p["topic"] or "", p["partition"] or 0))


def commit_rate_points(rows: Iterable[Row], filters: Filters, multi_cluster: bool = False) -> list[Row]:
    """One point per group and minute of ``gold.offset_commit_rate``, and zeros for the minutes without commits
    between the group's first and last minute in the window.

    The table has a row only for a minute with commits (``pipelines/gold/offset_commit_rate.py``); without the
    zeros, a line from one busy minute to the next would be drawn through minutes when the group committed nothing.
    A stretch without commits gets a zero at each end (its first and last minute), and the chart's straight line
    between them is zero all along: a group idle for days adds two points, not thousands.
    """
    by_group: dict[str, dict[int, Row]] = defaultdict(dict)
    for r in rows:
        if filters.keeps(r) and filters.keeps_time(r["minute"]):
            label = group_label(r["cluster_name"], r["group"], multi_cluster)
            by_group[label][r["minute"]] = {
                "group": label, "t": r["minute"], "at": when(r["minute"]), "commit_records": r["commit_records"],
                "commit_requests": r["commit_requests"], "partitions": r["partitions"]}
    points: list[Row] = []
    for label, minutes in sorted(by_group.items()):
        busy = sorted(minutes)
        idle = {t for before, after in zip(busy, busy[1:], strict=False) if after - before > MINUTE_MS
                for t in (before + MINUTE_MS, after - MINUTE_MS)}
        points += [minutes.get(t) or {"group": label, "t": t, "at": when(t), "commit_records": 0,
                                      "commit_requests": 0, "partitions": 0} for t in sorted({*busy, *idle})]
    return points


def deletion_points(tombstones: Iterable[Row], states: Iterable[Row], filters: Filters,
                    multi_cluster: bool = False) -> list[Row]:
    """Offset deletions (offset tombstones, one point per group and moment) and group deletions (Dead).

    A tombstone does not say why: an expired offset, an OffsetDelete and a group deletion look the same in
    the records (a deleted group's offsets are tombstoned at its deletion, beside its group tombstone).
    """
    offsets: dict[tuple[str, int], list[Row]] = defaultdict(list)
    for r in tombstones:
        if r.get("is_tombstone") is False or not filters.keeps(r) or not filters.keeps_time(r["record_timestamp"]):
            continue
        offsets[(group_label(r["cluster_name"], r["group"], multi_cluster), r["record_timestamp"])].append(r)
    points = []
    for (label, at), deleted in offsets.items():
        by_topic: dict[str, list[int]] = defaultdict(list)
        for r in deleted:
            by_topic[r["topic"]].append(r["partition"])
        points.append({"group": label, "t": at, "at": when(at), "kind": "offsets deleted or expired",
                       "partitions": len(deleted),
                       "what": "; ".join(f"{t}: {', '.join(map(str, sorted(ps)))}"
                                         for t, ps in sorted(by_topic.items()))})
    for r in states:
        if r["state"] == "Dead" and filters.keeps(r) and filters.keeps_time(r["at"]):
            points.append({"group": group_label(r["cluster_name"], r["group"], multi_cluster), "t": r["at"],
                           "at": when(r["at"]), "kind": "group deleted or expired", "partitions": None,
                           "what": "group tombstone"})
    return sorted(points, key=lambda p: (p["group"], p["t"], p["kind"]))


def status_rows(view_rows: Iterable[Row], filters: Filters, multi_cluster: bool = False) -> list[Row]:
    """The status table: one row per group of the view ``dashboards.consumer_status_now``, as it answers.

    Only renamed for the page (``cluster``, ``last_commit``, ``snapshot``; ``group`` labelled with its cluster
    when there are several) and filtered by ``--group``; every value is the view's, nothing is recomputed.
    """
    rows = []
    for r in view_rows:
        if filters.groups and r["group"] not in filters.groups:
            continue
        rows.append({
            "cluster": r["cluster_name"], "group": group_label(r["cluster_name"], r["group"], multi_cluster),
            "state": r["state"], "generation": r["generation"], "members": r["members"],
            "last_commit": r["last_commit_at"], "committed_partitions": r["committed_partitions"],
            "burrow_status": r["burrow_status"], "total_lag": r["total_lag"],
            "lagging_partitions": r["lagging_partitions"],
            **{f"{prefix}_{estimator}": r[f"{prefix}_{estimator}"]
               for estimator in ("interpolated", "message_timestamp")
               for prefix in ("max_lag_seconds", "lag_seconds_unknown")},
            "partitions_not_ok": r["partitions_not_ok"], "snapshot": r["lag_snapshot_time"],
            "group_type": r.get("group_type"),
        })
    return sorted(rows, key=lambda s: (s["cluster"], s["group"]))


def rank_groups(status: Sequence[Row], rebalances: Sequence[Row], deletions: Sequence[Row],
                max_charted: int = MAX_CHARTED_GROUPS, charted: Collection[str] | None = None) -> list[Row]:
    """Every group once, worst first: Burrow status, then rebalances (in the range shown), then lag.

    Each row is a status row plus ``rank`` (1 = worst), ``rebalances``, ``storms``, ``static_restarts``
    and ``charted`` (whether the charts carry its rows: the ``max_charted`` worst, or those in ``charted``).
    """
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for p in rebalances:
        c = counts[p["group"]]
        if p["kind"] == "rebalance":
            c[0] += 1
            c[1] += int(p["storm"])
        else:
            c[2] += 1
    by_group = {s["group"]: s for s in status}
    for name in list(counts) + [d["group"] for d in deletions]:
        by_group.setdefault(name, {"group": name, "burrow_status": None, "total_lag": None})
    ranked = sorted(by_group.values(), key=lambda s: (
        -STATUS_SEVERITY.get(s.get("burrow_status") or "", -1), -counts[s["group"]][0], -(s.get("total_lag") or 0),
        s["group"]))
    return [{**s, "rank": i + 1, "rebalances": counts[s["group"]][0], "storms": counts[s["group"]][1],
             "static_restarts": counts[s["group"]][2],
             "charted": i < max_charted if charted is None else s["group"] in charted}
            for i, s in enumerate(ranked)]


def charted_groups(tables: dict[str, list[Row]], filters: Filters,
                   detail_rows: Mapping[tuple[str, str], int] | None = None, max_charted: int = MAX_CHARTED_GROUPS,
                   max_rows: int = MAX_CHART_ROWS) -> dict[str, str]:
    """Label -> group id of the groups to chart, from ``RANKING_COLUMNS``' tables and the status view alone:
    worst first as ``build_data`` ranks them, at most ``max_charted``, while their ``detail_rows`` (per cluster
    and group: how many rows of ``CHART_COLUMNS``' tables it has) fit in ``max_rows``."""
    keys = {(r["cluster_name"], r["group"]) for name in (*RANKED_BY, STATUS_VIEW) for r in tables.get(name) or []}
    multi = len({cluster for cluster, _ in keys}) > 1
    ids = {group_label(cluster, group, multi): group for cluster, group in keys}
    rows = {group_label(cluster, group, multi): n for (cluster, group), n in (detail_rows or {}).items()}
    ranked = rank_groups(status_rows(tables.get(STATUS_VIEW) or [], filters, multi),
                         rebalance_points(tables.get("gold.rebalance_events") or [], filters, {}, multi),
                         deletion_points(tables.get("silver.offset_commits") or [],
                                         tables.get("gold.group_state_history") or [], filters, multi),
                         max_charted=len(keys))
    chosen: dict[str, str] = {}
    total = 0
    for g in ranked:
        label = g["group"]
        if len(chosen) == max_charted:
            break
        if label in ids and (not chosen or total + rows.get(label, 0) <= max_rows):
            chosen[label] = ids[label]
            total += rows.get(label, 0)
    return chosen


def build_data(tables: dict[str, list[Row]], filters: Filters, *, now: int, warehouse: str,
               max_charted: int = MAX_CHARTED_GROUPS, charted: Collection[str] | None = None) -> DashboardData:
    """Everything the page shows, from the rows of ``COLUMNS``' tables and ``VIEWS`` (absent ones count as empty).

    ``charted``: the labels of the groups to chart (``charted_groups``); default the ``max_charted`` worst."""

    def rows(name: str) -> list[Row]:
        return tables.get(name) or []

    clusters = sorted({r["cluster_name"] for name in (*COLUMNS, *VIEWS) for r in rows(name)})
    multi = len(clusters) > 1
    moments = [t for t in (
        *(r["stable_at"] for r in rows("gold.rebalance_events")),
        *(t for r in rows("gold.partition_assignments") for t in (r["valid_from"], r["valid_to"])),
        *(r["snapshot_time"] for r in rows("gold.consumer_lag")),
        *(r["at"] for r in rows("gold.group_state_history")),
        *(r["minute"] for r in rows("gold.offset_commit_rate")),
        *(r["record_timestamp"] for r in rows("silver.offset_commits")),
        *(r["last_commit_at"] for r in rows(STATUS_VIEW)),
    ) if t is not None]
    data_end = max(moments, default=now)
    data_start = min(moments, default=now) if filters.since is None else filters.since
    names = member_names(rows("gold.group_membership"))
    rebalances = rebalance_points(rows("gold.rebalance_events"), filters, names, multi)
    deletions = deletion_points(rows("silver.offset_commits"), rows("gold.group_state_history"), filters, multi)
    status = status_rows(rows(STATUS_VIEW), filters, multi)
    groups = rank_groups(status, rebalances, deletions, max_charted, charted)
    rank = {g["group"]: g["rank"] for g in groups if g["charted"]}

    def of_charted(name: str) -> list[Row]:
        # only the charted groups' rows are shaped: at 10,000 groups most rows would be shaped for nothing
        return [r for r in rows(name) if group_label(r["cluster_name"], r["group"], multi) in rank]

    def charted(points: list[Row]) -> list[Row]:
        return [{**p, "rank": rank[p["group"]]} for p in points if p["group"] in rank]

    return DashboardData(
        generated_at=now, warehouse=warehouse, clusters=clusters, data_start=data_start, data_end=data_end,
        groups=groups, groups_total=len(groups),
        rebalances=charted(rebalances),
        ownership=charted(ownership_segments(named(of_charted("gold.partition_assignments"), rows(TOPIC_NAMES_VIEW)),
                                             of_charted("gold.rebalance_events"), filters, data_end, multi)),
        lag=charted(lag_points(of_charted("gold.consumer_lag"), filters, multi)),
        commit_rate=charted(commit_rate_points(of_charted("gold.offset_commit_rate"), filters, multi)),
        deletions=charted(deletions),
        missing_tables=sorted(name for name in (*COLUMNS, *VIEWS) if name not in tables),
    )
