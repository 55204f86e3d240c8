"""The dashboard page: Vega-Lite charts built with altair, in one self-contained HTML file.

Why altair/Vega-Lite rather than a hand-written SVG renderer: zoom (an interval selection bound to the
time scale), one group picker and search box that filter every chart (two parameters bound to inputs),
tooltips and legends are declarations here instead of JavaScript to maintain. Every chart is one view
of one ``vconcat`` spec, so the two parameters are shared by all of them.

The page fetches nothing: Vega, Vega-Lite and vega-embed are inlined (``dashboard/vega.py``), the data
is inlined in the spec, and the only script of our own is the glue that embeds the spec and makes the
(HTML) status table follow the picker. Once the charts are drawn the body gets ``data-rendered="true"``
(or ``"error"``) and the Vega view is ``window.offsetlakeView``, which the browser tests query.

Every chart shows the picked group, or, with no pick, the worst groups (``rank``) whose names contain
the search text, at most ``TOP_*`` of them: with thousands of groups, drawing every timeline at once
would be slow and unreadable.
"""

from __future__ import annotations

import functools
import html
import json
import urllib.parse
from dataclasses import dataclass
from typing import Any

import altair as alt

from dashboard.data import OWNED, OWNER_STOPPING, UNOWNED, DashboardData, when
from dashboard.vega import VegaBundle, vega_bundle

WIDTH = 1000
TOP_LANES = 20
"""Groups drawn at once without a pick in the charts with one lane per group (rebalances, deletions)."""
TOP_TIMELINES = 3
"""... in the ownership timeline (one lane per partition)."""
TOP_LAG = 5
"""... in the lag and commit-rate charts."""
TABLE_ROWS = 50
"""Status rows shown without a pick (the rest are in the page, hidden, and found by the search)."""

CAUSES = ("member_joined", "member_left", "member_left_or_vanished", "members_joined_and_left",
          "static_member_returned", "static_member_rejoined", "static_member_restart", "subscription_changed",
          "metadata_changed", "cooperative_follow_up", "leader_rejoined", "topology_changed",
          "share_partitions_initialized", "unknown")
"""gold.rebalance_events.likely_cause values, each with a colour of its own (pipelines/gold/rebalance_events.py)."""
CAUSE_COLOURS = ("#2b8a3e", "#e67700", "#c92a2a", "#862e9c", "#1971c2", "#0c8599", "#f08c00", "#5c940d",
                 "#a61e4d", "#74c0fc", "#868e96", "#e8590c", "#66a80f",
                 "#495057")
STATUSES = ("OK", "WARN", "STOP", "STALL", "REWIND", "none")
STATUS_COLOURS = ("#2f9e44", "#f59f00", "#e03131", "#862e9c", "#1c7ed6", "#adb5bd")
"""Burrow partition statuses (pipelines/gold/consumer_lag.py), ``none`` when nothing is committed."""

PICK, SEARCH = "group_pick", "group_search"
UTC_LABEL = ("utcFormat(datum.value, '%H:%M:%S') === '00:00:00' && !utcmilliseconds(datum.value) ? "
             "utcFormat(datum.value, '%b %d') : utcFormat(datum.value, '%H:%M:%S') + "
             "(utcmilliseconds(datum.value) ? utcFormat(datum.value, '.%L') : '')")
"""Time labels in UTC on a 24-hour clock, with milliseconds once zoomed in that far, and the date at midnight."""


def _for_groups(chart: alt.Chart, top: int) -> alt.Chart:
    """Keep the picked group, or the ``top`` worst groups whose names contain the search text."""
    return (chart
            .transform_filter(f"{PICK} ? datum.group === {PICK} : "
                              f"(!{SEARCH} || indexof(lower(datum.group), lower({SEARCH})) >= 0)")
            .transform_window(group_order="dense_rank()", sort=[alt.SortField("rank")])
            .transform_filter(f"{PICK} || datum.group_order <= {top}"))


def _time(field: str, title: str) -> alt.X:
    # padding: a point at either end of the range is drawn whole, not cut in half by the edge
    return alt.X(f"{field}:T", title=title, scale=alt.Scale(type="utc", nice=False, padding=12),
                 axis=alt.Axis(labelExpr=UTC_LABEL, labelOverlap=True))


