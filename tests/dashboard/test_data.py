"""dashboard/data.py and dashboard/render.py: what the page shows, from hand-built rows, without Spark or a browser."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dashboard.data import (
    CHART_COLUMNS,
    COLUMNS,
    OWNED,
    OWNER_STOPPING,
    STATUS_VIEW,
    UNOWNED,
    VIEWS,
    Filters,
    build_data,
    charted_groups,
    commit_rate_points,
    deletion_points,
    lag_points,
    named,
    ownership_segments,
    rank_groups,
    rebalance_points,
    status_rows,
)
from dashboard.render import dashboard_spec, render_html
from dashboard.vega import VegaBundle
from tests.dashboard.status_view import Row, consumer_status_view

T0 = 1_790_000_000_000
S = 1000
MIN = 60_000
STUB_BUNDLE = VegaBundle(script="window.vegaEmbed = function () { return new Promise(function () {}); };",
                         vega="0", vega_lite="0", vega_embed="0", vl_convert="0")
"""A real bundle object with a trivial script: render_html's output without the 900 kB of Vega."""


def event(group: str, to_generation: int, at: int, event_type: str = "rebalance", storm: bool = False,
          cluster: str = "c", cause: str = "member_joined", joined: tuple[str, ...] = (),
          left: tuple[str, ...] = (), protocol: str = "eager", lower: int | None = None) -> dict:
    return {"cluster_name": cluster, "group": group, "event_type": event_type, "from_generation": to_generation - 1,
            "to_generation": to_generation, "join_completed_at": at - 100, "stable_at": at,
            "stopped_at_lower_bound": lower, "stopped_at_upper_bound": at - 100,
            "stopped_ms_lower_bound": 100, "stopped_ms_upper_bound": 2500, "members_before": 1, "members_after": 2,
            "members_joined": list(joined), "members_left": list(left), "static_restarts": [],
            "partitions_moved": 3, "likely_cause": cause, "triggered_by": None, "rebalance_protocol": protocol,
            "is_storm": storm}


def lag_row(group: str, snapshot: int, partition: int, lag: int | None, group_lag: int | None,
            status: str | None = "OK", group_status: str = "OK", cluster: str = "c") -> dict:
    return {"cluster_name": cluster, "group": group, "topic": "t", "snapshot_id": snapshot,
            "snapshot_time": T0 + snapshot * MIN, "partition": partition, "partition_status": status, "lag": lag,
            "group_lag": group_lag, "group_status": group_status,
            "lag_seconds_interpolated": None if lag is None else float(lag),
            "lag_seconds_message_timestamp": None if lag is None else 2.0 * lag}


def assignment(group: str, partition: int, client: str, generation: int, start: int, end: int | None,
               kind: str = "current") -> dict:
    return {"cluster_name": "c", "group": group, "topic": "t", "partition": partition, "member_id": f"{client}-id",
            "client_id": client, "generation": generation, "valid_from": start, "valid_to": end,
            "assignment_kind": kind}


def test_rebalance_points_include_static_restarts_and_name_the_members_who_joined_and_left() -> None:
    restart = {**event("b", 2, T0 + 3 * MIN, event_type="static_member_restart", cause="static_member_restart"),
               "static_restarts": ["inst-1"], "stopped_ms_lower_bound": None, "stopped_ms_upper_bound": None}
    events = [event("b", 3, T0 + 5 * MIN, storm=True, left=("x-id",), cause="member_left_or_vanished"),
              event("b", 2, T0 + MIN, joined=("x-id", "y-id")), event("a", 7, T0 + 2 * MIN), restart]
    points = rebalance_points(events, Filters(), names={"x-id": "x", "y-id": "y (inst-1)"})
    assert [(p["group"], p["kind"], p["cause"], p["storm"]) for p in points] == [
        ("a", "rebalance", "member_joined", False), ("b", "rebalance", "member_joined", False),
        ("b", "static restart", "static_member_restart", False), ("b", "rebalance", "member_left_or_vanished", True)]
    assert [p["label"] for p in points[1:]] == ["+x +y (inst-1)", "~inst-1", "-x"]
    assert (points[1]["joined"], points[1]["left"], points[3]["left"]) == ("x, y (inst-1)", "–", "x")
    # a bound, never "duration"
    assert points[1]["stopped"] == "between 0.1 s and 2.5 s (bounds from the records)" and points[2]["stopped"] == "–"
    assert [(p["group"], p["to_generation"]) for p in rebalance_points(events, Filters(groups=("a",)))] == [("a", 7)]
    assert [p["to_generation"] for p in rebalance_points(events, Filters(since=T0 + 2 * MIN))] == [7, 2, 3]


