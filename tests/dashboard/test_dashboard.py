"""offsetlake dashboard: the page built from the sample warehouse, driven in headless Chromium through DevTools.

What the page must show is derived from the sample warehouse's story (tests/dashboard/sample_warehouse.py),
not from the page's own code: alpha rebalanced four times (a1 joined, a2 joined, a2 left, a1 left) and its
four partitions were owned by a1 (generation 1), a1 and a2 two each (2), a1 again (3); beta's b1 joined
once and owns all four; alpha lagged 0 at s1 and 25 per partition at s2 and s3, beta 0 at s3; sigma's
static member came back once; omega was deleted with its 4 offsets. One Chromium serves the module; the
page is built once per module and each test opens it in a tab of its own.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import struct
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dashboard.build import build_dashboard
from dashboard.data import (
    COLUMNS,
    OWNED,
    OWNER_STOPPING,
    ROW_FILTERS,
    STATUS_VIEW,
    UNOWNED,
    VIEWS,
    Filters,
    build_data,
)
from dashboard.read import read_tables
from dashboard.serve import make_server
from tests.dashboard.devtools import Browser, Tab, wait_for
from tests.dashboard.sample_warehouse import PARTITIONS

READY = "!!document.body && ['true', 'error'].includes(document.body.getAttribute('data-rendered'))"
CHARTS = ("rebalances", "ownership", "lag_messages", "lag_seconds_interpolated", "lag_seconds_message_timestamp",
          "commit_rate", "deletions")

# Every data mark's datum, per chart (the top-level view's name) and Vega mark type; axes and legends are
# left out (their role is not 'mark').
DRAWN = """(function () {
  var charts = {};
  function walk(mark, chart) {
    var name = mark.name || '';
    if (mark.marktype === 'group' && /_group$/.test(name) && name.indexOf('concat_') !== 0) {
      chart = name.replace(/_group$/, '');
    }
    if (chart && mark.role === 'mark' && mark.marktype !== 'group') {
      var byType = charts[chart] = charts[chart] || {};
      var list = byType[mark.marktype] = byType[mark.marktype] || [];
      mark.items.forEach(function (item) { if (item.datum) list.push(item.datum); });
    }
    mark.items.forEach(function (item) { (item.items || []).forEach(function (m) { walk(m, chart); }); });
  }
  walk(offsetlakeView.scenegraph().root, null);
  return charts;
})()"""

# Where a chart's plot area is on the screen: its group's offset in the scenegraph plus the SVG's place.
PLOT_BOX = """(function (chart) {
  var found = null;
  function walk(mark, x, y) {
    mark.items.forEach(function (item) {
      var ix = x + (item.x || 0), iy = y + (item.y || 0);
      if (mark.name === chart + '_group') found = {x: ix, y: iy, width: item.width, height: item.height};
      (item.items || []).forEach(function (m) { walk(m, ix, iy); });
    });
  }
  walk(offsetlakeView.scenegraph().root, 0, 0);
  var svg = document.querySelector('#vis svg').getBoundingClientRect(), origin = offsetlakeView.origin();
  return {x: svg.left + origin[0] + found.x, y: svg.top + origin[1] + found.y, width: found.width,
          height: found.height};
})"""


@pytest.fixture(scope="module")
def sample(sample_traffic_warehouse):  # type: ignore[no-untyped-def]
    return sample_traffic_warehouse


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    started = Browser.start()
    try:
        yield started
    finally:
        started.close()


@pytest.fixture(scope="module")
def page(sample, tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """The page of the whole sample warehouse, generated a day after its newest record."""
    out = tmp_path_factory.mktemp("page") / "report.html"
    build_dashboard(sample.settings, out, engine="delta-rs", now=_ms(dt.datetime.now(dt.UTC)) + 86_400_000)
    return out


@pytest.fixture
def tab(browser: Browser) -> Iterator[Tab]:
    opened = browser.open()
    try:
        yield opened
    finally:
        opened.close()


def _ms(moment: dt.datetime) -> int:
    aware = moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
    return int(aware.timestamp() * 1000)


def _load(tab: Tab, page: Path) -> None:
    tab.navigate(page.resolve().as_uri(), READY)
    assert tab.evaluate("document.body.getAttribute('data-rendered')") == "true", tab.evaluate(
        "document.getElementById('errors').textContent")


def _drawn(tab: Tab) -> dict[str, dict[str, list[dict[str, Any]]]]:
    return tab.evaluate(DRAWN)


def _groups_drawn(tab: Tab) -> dict[str, set[str]]:
    return {chart: {d["group"] for items in marks.values() for d in items} for chart, marks in _drawn(tab).items()}


def _only(tab: Tab, group: str) -> dict[str, set[str]] | None:
    """The groups each chart drew, once no chart draws any group but ``group`` and some chart draws it."""
    drawn = {chart: set() for chart in CHARTS} | _groups_drawn(tab)
    return drawn if set().union(*drawn.values()) == {group} else None


def _pick(tab: Tab, group: str) -> None:
    """Choose ``group`` in the picker as a user does: the select's value changes and it fires ``change``."""
    tab.evaluate("(function (g) { var s = document.querySelector('#picker select'); s.value = g; "
                 f"s.dispatchEvent(new Event('change', {{bubbles: true}})); }})({group!r})")