def _zoom(name: str) -> Any:
    # Wheel zooms the time axis, drag pans, double-click resets (Vega-Lite's defaults for bind="scales").
    return alt.selection_interval(bind="scales", encodings=["x"], name=name)


def _rows(name: str) -> alt.Data:
    # Named: the rows are added to the spec's "datasets" once, after altair built it, so altair neither
    # copies nor validates thousands of rows per chart (it deep-copies a chart's data at every step).
    return alt.Data(name=name)


def rebalance_chart() -> alt.LayerChart | alt.FacetChart:
    base = _for_groups(alt.Chart(_rows("rebalances")), TOP_LANES)
    y = alt.Y("group:N", sort=alt.EncodingSortField("rank", op="min"), title=None,
              axis=alt.Axis(labelLimit=260))
    colour = alt.Color("cause:N", title="likely cause",
                       scale=alt.Scale(domain=list(CAUSES), range=list(CAUSE_COLOURS)))
    bounds = base.transform_filter("isValid(datum.stopped_from)").mark_rule(strokeWidth=3, opacity=0.4).encode(
        x=_time("stopped_from", ""), x2="t:T", y=y, color=colour)
    points = base.mark_point(filled=True, size=130, opacity=0.9).encode(
        x=_time("t", "completed (Stable or Empty again), UTC; the bar before a point: since when members may "
                     "have stopped for it"),
        y=y, color=colour,
        shape=alt.Shape("kind:N", title="event", scale=alt.Scale(domain=["rebalance", "static restart"],
                                                                 range=["circle", "diamond"])),
        stroke=alt.condition("datum.storm", alt.value("#000000"), alt.value("#ffffff")),
        strokeWidth=alt.condition("datum.storm", alt.value(2), alt.value(0.5)),
        tooltip=[alt.Tooltip("group:N"), alt.Tooltip("at:N", title="completed"), alt.Tooltip("kind:N"),
                 alt.Tooltip("cause:N", title="likely cause"), alt.Tooltip("generations:N"),
                 alt.Tooltip("members:N"), alt.Tooltip("joined:N"), alt.Tooltip("left:N"),
                 alt.Tooltip("static_restarts:N", title="static restarts"),
                 alt.Tooltip("partitions_moved:Q", title="partitions moved"),
                 alt.Tooltip("protocol:N", title="rebalance protocol"),
                 alt.Tooltip("triggered_by:N", title="triggered by"),
                 alt.Tooltip("stopped:N", title="members stopped for"), alt.Tooltip("storm:N")],
    ).add_params(_zoom("zoom_rebalances"))
    labels = base.transform_filter(PICK).mark_text(align="left", dx=6, dy=-12, fontSize=10).encode(
        x=_time("t", ""), y=y, text="label:N", color=colour)
    return alt.layer(bounds, points, labels, name="rebalances").properties(
        width=WIDTH, height=alt.Step(40),
        title="Rebalances and static restarts, coloured by likely cause (black ring: storm)")


def ownership_chart() -> alt.LayerChart | alt.FacetChart:
    base = _for_groups(alt.Chart(_rows("ownership")), TOP_TIMELINES)
    y = alt.Y("lane:N", sort=alt.EncodingSortField("lane_order", op="min"), title=None,
              axis=alt.Axis(labelLimit=300))
    tooltip = [alt.Tooltip("group:N"), alt.Tooltip("topic:N"), alt.Tooltip("partition:Q"), alt.Tooltip("kind:N"),
               alt.Tooltip("client:N", title="owner (client id)"), alt.Tooltip("member:N", title="member id"),
               alt.Tooltip("generation:Q"), alt.Tooltip("from_at:N", title="from"),
               alt.Tooltip("to_at:N", title="to"), alt.Tooltip("note:N")]
    bars = base.transform_filter(f"datum.kind !== '{UNOWNED}'").mark_bar(height={"band": 0.75}).encode(
        x=_time("from", "UTC (the range of the rows shown; scroll to zoom, drag to pan, double-click to reset)"),
        x2="to:T", y=y,
        # tableau10: no light/dark pairs, where a light colour would read as a faded (stopping) owner
        color=alt.Color("client:N", title="owner (client id)", scale=alt.Scale(scheme="tableau10")),
        opacity=alt.Opacity("kind:N", title="ownership", scale=alt.Scale(domain=[OWNED, OWNER_STOPPING],
                                                                         range=[1.0, 0.35])),
        tooltip=tooltip,
    ).add_params(_zoom("zoom_ownership"))
    gaps = base.transform_filter(f"datum.kind === '{UNOWNED}'").mark_bar(
        height={"band": 0.3}, color="#e03131").encode(x=_time("from", ""), x2="to:T", y=y, tooltip=tooltip)
    return alt.layer(bars, gaps, name="ownership").properties(
        width=WIDTH, height=alt.Step(18),
        title="Partition ownership (faded: the owner may have stopped; thin red: nobody owned it)")