def test_a_partition_is_unowned_between_two_stored_assignments_and_fading_once_its_owner_may_have_stopped() -> None:
    # x owns p0 in generation 1; x dies, and the rebalance that ends generation 1 (x left, members stopped
    # no earlier than T0+40s) completes its join at T0+60s and stores y's assignment at T0+61s.
    rows = [assignment("g", 0, "x", 1, T0, T0 + 60 * S), assignment("g", 0, "y", 2, T0 + 61 * S, None)]
    events = [event("g", 2, T0 + 61 * S, left=("x-id",), cause="member_left_or_vanished", lower=T0 + 40 * S)]
    segments = ownership_segments(rows, events, Filters(), data_end=T0 + 90 * S)
    assert [(s["kind"], s["client"], s["from"] - T0, s["to"] - T0) for s in segments] == [
        (OWNED, "x", 0, 40 * S), (OWNER_STOPPING, "x", 40 * S, 60 * S), (UNOWNED, None, 60 * S, 61 * S),
        (OWNED, "y", 61 * S, 90 * S)]
    # the open interval ends at the newest record the warehouse holds, not at the page's generation time
    assert segments[-1]["open"] and segments[-1]["to_at"].startswith("still owned at the newest record")
    clipped = ownership_segments(rows, events, Filters(since=T0 + 50 * S), data_end=T0 + 90 * S)
    assert [(s["kind"], s["from"] - T0) for s in clipped] == [(OWNER_STOPPING, 50 * S), (UNOWNED, 60 * S),
                                                              (OWNED, 61 * S)]


def test_a_cooperative_rebalance_that_keeps_a_partition_with_its_owner_leaves_no_gap() -> None:
    rows = [assignment("g", 0, "x", 1, T0, T0 + 60 * S), assignment("g", 0, "x", 2, T0 + 61 * S, None)]
    events = [event("g", 2, T0 + 61 * S, protocol="cooperative", joined=("y-id",), lower=T0 + 40 * S)]
    segments = ownership_segments(rows, events, Filters(), data_end=T0 + 90 * S)
    assert {s["kind"] for s in segments} == {OWNED}
    assert [(s["from"] - T0, s["to"] - T0) for s in segments] == [(0, 60 * S), (60 * S, 61 * S), (61 * S, 90 * S)]


def test_an_owner_that_stays_through_an_eager_rebalance_keeps_its_bar_to_the_tables_upper_bound() -> None:
    rows = [assignment("g", 0, "x", 1, T0, T0 + 60 * S), assignment("g", 0, "y", 2, T0 + 61 * S, None)]
    events = [event("g", 2, T0 + 61 * S, joined=("y-id",), lower=T0 + 40 * S)]  # x stayed, y joined
    segments = ownership_segments(rows, events, Filters(), data_end=T0 + 90 * S)
    assert [(s["kind"], s["from"] - T0, s["to"] - T0) for s in segments] == [
        (OWNED, 0, 60 * S), (UNOWNED, 60 * S, 61 * S), (OWNED, 61 * S, 90 * S)]