@pytest.mark.broker
@pytest.mark.spark
def test_delta_rs_reads_the_same_rows_as_spark_without_a_session(spark, sample) -> None:  # type: ignore[no-untyped-def]
    by_delta_rs, report = read_tables(sample.settings, COLUMNS, engine="delta-rs", filters=ROW_FILTERS)
    by_spark, spark_report = read_tables(sample.settings, COLUMNS, engine="spark", spark_factory=lambda: spark,
                                         filters=ROW_FILTERS)
    assert set(report.engines) == set(COLUMNS) and set(report.engines.values()) == {"delta-rs"}
    assert set(spark_report.engines.values()) == {"spark"} and report.fallbacks == {}
    for name in COLUMNS:
        assert by_delta_rs[name], name
        assert sorted(by_delta_rs[name], key=repr) == sorted(by_spark[name], key=repr), name
    # only the tombstones of silver.offset_commits: omega's 4 offsets, deleted with the group
    tombstones = by_delta_rs["silver.offset_commits"]
    assert {(r["group"], r["is_tombstone"]) for r in tombstones} == {(sample.omega, True)}
    assert sorted(r["partition"] for r in tombstones) == list(range(PARTITIONS))


# What the status table shows, per column of dashboards.consumer_status_now (the page renames three).
PAGE_COLUMN = {"cluster_name": "cluster", "last_commit_at": "last_commit", "lag_snapshot_time": "snapshot"}
# Columns of the view the page does not show (seconds_since_last_commit depends on when it is asked).
NOT_ON_THE_PAGE = ("state_since", "seconds_since_last_commit", "stopped_partitions")


def _as_page_value(value: Any) -> Any:
    """A view value as the page holds it: naive UTC datetimes (both engines' timestamps) as epoch ms."""
    if isinstance(value, dt.datetime):
        return (value - dt.datetime(1970, 1, 1)) // dt.timedelta(milliseconds=1)
    return value