def lag_chart(field: str, title: str, name: str) -> alt.LayerChart | alt.FacetChart:
    base = _for_groups(alt.Chart(_rows("lag")), TOP_LAG).transform_filter(f"isValid(datum.{field})")
    y = alt.Y(f"{field}:Q", title=title)
    lines = base.mark_line(color="#adb5bd", strokeWidth=1).encode(x=_time("t", ""), y=y, detail="lane:N")
    points = base.mark_point(filled=True, size=50).encode(
        x=_time("t", "end-offset snapshot, UTC"), y=y,
        color=alt.Color("status:N", title="Burrow status",
                        scale=alt.Scale(domain=list(STATUSES), range=list(STATUS_COLOURS))),
        tooltip=[alt.Tooltip("group:N"), alt.Tooltip("topic:N"), alt.Tooltip("partition:Q"),
                 alt.Tooltip("at:N", title="snapshot"), alt.Tooltip("lag:Q", title="lag, messages"),
                 alt.Tooltip("seconds_interpolated:Q", title="lag, s (interpolated)", format=".1f"),
                 alt.Tooltip("seconds_message_timestamp:Q", title="lag, s (message timestamp)", format=".1f"),
                 alt.Tooltip("status:N", title="partition status"),
                 alt.Tooltip("group_status:N", title="group status"),
                 alt.Tooltip("group_lag:Q", title="group lag, messages")],
    ).add_params(_zoom(f"zoom_{name}"))
    return alt.layer(lines, points, name=name).properties(width=WIDTH, height=160)


def commit_rate_chart() -> alt.LayerChart | alt.FacetChart:
    # A line per group, its colour in the legend. A stretch of minutes without commits starts and ends with a
    # zero row of the data (dashboard.data.commit_rate_points): the straight line runs at zero through it.
    base = _for_groups(alt.Chart(_rows("commit_rate")), TOP_LAG)
    y = alt.Y("commit_requests:Q", title="commit requests per minute")
    colour = alt.Color("group:N", title="group", sort=alt.EncodingSortField("rank", op="min"),
                       legend=alt.Legend(labelLimit=260))
    lines = base.mark_line(opacity=0.8).encode(x=_time("t", ""), y=y, color=colour)
    points = base.mark_point(filled=True, size=30).encode(
        x=_time("t", "minute, UTC"), y=y, color=colour,
        tooltip=[alt.Tooltip("group:N"), alt.Tooltip("at:N", title="minute"),
                 alt.Tooltip("commit_requests:Q", title="commit requests (distinct timestamps)"),
                 alt.Tooltip("commit_records:Q", title="commit records (one per partition)"),
                 alt.Tooltip("partitions:Q")],
    ).add_params(_zoom("zoom_commit_rate"))
    return alt.layer(lines, points, name="commit_rate").properties(
        width=WIDTH, height=140, title="Offset commits per minute (gold.offset_commit_rate)")


def deletion_chart() -> alt.Chart | alt.FacetChart:
    base = _for_groups(alt.Chart(_rows("deletions"), name="deletions"), TOP_LANES)
    return base.mark_point(filled=True, size=110).encode(
        x=_time("t", "UTC"), y=alt.Y("group:N", sort=alt.EncodingSortField("rank", op="min"), title=None,
                                     axis=alt.Axis(labelLimit=260)),
        color=alt.Color("kind:N", title="deletion",
                        scale=alt.Scale(domain=["offsets deleted or expired", "group deleted or expired"],
                                        range=["#f08c00", "#c92a2a"])),
        shape=alt.Shape("kind:N", scale=alt.Scale(domain=["offsets deleted or expired", "group deleted or expired"],
                                                  range=["triangle-down", "cross"])),
        tooltip=[alt.Tooltip("group:N"), alt.Tooltip("at:N", title="when"), alt.Tooltip("kind:N"),
                 alt.Tooltip("partitions:Q", title="offsets"), alt.Tooltip("what:N")],
    ).add_params(_zoom("zoom_deletions")).properties(
        width=WIDTH, height=alt.Step(30),
        title="Offset and group deletions (tombstones: deletion and expiry look alike in the records)")