def test_kip848_target_assignments_are_not_drawn_as_ownership() -> None:
    owned = assignment("g", 0, "x", 3, T0, None)
    revoking = assignment("g", 1, "x", 3, T0, None, kind="pending_revocation")
    target = assignment("g", 1, "y", 4, T0, None, kind="target")
    segments = ownership_segments([owned, revoking, target], [], Filters(), data_end=T0 + MIN)
    assert [(s["lane"], s["client"]) for s in segments] == [("g t-0", "x"), ("g t-1", "x")]


def test_lag_points_are_per_partition_with_both_estimators_and_the_burrow_status() -> None:
    rows = [lag_row("a", 2, 0, 5, 12, status="WARN"), lag_row("a", 2, 1, 7, 12), lag_row("a", 1, 0, 0, 0),
            lag_row("b", 2, 0, None, None, status=None, group_status="NOTFOUND")]
    points = lag_points(rows, Filters())
    assert [(p["group"], p["t"] - T0, p["partition"], p["lag"], p["seconds_interpolated"],
             p["seconds_message_timestamp"], p["status"]) for p in points] == [
        ("a", MIN, 0, 0, 0.0, 0.0, "OK"), ("a", 2 * MIN, 0, 5, 5.0, 10.0, "WARN"),
        ("a", 2 * MIN, 1, 7, 7.0, 14.0, "OK"),
        ("b", 2 * MIN, 0, None, None, None, "none")]
    assert {p["group"] for p in lag_points(rows, Filters(since=T0 + 2 * MIN, groups=("a",)))} == {"a"}


def test_offset_tombstones_are_one_point_per_group_and_moment_and_a_dead_group_is_a_group_deletion() -> None:
    tombstones = [{"cluster_name": "c", "group": "g", "topic": "t", "partition": p, "record_timestamp": T0,
                   "is_tombstone": True} for p in (2, 0, 1)]
    states = [{"cluster_name": "c", "group": "g", "state": "Empty", "at": T0 - S, "generation": 3},
              {"cluster_name": "c", "group": "g", "state": "Dead", "at": T0, "generation": None}]
    points = deletion_points(tombstones, states, Filters())
    assert [(p["kind"], p["partitions"], p["what"]) for p in points] == [
        ("group deleted or expired", None, "group tombstone"), ("offsets deleted or expired", 3, "t: 0, 1, 2")]
    assert deletion_points(tombstones, states, Filters(since=T0 + 1)) == []


def test_commit_rate_points_are_the_groups_minutes() -> None:
    rows = [{"cluster_name": "c", "group": g, "minute": T0 + m * MIN, "commit_records": 8, "commit_requests": 2,
             "partitions": 4} for g, m in (("b", 1), ("a", 2), ("a", 1))]
    assert [(p["group"], p["t"] - T0) for p in commit_rate_points(rows, Filters())] == [
        ("a", MIN), ("a", 2 * MIN), ("b", MIN)]


def commit_rate_row(group: str, minute: int, requests: int = 2) -> dict:
    return {"cluster_name": "c", "group": group, "minute": T0 + minute * MIN, "commit_records": 2 * requests,
            "commit_requests": requests, "partitions": 4}