@pytest.mark.broker
@pytest.mark.spark
def test_the_status_table_is_the_consumer_status_view_as_both_engines_answer_it(spark, sample) -> None:  # type: ignore[no-untyped-def]
    from pipelines.embedded_sql import query_view
    from pipelines.sql_views import register_catalog, run_query

    tables, report = read_tables(sample.settings, COLUMNS, engine="auto", filters=ROW_FILTERS, views=VIEWS)
    assert report.engines[STATUS_VIEW] == "delta-rs" and report.unavailable_views == {}  # no JVM for the view
    page = {s["group"]: s for s in build_data(tables, Filters(), now=0, warehouse="w").groups}
    embedded = query_view(sample.settings, "consumer_status_now")
    assert register_catalog(spark, sample.settings).skipped_views == {}
    by_spark = run_query(spark, f"SELECT * FROM {STATUS_VIEW}", None)
    assert embedded.columns == by_spark.columns
    answers = {engine: {row[result.columns.index("group")]: dict(zip(result.columns, row, strict=True))
                        for row in result.rows}
               for engine, result in (("embedded", embedded), ("spark", by_spark))}
    groups = set(answers["spark"])
    assert {sample.alpha, sample.beta, sample.gamma, sample.sigma, sample.omega} <= groups
    assert set(answers["embedded"]) == groups == set(page)  # every group of the warehouse, no other
    shown = [c for c in embedded.columns if c not in NOT_ON_THE_PAGE]
    for group in sorted(groups):
        for column in shown:
            values = {"page": page[group][PAGE_COLUMN.get(column, column)],
                      **{engine: _as_page_value(answers[engine][group][column]) for engine in answers}}
            assert values["page"] == values["embedded"] == values["spark"], (group, column, values)
        ours, theirs = answers["embedded"][group], answers["spark"][group]
        for column in ("state_since", "stopped_partitions"):
            assert ours[column] == theirs[column], (group, column)
        if theirs["seconds_since_last_commit"] is not None:  # asked a few seconds apart
            assert abs(ours["seconds_since_last_commit"] - theirs["seconds_since_last_commit"]) <= 60, group
    # --engine spark reads the view with Spark, and the page gets the same rows
    with_spark, spark_report = read_tables(sample.settings, {}, engine="spark", spark_factory=lambda: spark,
                                           views=VIEWS)
    assert spark_report.engines == dict.fromkeys(VIEWS, "spark")

    def clock_free(rows: list[dict]) -> list[str]:
        return sorted(repr(sorted((k, v) for k, v in r.items() if k != "seconds_since_last_commit")) for r in rows)

    assert clock_free(with_spark[STATUS_VIEW]) == clock_free(tables[STATUS_VIEW])
    # what the sample warehouse's story says (module docstring), so the three cannot agree on nothing
    summary = {g: (page[g]["state"], page[g]["generation"], page[g]["members"], page[g]["committed_partitions"],
                   page[g]["total_lag"]) for g in (sample.alpha, sample.beta, sample.omega)}
    assert summary == {sample.alpha: ("Empty", 4, 0, 4, 100), sample.beta: ("Stable", 1, 1, 4, 0),
                       sample.omega: ("Dead", None, 0, None, None)}


@pytest.mark.broker
@pytest.mark.spark
def test_the_page_loads_with_no_console_error_and_fetches_nothing_but_itself(page, tab) -> None:  # type: ignore[no-untyped-def]
    _load(tab, page)
    assert tab.errors() == []
    assert tab.requests() == [page.resolve().as_uri()]
    assert tab.evaluate("typeof vegaEmbed") == "function"


