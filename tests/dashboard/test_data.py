"""dashboard/data.py and dashboard/render.py: what the page shows, from rows, without Spark or a browser."""

from __future__ import annotations

import json
import re

from dashboard.data import COLUMNS, Filters, build_data, consumer_status, lag_series, ownership_lanes, rebalance_points
from dashboard.render import render_html

T0 = 1_790_000_000_000
MIN = 60_000


def event(group: str, to_generation: int, at: int, event_type: str = "rebalance", storm: bool = False,
          cluster: str = "c") -> dict:
    return {"cluster_name": cluster, "group": group, "event_type": event_type, "from_generation": to_generation - 1,
            "to_generation": to_generation, "stable_at": at, "stopped_ms_lower_bound": 100,
            "stopped_ms_upper_bound": 250, "members_before": 1, "members_after": 2, "partitions_moved": 3,
            "likely_cause": "member_joined", "is_storm": storm}


def lag_row(group: str, snapshot: int, partition: int, lag: int | None, group_lag: int | None,
            status: str = "OK", group_status: str = "OK", cluster: str = "c") -> dict:
    return {"cluster_name": cluster, "group": group, "snapshot_id": snapshot, "snapshot_time": T0 + snapshot * MIN,
            "partition": partition, "partition_status": status, "lag": lag, "group_lag": group_lag,
            "group_status": group_status, "lag_seconds_interpolated": None if lag is None else float(lag),
            "lag_seconds_message_timestamp": None if lag is None else 2.0 * lag}


def assignment(group: str, partition: int, client: str, generation: int, start: int, end: int | None) -> dict:
    return {"cluster_name": "c", "group": group, "topic": "t", "partition": partition, "member_id": f"{client}-id",
            "client_id": client, "generation": generation, "valid_from": start, "valid_to": end}


def test_rebalance_points_are_the_rebalances_of_the_chosen_groups_since_the_given_time_oldest_first() -> None:
    events = [event("b", 3, T0 + 5 * MIN, storm=True), event("b", 2, T0 + MIN), event("a", 7, T0 + 2 * MIN),
              event("b", 2, T0 + 3 * MIN, event_type="static_member_restart")]
    assert [(p["group"], p["to_generation"], p["storm"]) for p in rebalance_points(events, Filters())] == [
        ("a", 7, False), ("b", 2, False), ("b", 3, True)]
    assert [(p["group"], p["to_generation"]) for p in rebalance_points(events, Filters(groups=("b",)))] == [
        ("b", 2), ("b", 3)]
    assert [p["to_generation"] for p in rebalance_points(events, Filters(since=T0 + 2 * MIN))] == [7, 3]


def test_lag_series_has_one_point_per_group_and_snapshot_with_the_groups_total_lag() -> None:
    rows = [lag_row("a", 2, 0, 5, 12), lag_row("a", 2, 1, 7, 12), lag_row("a", 1, 0, 0, 0), lag_row("a", 1, 1, 0, 0),
            lag_row("b", 2, 0, None, None, status=None, group_status="NOTFOUND")]
    assert lag_series(rows, Filters()) == [
        {"group": "a", "points": [{"t": T0 + MIN, "lag": 0, "status": "OK"},
                                  {"t": T0 + 2 * MIN, "lag": 12, "status": "OK"}]},
        {"group": "b", "points": [{"t": T0 + 2 * MIN, "lag": None, "status": "NOTFOUND"}]},
    ]
    assert [s["group"] for s in lag_series(rows, Filters(since=T0 + 2 * MIN, groups=("a",)))] == ["a"]
    assert len(lag_series(rows, Filters(since=T0 + 2 * MIN))[0]["points"]) == 1


def test_ownership_lanes_end_open_intervals_now_and_clip_them_to_since() -> None:
    rows = [assignment("g", 1, "x", 1, T0, T0 + 10 * MIN), assignment("g", 0, "x", 1, T0, T0 + 10 * MIN),
            assignment("g", 0, "y", 2, T0 + 11 * MIN, None)]
    lanes, total = ownership_lanes(rows, Filters(), now=T0 + 20 * MIN)
    assert total == 2 and [(lane["partition"], len(lane["bars"])) for lane in lanes] == [(0, 2), (1, 1)]
    assert lanes[0]["bars"][1] == {"from": T0 + 11 * MIN, "to": T0 + 20 * MIN, "open": True, "client": "y",
                                   "member": "y-id", "generation": 2}
    clipped, total = ownership_lanes(rows, Filters(since=T0 + 15 * MIN), now=T0 + 20 * MIN)
    assert total == 1 and clipped[0]["bars"] == [{"from": T0 + 15 * MIN, "to": T0 + 20 * MIN, "open": True,
                                                  "client": "y", "member": "y-id", "generation": 2}]
    first, total = ownership_lanes(rows, Filters(), now=T0 + 20 * MIN, max_lanes=1)
    assert (len(first), total) == (1, 2)