def test_the_minutes_a_group_did_not_commit_in_between_two_that_it_did_are_zeros() -> None:
    rows = [commit_rate_row("a", 0, 3), commit_rate_row("a", 3, 5), commit_rate_row("a", 4), commit_rate_row("b", 7)]
    assert [(p["group"], (p["t"] - T0) // MIN, p["commit_requests"], p["commit_records"], p["partitions"])
            for p in commit_rate_points(rows, Filters())] == [
        ("a", 0, 3, 6, 4), ("a", 1, 0, 0, 0), ("a", 2, 0, 0, 0), ("a", 3, 5, 10, 4), ("a", 4, 2, 4, 4),
        ("b", 7, 2, 4, 4)]
    # Only within the window: a minute the window leaves out neither counts nor starts the zeros.
    windowed = commit_rate_points(rows, Filters(since=T0 + MIN))
    assert [(p["group"], (p["t"] - T0) // MIN) for p in windowed] == [("a", 3), ("a", 4), ("b", 7)]


def test_a_long_stretch_without_commits_is_a_zero_at_each_of_its_ends() -> None:
    # A straight line between the two zeros is zero all along: a week idle is two points, not 10,000.
    week = 7 * 24 * 60
    points = commit_rate_points([commit_rate_row("a", 0), commit_rate_row("a", week)], Filters())
    assert [((p["t"] - T0) // MIN, p["commit_requests"]) for p in points] == [
        (0, 2), (1, 0), (week - 1, 0), (week, 2)]


def test_the_commit_rate_chart_draws_a_line_per_group_with_a_legend_through_zeros_at_minutes_without_commits(
        ) -> None:
    import vl_convert as vlc

    tables = {"gold.rebalance_events": [event("a", 2, T0), event("a", 3, T0 + S), event("b", 2, T0)],
              "gold.offset_commit_rate": [commit_rate_row("a", 0), commit_rate_row("a", 3), commit_rate_row("b", 1)]}
    spec = dashboard_spec(build_data(tables, Filters(), now=T0, warehouse="w"))
    drawn = [(p["group"], (p["t"] - T0) // MIN, p["commit_requests"]) for p in spec["datasets"]["commit_rate"]]
    assert drawn == [("a", 0, 2), ("a", 1, 0), ("a", 2, 0), ("a", 3, 2), ("b", 1, 2)]

    # Vega-Lite compiled to Vega by the same library the page embeds: the chart's line mark is one path per
    # group, stroked by a colour scale of the group, and that scale has a legend titled "group".
    vega = vlc.vegalite_to_vega(spec)
    (chart,) = (m for m in vega["marks"] if m.get("name") == "commit_rate_group")

    def marks(mark: dict) -> list[dict]:
        return [m for child in mark.get("marks", []) for m in (child, *marks(child))]

    (paths,) = (m for m in marks(chart) if m.get("from", {}).get("facet", {}).get("groupby") == ["group"])
    (line,) = (m for m in marks(paths) if m["type"] == "line")
    assert line["encode"]["update"]["stroke"] == {"scale": "commit_rate_color", "field": "group"}
    assert [legend["title"] for legend in chart["legends"] if legend.get("stroke") == "commit_rate_color"] == ["group"]


def test_groups_are_ranked_worst_first_by_burrow_status_then_rebalances_then_lag() -> None:
    status = [{"group": "calm", "burrow_status": "OK", "total_lag": 0},
              {"group": "lagging", "burrow_status": "OK", "total_lag": 900},
              {"group": "stopped", "burrow_status": "ERR", "total_lag": 5},
              {"group": "churning", "burrow_status": "OK", "total_lag": 0}]
    rebalances = rebalance_points([event("churning", n, T0 + n * S) for n in range(1, 13)], Filters())
    ranked = rank_groups(status, rebalances, [], max_charted=3)
    assert [(g["rank"], g["group"], g["rebalances"], g["charted"]) for g in ranked] == [
        (1, "stopped", 0, True), (2, "churning", 12, True), (3, "lagging", 0, True), (4, "calm", 0, False)]


def test_the_charts_carry_only_the_worst_groups_rows_each_with_its_rank() -> None:
    tables = {"gold.rebalance_events": [event(g, n, T0 + n * S) for g, count in (("a", 1), ("b", 3), ("c", 2))
                                        for n in range(1, count + 1)]}
    data = build_data(tables, Filters(), now=T0, warehouse="w", max_charted=2)
    assert [(g["group"], g["charted"]) for g in data.groups] == [("b", True), ("c", True), ("a", False)]
    assert {(p["group"], p["rank"]) for p in data.rebalances} == {("b", 1), ("c", 2)}
    assert data.groups_total == 3 and data.data_end == T0 + 3 * S


def test_the_charts_detail_of_the_charted_groups_alone_draws_the_same_page_as_all_of_it() -> None:
    """build.py reads assignments, lag, membership and commit rate only for ``charted_groups``: nothing charted
    may depend on another group's detail rows."""
    unknown = ("state", "generation", "members", "last_commit_at", "committed_partitions", "lagging_partitions",
               "max_lag_seconds_interpolated", "lag_seconds_unknown_interpolated",
               "max_lag_seconds_message_timestamp", "lag_seconds_unknown_message_timestamp", "partitions_not_ok",
               "lag_snapshot_time")
    tables = {
        "gold.rebalance_events": [event(g, n, T0 + n * S) for g, count in (("a", 1), ("b", 3), ("c", 2))
                                  for n in range(1, count + 1)],
        STATUS_VIEW: [{"cluster_name": "c", "group": g, "burrow_status": status, "total_lag": lag,
                       **dict.fromkeys(unknown)}
                      for g, status, lag in (("a", "ERR", 50), ("b", "OK", 0), ("c", "OK", 0), ("d", "OK", 9))],
        "gold.partition_assignments": [assignment(g, p, f"{g}-1", 1, T0, None) for g in "abcd" for p in range(2)],
        "gold.consumer_lag": [lag_row(g, 1, p, 5, 10) for g in "abcd" for p in range(2)],
    }

    ranking = {k: v for k, v in tables.items() if k not in CHART_COLUMNS}
    charted = charted_groups(ranking, Filters(), max_charted=2)

    # The ERR group first, then the one with most rebalances; d (no rebalance, lag 9) and c are left out.
    assert charted == {"a": "a", "b": "b"}
    pruned = {name: [r for r in rows if name not in CHART_COLUMNS or r["group"] in charted.values()]
              for name, rows in tables.items()}
    whole = build_data(tables, Filters(), now=T0, warehouse="w", max_charted=2)
    read_in_two = build_data(pruned, Filters(), now=T0, warehouse="w", charted=set(charted))
    assert read_in_two.ownership == whole.ownership and read_in_two.lag == whole.lag
    assert read_in_two.rebalances == whole.rebalances and read_in_two.groups == whole.groups
    assert {p["group"] for p in whole.ownership} == {"a", "b"}


def test_a_group_with_more_detail_rows_than_the_page_holds_is_passed_over_for_smaller_ones() -> None:
    sizes = (("a", 4), ("big", 3), ("c", 2), ("d", 1))  # rebalances: the order of the ranking
    tables = {"gold.rebalance_events": [event(g, n, T0 + n * S) for g, count in sizes for n in range(1, count + 1)]}
    rows = {("c", "a"): 300, ("c", "big"): 18_000, ("c", "c"): 500, ("c", "d"): 400}

    # a (worst) and c fit in 1,000 rows; big does not, d would exceed it after c
    assert list(charted_groups(tables, Filters(), rows, max_rows=1000)) == ["a", "c"]
    # the worst group is charted whatever its size: its page must chart it
    assert list(charted_groups(tables, Filters(groups=("big",)), rows, max_rows=1000)) == ["big"]
    data = build_data(tables, Filters(), now=T0, warehouse="w", charted={"a", "c"})
    assert [(g["group"], g["charted"]) for g in data.groups] == [("a", True), ("big", False), ("c", True),
                                                                ("d", False)]
    assert {p["group"] for p in data.rebalances} == {"a", "c"}


def test_the_status_view_takes_the_latest_state_the_current_members_and_the_newest_snapshot(tmp_path: Path) -> None:
    committed = [{"cluster_name": "c", "group": g, "commit_timestamp": T0 + n * MIN} for g, n in
                 (("classic", 1), ("classic", 4), ("modern", 2))]
    states = [{"cluster_name": "c", "group": "classic", "state": "Stable", "at": T0, "until": T0 + 5 * MIN,
               "generation": 1},
              {"cluster_name": "c", "group": "classic", "state": "Empty", "at": T0 + 5 * MIN, "generation": 2}]
    members = [{"cluster_name": "c", "group": "classic", "member_id": "m1", "valid_to": T0 + 5 * MIN}]
    lag = [lag_row("classic", 1, 0, 1, 1), lag_row("classic", 3, 0, 9, 20, status="STOP", group_status="ERR"),
           lag_row("classic", 3, 1, 11, 20, group_status="ERR"), lag_row("modern", 3, 0, 0, 0)]
    view = consumer_status_view(tmp_path / "warehouse", committed, states, members, lag)
    status = {s["group"]: s for s in status_rows(view, Filters())}
    classic, modern = status["classic"], status["modern"]
    assert (classic["state"], classic["generation"], classic["members"], classic["last_commit"],
            classic["committed_partitions"]) == ("Empty", 2, 0, T0 + 4 * MIN, 2)
    assert (classic["burrow_status"], classic["total_lag"], classic["max_lag_seconds_interpolated"],
            classic["max_lag_seconds_message_timestamp"], classic["partitions_not_ok"], classic["snapshot"]) == (
        "ERR", 20, 11.0, 22.0, 1, T0 + 3 * MIN)
    assert (modern["max_lag_seconds_interpolated"], modern["lag_seconds_unknown_interpolated"]) == (0.0, 0)
    assert (modern["state"], modern["members"], modern["total_lag"]) == (None, None, 0)
    assert list(status) == ["classic", "modern"]
    assert [s["group"] for s in status_rows(view, Filters(groups=("modern",)))] == ["modern"]
    # the page's status table is these rows, renamed and ranked, nothing recomputed
    data = build_data({STATUS_VIEW: view}, Filters(), now=T0, warehouse="w")
    assert [{k: g[k] for k in status["classic"]} for g in data.groups if g["group"] == "classic"] == [classic]
    assert data.missing_tables == sorted({*COLUMNS, *VIEWS} - {STATUS_VIEW})
    assert data.data_end == T0 + 4 * MIN  # the newest commit counts, as the view gives it


def test_a_group_whose_last_two_states_share_their_millisecond_is_in_the_one_gold_left_open(tmp_path: Path) -> None:
    # CompletingRebalance (the record's currentStateTimestamp) and Stable (its append time) are often the same
    # millisecond; gold closes the first (until) and leaves the second open. Both orders of the rows are
    # written, so that neither "first of the ties" nor "last of the ties" passes.
    def tied(group: str, current_first: bool) -> list[Row]:
        completing = {"cluster_name": "c", "group": group, "state": "CompletingRebalance", "at": T0, "until": T0,
                      "generation": 3}
        stable = {"cluster_name": "c", "group": group, "state": "Stable", "at": T0, "generation": 3}
        return [stable, completing] if current_first else [completing, stable]

    view = consumer_status_view(tmp_path / "warehouse", states=tied("a", True) + tied("b", False))
    assert {(s["group"], s["state"], s["state_since"]) for s in view} == {("a", "Stable", T0), ("b", "Stable", T0)}


def test_groups_of_several_clusters_are_told_apart_by_cluster() -> None:
    tables = {"gold.rebalance_events": [event("g", 2, T0, cluster="eu"), event("g", 2, T0, cluster="us")]}
    data = build_data(tables, Filters(), now=T0, warehouse="w")
    assert data.clusters == ["eu", "us"]
    assert [p["group"] for p in data.rebalances] == ["eu/g", "us/g"]
    assert data.missing_tables == sorted((set(COLUMNS) | set(VIEWS)) - {"gold.rebalance_events"})


def test_the_spec_binds_one_group_picker_and_one_search_box_that_every_chart_filters_on() -> None:
    tables = {"gold.rebalance_events": [event("b", 2, T0), event("b", 3, T0 + S), event("a", 2, T0)]}
    spec = dashboard_spec(build_data(tables, Filters(), now=T0, warehouse="w"))
    params = {p["name"]: p for p in spec["params"]}
    assert params["group_pick"]["bind"]["options"] == ["", "b", "a"]  # worst (most rebalances) first
    assert params["group_search"]["bind"]["input"] == "search"
    zooms = {p["name"] for p in spec["params"] if p.get("bind") == "scales"}
    assert zooms == {"zoom_rebalances", "zoom_ownership", "zoom_lag_messages", "zoom_lag_seconds_interpolated",
                     "zoom_lag_seconds_message_timestamp", "zoom_commit_rate", "zoom_deletions"}
    text = json.dumps(spec)
    assert text.count("datum.group === group_pick") == text.count("dense_rank") > 0


def test_the_page_is_self_contained_and_its_data_cannot_close_the_script_element() -> None:
    hostile = "</script><script>alert(1)</script>"
    data = build_data({"gold.rebalance_events": [event(hostile, 2, T0)]}, Filters(), now=T0, warehouse="w")
    page = render_html(data, bundle=STUB_BUNDLE)
    # Nothing to fetch: no external scripts, styles, fonts or images, and no URL at all.
    assert not re.search(r"<link|<img|<iframe|\ssrc=|@import|url\(", page)
    assert not re.findall(r"https?://", page)
    assert page.count("</script>") == 3  # the spec's, the bundle's and the glue's own
    embedded = re.search(r'<script type="application/json" id="dashboard-spec">(.*?)</script>', page, re.S)
    assert embedded and hostile in embedded.group(1).replace("<\\/", "</")
    params = {p["name"]: p for p in json.loads(embedded.group(1))["params"]}
    assert params["group_pick"]["bind"]["options"][1] == hostile


def test_a_lagging_partition_an_estimator_cannot_age_is_never_shown_as_zero_seconds(tmp_path: Path) -> None:
    # The group of issue 12 item 8: lag 20 on a STOP partition whose committed offset the high watermark
    # passed before the first snapshot (no interpolated estimate), the other partition caught up.
    stopped = {**lag_row("g", 3, 0, 20, 20, status="STOP", group_status="ERR"), "lag_seconds_interpolated": None,
               "lag_seconds_message_timestamp": 412.5}
    caught_up = {**lag_row("g", 3, 1, 0, 20, group_status="ERR"), "lag_seconds_interpolated": 0.0,
                 "lag_seconds_message_timestamp": 0.0}
    view = consumer_status_view(tmp_path / "warehouse", lag=[stopped, caught_up])
    (status,) = status_rows(view, Filters())
    assert (status["max_lag_seconds_interpolated"], status["lag_seconds_unknown_interpolated"]) == (None, 1)
    assert (status["max_lag_seconds_message_timestamp"], status["lag_seconds_unknown_message_timestamp"]) == (
        412.5, 0)
    assert status["lagging_partitions"] == 1
    page = render_html(build_data({"gold.consumer_lag": [stopped, caught_up], STATUS_VIEW: view}, Filters(),
                                  now=T0, warehouse="w"), bundle=STUB_BUNDLE)
    assert "unknown (1 lagging)" in page and "412.5 s" in page


def test_a_kip848_assignment_without_a_name_is_named_by_its_topic_id_on_its_own_cluster() -> None:
    assignments = [{"cluster_name": "c", "topic": None, "topic_id": "id-a"},
                   {"cluster_name": "c", "topic": "recorded", "topic_id": "id-a"},
                   {"cluster_name": "c", "topic": "classic", "topic_id": None},
                   {"cluster_name": "d", "topic": None, "topic_id": "id-a"}]
    names = [{"cluster_name": "c", "topic_id": "id-a", "topic": "orders"}]
    assert [r["topic"] for r in named(assignments, names)] == ["orders", "recorded", "classic", None]