@pytest.mark.broker
@pytest.mark.spark
def test_the_charts_draw_the_sample_warehouses_rebalances_owners_lag_commits_and_deletions(  # type: ignore[no-untyped-def]
        sample, page, tab, tmp_path) -> None:
    _load(tab, page)
    drawn = _drawn(tab)
    points = [d for d in drawn["rebalances"]["symbol"] if d["group"] == sample.alpha]
    assert [(d["kind"], d["from_generation"], d["to_generation"]) for d in sorted(points, key=lambda d: d["t"])] == [
        ("rebalance", g, g + 1) for g in range(4)]
    causes = [d["cause"] for d in sorted(points, key=lambda d: d["t"])]
    assert causes[:2] == ["member_joined", "member_joined"]
    assert set(causes[2:]) <= {"member_left", "member_left_or_vanished"}
    beta = [d for d in drawn["rebalances"]["symbol"] if d["group"] == sample.beta]
    assert [(d["kind"], d["cause"]) for d in beta] == [("rebalance", "member_joined")]
    restarts = [d for d in drawn["rebalances"]["symbol"] if d["kind"] == "static restart"]
    assert {d["group"] for d in restarts} == {sample.sigma} and sample.static_instance in restarts[0]["label"]

    bars = [d for d in drawn["ownership"]["rect"] if d["kind"] in (OWNED, OWNER_STOPPING)]
    owners = {(d["group"], d["partition"], d["generation"], d["client"]) for d in bars}
    assert {(p, c) for g, p, gen, c in owners if g == sample.alpha and gen in (1, 3)} == {
        (p, sample.a1_client) for p in range(PARTITIONS)}
    second = sorted(c for g, p, gen, c in owners if g == sample.alpha and gen == 2)
    assert second == sorted([sample.a1_client] * 2 + [sample.a2_client] * 2)
    assert {(p, c) for g, p, gen, c in owners if g == sample.beta} == {(p, sample.b1_client) for p in range(PARTITIONS)}
    # Nobody owned alpha's partitions while its rebalances were in progress: red gaps between generations,
    # each inside the time its rebalances took (after generation 1 began, before generation 3 was stored).
    gaps = [d for d in drawn["ownership"]["rect"] if d["kind"] == UNOWNED and d["group"] == sample.alpha]
    first_owned = min(d["from"] for d in bars if d["group"] == sample.alpha)
    third = min(d["from"] for d in bars if d["group"] == sample.alpha and d["generation"] == 3)
    assert gaps and all(first_owned < d["from"] < d["to"] <= third for d in gaps)

    lag = drawn["lag_messages"]["symbol"]
    alpha_lag = sorted((d["t"], d["partition"], d["lag"]) for d in lag if d["group"] == sample.alpha)
    snapshots = sorted({t for t, _, _ in alpha_lag})
    assert len(snapshots) == 3 and len(alpha_lag) == 3 * PARTITIONS
    assert [lag_ for t, _, lag_ in alpha_lag if t == snapshots[0]] == [0] * PARTITIONS
    assert [lag_ for t, _, lag_ in alpha_lag if t != snapshots[0]] == [25] * (2 * PARTITIONS)
    assert all(d["status"] in ("OK", "WARN", "STOP", "STALL", "REWIND", "none") for d in lag)
    assert {d["lag"] for d in lag if d["group"] == sample.beta} == {0}
    for chart in ("lag_seconds_interpolated", "lag_seconds_message_timestamp"):
        assert drawn[chart]["symbol"], chart

    assert {sample.alpha, sample.beta, sample.omega} <= {d["group"] for d in drawn["commit_rate"]["symbol"]}
    deletions = {(d["group"], d["kind"], d["partitions"]) for d in drawn["deletions"]["symbol"]}
    assert deletions == {(sample.omega, "offsets deleted or expired", PARTITIONS),
                         (sample.omega, "group deleted or expired", None)}

    png = tab.screenshot(tmp_path / "dashboard.png")
    header = png.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", header[16:24])[0] >= 1000
    print(f"dashboard screenshot: {png}")


@pytest.mark.broker
@pytest.mark.spark
def test_picking_a_group_leaves_only_that_group_in_every_chart_and_the_status_table(  # type: ignore[no-untyped-def]
        sample, page, tab, tmp_path) -> None:
    _load(tab, page)
    assert len(set().union(*_groups_drawn(tab).values())) > 1
    _pick(tab, sample.alpha)
    drawn = wait_for(lambda: _only(tab, sample.alpha), 20, "every chart to show alpha only")
    # alpha has rebalances, owners, lag and commits, and no deletion: those charts are empty
    assert all(drawn[chart] == {sample.alpha} for chart in CHARTS if chart != "deletions")
    assert drawn["deletions"] == set()
    rows = tab.evaluate("Array.from(document.querySelectorAll('#status tr.status-row'))"
                        ".filter(function (r) { return !r.hidden; }).map(function (r) { return r.dataset.group; })")
    assert rows == [sample.alpha]
    # with a group picked, the rebalance chart writes who joined and left beside each point
    labels = sorted(d["label"] for d in _drawn(tab)["rebalances"]["text"])
    assert sum(label.startswith("+") for label in labels) == 2 and sum(label.startswith("-") for label in labels) == 2
    assert {label[1:] for label in labels} == {sample.a1_client, sample.a2_client}
    print(f"dashboard screenshot, alpha picked: {tab.screenshot(tmp_path / 'alpha.png')}")

    # back to every group, then search by typing part of a name into the search box
    _pick(tab, "")
    box = tab.evaluate("(function () { var r = document.querySelector('#picker input[type=search]')"
                       ".getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()")
    tab.click(box["x"], box["y"])
    tab.type_text(sample.omega)
    drawn = wait_for(lambda: _only(tab, sample.omega), 20, "every chart to show omega only after typing its name")
    assert drawn["deletions"] == drawn["rebalances"] == drawn["ownership"] == {sample.omega}