def test_kip848_target_assignments_are_not_drawn_as_ownership() -> None:
    owned = {**assignment("g", 0, "x", 3, T0, None), "assignment_kind": "current"}
    revoking = {**assignment("g", 1, "x", 3, T0, None), "assignment_kind": "pending_revocation"}
    target = {**assignment("g", 1, "y", 4, T0, None), "assignment_kind": "target"}
    lanes, total = ownership_lanes([owned, revoking, target], Filters(), now=T0 + MIN)
    assert total == 2 and [[b["client"] for b in lane["bars"]] for lane in lanes] == [["x"], ["x"]]


def test_consumer_status_takes_the_latest_state_the_current_members_and_the_newest_snapshot() -> None:
    committed = [{"cluster_name": "c", "group": g, "commit_timestamp": T0 + n * MIN} for g, n in
                 (("classic", 1), ("classic", 4), ("modern", 2))]
    states = [{"cluster_name": "c", "group": "classic", "state": "Stable", "at": T0, "generation": 1},
              {"cluster_name": "c", "group": "classic", "state": "Empty", "at": T0 + 5 * MIN, "generation": 2}]
    members = [{"cluster_name": "c", "group": "classic", "member_id": "m1", "valid_to": T0 + 5 * MIN}]
    lag = [lag_row("classic", 1, 0, 1, 1), lag_row("classic", 3, 0, 9, 20, status="STOP", group_status="ERR"),
           lag_row("classic", 3, 1, 11, 20, group_status="ERR"), lag_row("modern", 3, 0, 0, 0)]
    status = {s["group"]: s for s in consumer_status(committed, states, members, lag, Filters())}
    classic, modern = status["classic"], status["modern"]
    assert (classic["state"], classic["generation"], classic["members"], classic["last_commit"],
            classic["committed_partitions"]) == ("Empty", 2, 0, T0 + 4 * MIN, 2)
    assert (classic["burrow_status"], classic["total_lag"], classic["max_lag_seconds_interpolated"],
            classic["max_lag_seconds_message_timestamp"], classic["partitions_not_ok"], classic["snapshot"]) == (
        "ERR", 20, 11.0, 22.0, 1, T0 + 3 * MIN)
    assert (modern["max_lag_seconds_interpolated"], modern["lag_seconds_unknown_interpolated"]) == (0.0, 0)
    assert (modern["state"], modern["members"], modern["total_lag"]) == (None, None, 0)
    assert list(status) == ["classic", "modern"]
    assert [s["group"] for s in consumer_status(committed, states, members, lag, Filters(groups=("modern",)))] == [
        "modern"]


def test_groups_of_several_clusters_are_told_apart_by_cluster() -> None:
    tables = {"gold.rebalance_events": [event("g", 2, T0, cluster="eu"), event("g", 2, T0, cluster="us")]}
    data = build_data(tables, Filters(), now=T0, warehouse="w")
    assert data.clusters == ["eu", "us"]
    assert [p["group"] for p in data.rebalances] == ["eu/g", "us/g"]
    assert data.missing_tables == sorted(set(COLUMNS) - {"gold.rebalance_events"})


def test_the_page_is_self_contained_and_its_data_cannot_close_the_script_element() -> None:
    hostile = "</script><script>alert(1)</script>"
    data = build_data({"gold.rebalance_events": [event(hostile, 2, T0)]}, Filters(), now=T0, warehouse="w")
    page = render_html(data)
    # Nothing to fetch: no external scripts, styles, fonts or images; the only URL is the SVG namespace.
    assert not re.search(r"<link|<img|<iframe|\ssrc=|@import|url\(", page)
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}
    assert page.count("</script>") == 2  # the data block's and the renderer's own
    embedded = re.search(r'<script type="application/json" id="dashboard-data">(.*?)</script>', page, re.S)
    assert embedded and json.loads(embedded.group(1))["rebalances"][0]["group"] == hostile


def test_a_lagging_partition_an_estimator_cannot_age_is_never_shown_as_zero_seconds() -> None:
    # The group of issue 12 item 8: lag 20 on a STOP partition whose committed offset the high watermark
    # passed before the first snapshot (no interpolated estimate), the other partition caught up.
    stopped = {**lag_row("g", 3, 0, 20, 20, status="STOP", group_status="ERR"), "lag_seconds_interpolated": None,
               "lag_seconds_message_timestamp": 412.5}
    caught_up = {**lag_row("g", 3, 1, 0, 20, group_status="ERR"), "lag_seconds_interpolated": 0.0,
                 "lag_seconds_message_timestamp": 0.0}
    (status,) = consumer_status([], [], [], [stopped, caught_up], Filters())
    assert (status["max_lag_seconds_interpolated"], status["lag_seconds_unknown_interpolated"]) == (None, 1)
    assert (status["max_lag_seconds_message_timestamp"], status["lag_seconds_unknown_message_timestamp"]) == (
        412.5, 0)
    assert status["lagging_partitions"] == 1