def _lanes_ordered(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    order = {lane: i for i, lane in enumerate(sorted({(r["rank"], r["topic"], r["partition"], r["lane"])
                                                      for r in rows}))}
    return [{**r, "lane_order": order[(r["rank"], r["topic"], r["partition"], r["lane"])]} for r in rows]


@functools.cache
def _charts() -> str:
    """Every chart's spec without its rows, as JSON: built and validated by altair once per process.

    altair validates and deep-copies specs as it combines them (seconds, whatever the data); the charts do
    not depend on the warehouse, only the rows and the picker's options do, and those are filled in by
    ``dashboard_spec``.
    """
    pick = alt.param(name=PICK, value="", bind=alt.binding_select(options=[""], name="group ", element="#picker"))
    search = alt.param(name=SEARCH, value="", bind=alt.binding(
        input="search", placeholder="part of a group name", name="search ", element="#picker"))
    chart = alt.vconcat(
        rebalance_chart(),
        ownership_chart(),
        alt.vconcat(
            lag_chart("lag", "lag, messages", "lag_messages"),
            lag_chart("seconds_interpolated", "lag, s: interpolated", "lag_seconds_interpolated"),
            lag_chart("seconds_message_timestamp", "lag, s: message timestamp", "lag_seconds_message_timestamp"),
            title=alt.TitleParams(
                "Lag per partition at each end-offset snapshot, coloured by Burrow status",
                subtitle="in messages, and in seconds by both estimators of gold.consumer_lag: interpolated "
                         "between snapshots, and from the timestamp of the message at the committed offset")),
        commit_rate_chart(),
        deletion_chart(),
        spacing=36,
    ).add_params(pick, search).resolve_scale(color="independent", shape="independent", opacity="independent")
    spec = chart.to_dict()
    spec.pop("$schema", None)  # a URL nobody fetches; vega-embed is told the mode instead
    spec["config"] = {**spec.get("config", {}), "legend": {"orient": "right", "labelLimit": 220},
                      "title": {"anchor": "start", "fontSize": 13, "limit": WIDTH + 200}}
    return json.dumps(spec)


def dashboard_spec(data: DashboardData) -> dict[str, Any]:
    """The Vega-Lite spec of the page (pure): the charts, their rows inline, the picker's options worst first."""
    spec = json.loads(_charts())
    groups = data.charted_groups
    (pick,) = (p for p in spec["params"] if p["name"] == PICK)
    pick["bind"]["options"] = [""] + [g["group"] for g in groups]
    pick["bind"]["labels"] = [f"(the worst groups: {len(groups)} charted)"] + [
        f"{g['rank']}. {g['group']} ({g['burrow_status'] or 'no lag data'}, {g['rebalances']} rebalances)"
        for g in groups]
    spec["datasets"] = {"rebalances": data.rebalances, "ownership": _lanes_ordered(data.ownership), "lag": data.lag,
                        "commit_rate": data.commit_rate, "deletions": data.deletions}
    return spec


_CSS = """
:root { --fg: #1f2933; --muted: #61707d; --line: #d9e0e6; --bg: #f7f9fb; }
* { box-sizing: border-box; }
body { font: 14px/1.4 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: var(--fg);
       background: var(--bg); margin: 0; padding: 24px 32px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 0 0 8px; }
.meta { color: var(--muted); margin-bottom: 16px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 16px; margin-bottom: 20px; }
p.note { color: var(--muted); margin: 0 0 8px; font-size: 12px; }
#picker { position: sticky; top: 0; z-index: 2; background: #fff; border: 1px solid var(--line); border-radius: 6px;
          padding: 10px 16px; margin-bottom: 16px; display: flex; gap: 24px; align-items: center; }
#picker .vega-bind-name { font-weight: 600; margin-right: 4px; }
#picker select { max-width: 560px; } #picker input[type=search] { width: 260px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; color: #fff; }
.badge.OK { background: #2f855a; } .badge.WARN { background: #b7791f; } .badge.ERR { background: #c53030; }
.badge.NOTFOUND, .badge.none { background: #718096; }
.empty { color: var(--muted); font-style: italic; }
#errors { color: #c53030; font-weight: 600; }
"""

_GLUE = r"""
(function () {
  'use strict';
  var spec = JSON.parse(document.getElementById('dashboard-spec').textContent);
  var rows = Array.prototype.slice.call(document.querySelectorAll('#status tr.status-row'));
  var limit = Number(document.getElementById('status').getAttribute('data-limit'));
  // The status table follows the picker and the search like the charts do.
  function follow(pick, search) {
    var shown = 0, needle = (search || '').toLowerCase();
    rows.forEach(function (tr) {
      var group = tr.getAttribute('data-group');
      var keep = pick ? group === pick : (!needle || group.toLowerCase().indexOf(needle) >= 0) && shown < limit;
      tr.hidden = !keep;
      if (keep) shown += 1;
    });
    document.getElementById('status-shown').textContent = String(shown);
  }
  vegaEmbed('#vis', spec, {mode: 'vega-lite', actions: false, renderer: 'svg'}).then(function (result) {
    var view = result.view;
    window.offsetlakeView = view;
    function update() { follow(view.signal('group_pick'), view.signal('group_search')); }
    view.addSignalListener('group_pick', update);
    view.addSignalListener('group_search', update);
    update();
    document.body.setAttribute('data-rendered', 'true');
  }).catch(function (err) {
    document.getElementById('errors').textContent = 'The dashboard failed to draw: ' + err;
    document.body.setAttribute('data-rendered', 'error');
    console.error(err);
  });
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>offsetlake dashboard</title>
<style>{css}</style>
</head>
<body data-rendered="false">
<h1>offsetlake: consumer groups</h1>
<div class="meta">{meta}</div>{home}
<div id="errors"></div>
<div id="picker"></div>
<p class="note">{picker_note}</p>
<section>
<h2>Consumer status now, worst first</h2>
<p class="note">Burrow status and lag at each group's newest end-offset snapshot; state and members from the
group records (– where the records say nothing about the group). Showing <span id="status-shown">{shown}</span>
of {total} groups.</p>
<table id="status" data-limit="{limit}"><thead><tr><th>#</th><th>group</th><th>status</th><th>state</th>
<th>members</th><th>rebalances</th><th>lag</th>
<th title="seconds since the high watermark reached the oldest unread offset, interpolated between
end-offset snapshots">max lag, s (interpolated)</th>
<th title="seconds since the timestamp of the message at the committed offset">max lag, s (message time)</th>
<th>partitions not OK</th><th>last commit</th><th>snapshot</th></tr></thead>
<tbody>{rows}</tbody></table>
</section>
<section><div id="vis"></div></section>
<p class="note">{notice}</p>
<script type="application/json" id="dashboard-spec">{spec}</script>
<script>/*! {notice} */
{bundle}</script>
<script>{glue}</script>
</body>
</html>
"""


@dataclass(frozen=True)
class PageLinks:
    """Where a served page links (``dashboard/serve.py``): each group's own page, and the summary page.

    ``group`` is a format with one ``{}`` for the URL-quoted group id. A written file has none: its groups have
    no page of their own until ``--group`` writes one."""

    group: str = "/group/{}"
    home: str = "/"

    def of(self, group: str) -> str:
        return self.group.format(urllib.parse.quote(group, safe=""))


def _lag_seconds(seconds: float | None, unknown: int) -> str:
    """Partitions an estimator cannot age are lagging all the same: never "0 s" for them."""
    if unknown > 0:
        return f"unknown ({unknown} lagging)" if not seconds else f"≥ {seconds:.1f} s"
    return "–" if seconds is None else f"{seconds:.1f} s"


def _state(g: dict[str, Any]) -> str:
    """The group's state, with its type for share and streams groups (their states are their own: NotReady...)."""
    state = g.get("state") or "–"
    return f"{state} ({g['group_type']})" if g.get("group_type") in ("share", "streams") else state


def _status_rows(data: DashboardData, links: PageLinks | None = None) -> str:
    if not data.groups:
        return '<tr><td colspan="12" class="empty">No groups in the warehouse.</td></tr>'
    out = []
    for g in data.groups:
        cells = [
            (str(g["rank"]), "num"), (g["group"], "group"), None, (_state(g), ""),
            ("–" if g.get("members") is None else str(g["members"]), "num"),
            (f"{g['rebalances']}" + (f" ({g['static_restarts']} static restarts)" if g["static_restarts"] else ""),
             "num"),
            ("–" if g.get("total_lag") is None else f"{g['total_lag']:,}", "num"),
            (_lag_seconds(g.get("max_lag_seconds_interpolated"), g.get("lag_seconds_unknown_interpolated") or 0),
             "num"),
            (_lag_seconds(g.get("max_lag_seconds_message_timestamp"),
                          g.get("lag_seconds_unknown_message_timestamp") or 0), "num"),
            ("–" if g.get("partitions_not_ok") is None else str(g["partitions_not_ok"]), "num"),
            (when(g.get("last_commit")), ""),
            (when(g.get("snapshot")), ""),
        ]
        status = g.get("burrow_status")
        tds = []
        for cell in cells:
            if cell is None:
                tds.append(f'<td><span class="badge {html.escape(status or "none")}">'
                           f'{html.escape(status or "no lag data")}</span></td>')
            else:
                text, cls = cell
                if cls == "group":
                    linked = html.escape(text) if links is None else \
                        f'<a href="{html.escape(links.of(text))}">{html.escape(text)}</a>'
                    tds.append(f"<td>{linked}</td>")
                elif cls:
                    tds.append(f'<td class="{cls}">{html.escape(text)}</td>')
                else:
                    tds.append(f"<td>{html.escape(text)}</td>")
        hidden = "" if g["rank"] <= TABLE_ROWS else " hidden"
        out.append(f'<tr class="status-row" data-group="{html.escape(g["group"])}"{hidden}>{"".join(tds)}</tr>')
    return "\n".join(out)


def _json_in_script(value: Any) -> str:
    """JSON that cannot end the <script> element it is inlined in ("<\\/" is "</" to a JSON parser)."""
    return json.dumps(value, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\u0021--")


def _code_in_script(code: str) -> str:
    """The bundle as it is: rewriting "</" in code could break a regular expression (``/</g``), so refuse."""
    lowered = code.lower()
    if "</script" in lowered or "<!--" in lowered:
        raise ValueError("the Vega bundle contains '</script' or '<!--' and cannot be inlined as it is")
    return code


def render_html(data: DashboardData, filters_text: str = "", bundle: VegaBundle | None = None,
                links: PageLinks | None = None) -> str:
    """The page for ``data``: pure but for the Vega bundle, built once per process (``dashboard/vega.py``).

    ``links``: the page is served (``offsetlake dashboard --serve``): each group's name links to its own page."""
    bundle = bundle or vega_bundle()
    meta = [f"generated {when(data.generated_at)}", f"warehouse {data.warehouse}"]
    if data.data_end is not None:
        meta.append(f"records from {when(data.data_start)} to {when(data.data_end)}")
    if data.clusters:
        meta.append("cluster" + ("s " if len(data.clusters) > 1 else " ") + ", ".join(data.clusters))
    if filters_text:
        meta.append(filters_text)
    if data.missing_tables:
        meta.append("not yet in the warehouse: " + ", ".join(data.missing_tables))
    charted = len(data.charted_groups)
    picker_note = (f"Pick a group, or type part of a name: every chart and the status table follow. Without a pick "
                   f"each chart shows the worst groups matching the search ({TOP_LANES} in the rebalance and "
                   f"deletion charts, {TOP_TIMELINES} in the ownership timeline, {TOP_LAG} in lag and commits). "
                   "Scroll over a chart to zoom its time axis, drag to pan, double-click to reset. Hover a mark "
                   "for details.")
    if charted < data.groups_total:
        picker_note += (f" The charts hold the {charted} worst of {data.groups_total} groups; "
                        + ("click a group's name in the status table for its own page."
                           if links is not None else "narrow with --group to chart the others."))
    home = "" if links is None or not filters_text else \
        f'<p class="note"><a href="{html.escape(links.home)}">← every group</a></p>'
    return _PAGE.format(
        css=_CSS, meta=html.escape(" · ".join(meta)), picker_note=html.escape(picker_note),
        shown=min(TABLE_ROWS, data.groups_total), total=data.groups_total, limit=TABLE_ROWS,
        rows=_status_rows(data, links), home=home, notice=html.escape(bundle.notice),
        spec=_json_in_script(dashboard_spec(data)),
        bundle=_code_in_script(bundle.script), glue=_GLUE)