@pytest.mark.broker
@pytest.mark.spark
def test_scrolling_over_the_ownership_timeline_zooms_into_its_time_axis(sample, page, tab) -> None:  # type: ignore[no-untyped-def]
    _load(tab, page)
    _pick(tab, sample.alpha)
    wait_for(lambda: _groups_drawn(tab).get("ownership") == {sample.alpha}, 20, "alpha's timeline")
    domain = "offsetlakeView.scale('ownership_x').domain().map(Number)"
    before = tab.evaluate(domain)
    box = tab.evaluate(f"({PLOT_BOX})('ownership')")
    tab.wheel(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, delta_y=-600)
    after = wait_for(lambda: (lambda d: d if d[1] - d[0] < before[1] - before[0] else None)(tab.evaluate(domain)),
                     20, "the ownership axis to narrow after a wheel turn")
    assert before[0] <= after[0] < after[1] <= before[1]
    # a drag pans the zoomed axis: the window keeps its width and moves
    tab.drag((box["x"] + box["width"] / 2, box["y"] + 5), (box["x"] + box["width"] / 2 + 200, box["y"] + 5))
    panned = wait_for(lambda: (lambda d: d if d[0] < after[0] else None)(tab.evaluate(domain)), 20,
                      "the zoomed axis to pan after a drag")
    assert abs((panned[1] - panned[0]) - (after[1] - after[0])) <= 0.01 * (after[1] - after[0])


@pytest.mark.broker
@pytest.mark.spark
def test_the_timeline_spans_the_groups_records_not_the_time_the_page_was_made(sample, page, tab) -> None:  # type: ignore[no-untyped-def]
    _load(tab, page)
    _pick(tab, sample.alpha)
    wait_for(lambda: _groups_drawn(tab).get("ownership") == {sample.alpha}, 20, "alpha's timeline")
    low, high = tab.evaluate("offsetlakeView.scale('ownership_x').domain().map(Number)")
    # alpha lived for seconds; the page was generated a day later: the axis spans alpha's records (its
    # first generation's start to the Empty record), padded by a few pixels, not the day after.
    assert high - low < 120_000
    assert low <= _ms(sample.before_a2_joined) and high >= _ms(sample.after_a2_left)


@pytest.mark.broker
@pytest.mark.spark
def test_since_narrows_every_chart_to_what_happened_after_it(sample, tab, tmp_path) -> None:  # type: ignore[no-untyped-def]
    since = sample.between_generations
    out = tmp_path / "since.html"
    build_dashboard(sample.settings, out, groups=(sample.alpha,), since=_ms(since), engine="delta-rs")
    _load(tab, out)
    drawn = _drawn(tab)
    points = drawn["rebalances"]["symbol"]
    assert [d["to_generation"] for d in sorted(points, key=lambda d: d["t"])] == [2, 3, 4]
    assert min(d["from"] for d in drawn["ownership"]["rect"]) >= _ms(since)
    low, _ = tab.evaluate("offsetlakeView.scale('ownership_x').domain().map(Number)")
    assert low >= _ms(since) - 5_000


def test_a_warehouse_without_tables_gives_a_page_that_says_there_is_nothing_yet(base_settings, tmp_path,  # type: ignore[no-untyped-def]
                                                                                 browser) -> None:
    settings = base_settings.model_copy(update={"warehouse": str(tmp_path / "empty")})
    report = build_dashboard(settings, tmp_path / "empty.html", engine="delta-rs")
    assert report.read.engines == {} and report.data.missing_tables == sorted((*COLUMNS, *VIEWS))
    assert set(report.read.unavailable_views) == set(VIEWS)  # its tables are not there: left out, said why
    opened = browser.open()
    try:
        _load(opened, report.out)
        assert opened.errors() == []
        assert all(not items for marks in _drawn(opened).values() for items in marks.values())
        assert "No groups in the warehouse." in opened.evaluate("document.getElementById('status').textContent")
    finally:
        opened.close()


@pytest.mark.broker
@pytest.mark.spark
def test_the_cli_writes_the_page_and_says_what_it_holds(sample, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from cli.main import main

    monkeypatch.setenv("OFFSETLAKE_WAREHOUSE", str(sample.settings.warehouse_path))
    out = tmp_path / "report.html"
    assert main(["dashboard", "--out", str(out), "--group", sample.alpha, "--group", sample.beta]) == 0
    # alpha: 4 rebalances, 4 partitions at 3 snapshots; beta: 1 rebalance, 4 partitions at 1 snapshot
    assert (f"wrote {out} (2 groups, 5 rebalances and static restarts, 16 lag points, 8 partitions; "
            "the 2 worst groups charted)") in capsys.readouterr().err
    assert out.is_file()


@pytest.mark.broker
@pytest.mark.spark
def test_served_every_group_links_to_its_own_page_built_on_request_from_its_rows_alone(sample, tab) -> None:  # type: ignore[no-untyped-def]
    lines: list[str] = []
    server = make_server(sample.settings, "127.0.0.1", 0, engine="delta-rs", log=lines.append)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        summary = urllib.request.urlopen(base + "/", timeout=60).read().decode()
        linked = set(re.findall(r'<a href="/group/([^"]+)">', summary))
        assert {sample.alpha, sample.beta, sample.omega} <= {urllib.parse.unquote(g) for g in linked}

        alpha = urllib.request.urlopen(f"{base}/group/{urllib.parse.quote(sample.alpha, safe='')}", timeout=60)
        page = alpha.read().decode()
        spec = json.loads(re.search(r'<script type="application/json" id="dashboard-spec">(.*?)</script>', page,
                                    re.S).group(1))
        # alpha's page: its status row, and its rows alone in every chart's data (4 partitions, 4 rebalances)
        assert re.findall(r'data-group="([^"]*)"', page) == [sample.alpha]
        assert {r["group"] for rows in spec["datasets"].values() for r in rows} == {sample.alpha}
        assert {(r["topic"], r["partition"]) for r in spec["datasets"]["ownership"]} == {
            (sample.topic, p) for p in range(PARTITIONS)}
        assert len([r for r in spec["datasets"]["rebalances"] if r["kind"] == "rebalance"]) == 4
        assert '<a href="/">' in page

        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(base + "/group/no-such-group", timeout=60)
        assert missing.value.code == 404 and "no group 'no-such-group'" in missing.value.read().decode()

        # and it draws in a browser, as the written page does
        tab.navigate(f"{base}/group/{urllib.parse.quote(sample.alpha, safe='')}", READY)
        assert tab.evaluate("document.body.getAttribute('data-rendered')") == "true" and tab.errors() == []
    finally:
        server.shutdown()
        server.server_close()
    # one line per page with its status and time (Chromium may also ask for /favicon.ico: a 404)
    assert [line.split(" (")[0] for line in lines[:3]] == [
        "dashboard: GET / 200", f"dashboard: GET /group/{sample.alpha} 200", "dashboard: GET /group/no-such-group 404"]


def test_serving_on_a_port_out_of_range_or_with_group_is_one_line(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from cli.main import main

    monkeypatch.setenv("OFFSETLAKE_WAREHOUSE", str(tmp_path / "warehouse"))
    assert main(["dashboard", "--serve", "--port", "70000"]) == 2
    assert capsys.readouterr().err.strip() == (
        "offsetlake dashboard: error: argument --port: '70000' is not a whole number from 0 to 65535; "
        "see 'offsetlake dashboard --help'")
    assert main(["dashboard", "--serve", "--group", "billing"]) == 1
    assert capsys.readouterr().err.strip() == (
        "offsetlake: dashboard: --group is for --out; served, every group has its page at /group/<id>")
