"""The dashboard page: one self-contained HTML file, its data embedded as JSON, drawn by an inline script.

No network at all (no CDN, fonts or images): the CSS and the small SVG renderer below are inline, so
the file opens from disk on a machine without internet. The script draws into SVG in the browser,
which is what lets the browser test prove the page works (each chart marks its data points with the
class ``mark`` and the body gets ``data-rendered="true"`` once everything is drawn, or ``"error"``).
"""

from __future__ import annotations

import datetime as dt
import html
import json

from dashboard.data import DashboardData

_CSS = """
:root { --fg: #1f2933; --muted: #61707d; --line: #d9e0e6; --bg: #f7f9fb; }
* { box-sizing: border-box; }
body { font: 14px/1.4 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: var(--fg);
       background: var(--bg); margin: 0; padding: 24px 32px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 0 0 8px; }
.meta { color: var(--muted); margin-bottom: 20px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 16px; margin-bottom: 20px; }
section p.note { color: var(--muted); margin: 0 0 8px; font-size: 12px; }
svg.chart { width: 100%; height: auto; display: block; }
svg text { font-size: 11px; fill: var(--fg); }
svg .axis line, svg .axis path { stroke: #9aa5b1; }
svg .axis .grid { stroke: #edf0f3; }
svg .lane { stroke: #e4e8ec; }
svg .muted { fill: var(--muted); }
svg .line { fill: none; stroke-width: 2; }
svg .mark.storm { stroke: #b91c1c; stroke-width: 2; }
svg .mark.open { opacity: 0.75; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; color: #fff; }
.badge.OK { background: #2f855a; } .badge.WARN { background: #b7791f; } .badge.ERR { background: #c53030; }
.badge.NOTFOUND, .badge.none { background: #718096; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin-top: 8px; font-size: 12px; }
.legend span::before { content: ""; display: inline-block; width: 10px; height: 10px; margin-right: 5px;
                       background: var(--swatch); border-radius: 2px; vertical-align: -1px; }
.empty { color: var(--muted); font-style: italic; }
#errors { color: #c53030; font-weight: 600; }
"""

_SCRIPT = r"""
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var DATA = JSON.parse(document.getElementById('dashboard-data').textContent);
  var PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7',
                 '#9c755f', '#86bcb6', '#d37295', '#8cd17d', '#499894', '#fabfd2', '#79706e', '#d4a6c8'];
  var WIDTH = 1200;

  function el(tag, attrs, parent, text) {
    var node = document.createElementNS(NS, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  function tip(node, text) { el('title', {}, node, text); }
  function num(v) { return v === null || v === undefined ? '–' : Number(v).toLocaleString('en-US'); }
  // Lag in seconds by one estimator: partitions it cannot age are lagging all the same, so never "0 s"
  // for them ("≥" the partitions it could age, or "unknown" when it could age none).
  function lagSeconds(seconds, unknown) {
    if (unknown > 0) return seconds === null || seconds === 0 ? 'unknown (' + unknown + ' lagging)'
                                                               : '≥ ' + seconds.toFixed(1) + ' s';
    return seconds === null || seconds === undefined ? '–' : seconds.toFixed(1) + ' s';
  }
  function fullTime(ms) {
    return ms === null ? '–' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
  }
  function shortTime(ms, span) {
    var iso = new Date(ms).toISOString();
    return span > 2 * 86400000 ? iso.slice(5, 16).replace('T', ' ') : iso.slice(11, 19);
  }
  function scale(d0, d1, r0, r1) {
    var span = (d1 - d0) || 1;
    return function (v) { return r0 + (v - d0) / span * (r1 - r0); };
  }
  function niceStep(raw) {
    var unit = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
    var factors = [1, 2, 5, 10];
    for (var i = 0; i < factors.length; i++) { if (raw <= factors[i] * unit) return factors[i] * unit; }
    return 10 * unit;
  }
  function padded(lo, hi) {
    var pad = Math.max((hi - lo) * 0.04, 1000);
    return [lo - pad, hi + pad];
  }
  function colorOf(keys) {
    var map = {};
    keys.forEach(function (k, i) { map[k] = PALETTE[i % PALETTE.length]; });
    return function (k) { return map[k] || '#999'; };
  }
  function timeAxis(svg, x, d0, d1, y, top) {
    var g = el('g', {'class': 'axis'}, svg);
    el('line', {x1: x(d0), x2: x(d1), y1: y, y2: y}, g);
    for (var i = 0; i <= 6; i++) {
      var t = d0 + (d1 - d0) * i / 6, px = x(t);
      el('line', {'class': 'grid', x1: px, x2: px, y1: top, y2: y}, g);
      el('line', {x1: px, x2: px, y1: y, y2: y + 4}, g);
      el('text', {x: px, y: y + 16, 'text-anchor': 'middle', 'class': 'muted'}, g, shortTime(t, d1 - d0));
    }
  }
  function empty(svg, text) {
    svg.setAttribute('viewBox', '0 0 ' + WIDTH + ' 40');
    el('text', {x: 8, y: 24, 'class': 'muted'}, svg, text);
    svg.setAttribute('data-marks', '0');
  }
  function legend(container, keys, color) {
    container.innerHTML = '';
    keys.forEach(function (k) {
      var span = document.createElement('span');
      span.textContent = k;
      span.style.setProperty('--swatch', color(k));
      container.appendChild(span);
    });
  }

  var groupNames = [];
  DATA.status.forEach(function (s) { groupNames.push(s.group); });
  DATA.rebalances.forEach(function (p) { groupNames.push(p.group); });
  DATA.lag.forEach(function (s) { groupNames.push(s.group); });
  groupNames = Array.from(new Set(groupNames)).sort();
  var groupColor = colorOf(groupNames);

  function renderRebalances(svg) {
    var points = DATA.rebalances;
    if (!points.length) { empty(svg, 'No rebalances recorded.'); return; }
    var groups = Array.from(new Set(points.map(function (p) { return p.group; }))).sort();
    var left = 230, right = 20, top = 10, lane = 30;
    var height = top + groups.length * lane + 30;
    svg.setAttribute('viewBox', '0 0 ' + WIDTH + ' ' + height);
    var ts = points.map(function (p) { return p.t; });
    var dom = padded(Math.min.apply(null, ts), Math.max.apply(null, ts));
    var x = scale(dom[0], dom[1], left, WIDTH - right);
    timeAxis(svg, x, dom[0], dom[1], top + groups.length * lane, top);
    groups.forEach(function (g, i) {
      var cy = top + i * lane + lane / 2;
      el('line', {'class': 'lane', x1: left, x2: WIDTH - right, y1: cy, y2: cy}, svg);
      el('text', {x: left - 8, y: cy + 4, 'text-anchor': 'end'}, svg, g);
      var mine = points.filter(function (p) { return p.group === g; });
      el('text', {x: 8, y: cy + 4, 'class': 'muted'}, svg, mine.length + ' rebalance' + (mine.length === 1 ? '' : 's'));
      mine.forEach(function (p) {
        var c = el('circle', {'class': 'mark rebalance' + (p.storm ? ' storm' : ''), cx: x(p.t), cy: cy, r: 6,
                             fill: groupColor(g), 'fill-opacity': 0.85}, svg);
        tip(c, g + ': generation ' + p.from_generation + ' → ' + p.to_generation + ' at ' + fullTime(p.t) +
               '\nlikely cause: ' + (p.cause || 'unknown') + (p.storm ? ' (storm)' : '') +
               '\nmembers ' + p.members_before + ' → ' + p.members_after + ', partitions moved ' +
               num(p.partitions_moved) +
               (p.stopped_ms_upper_bound == null ? '' : '\nmembers stopped at least ' + num(p.stopped_ms_lower_bound) +
                ' ms, at most ' + num(p.stopped_ms_upper_bound) + ' ms (bounds from the records)'));
      });
    });
    svg.setAttribute('data-marks', String(points.length));
  }

  function renderLag(svg, legendBox) {
    var series = DATA.lag;
    var all = [];
    series.forEach(function (s) { s.points.forEach(function (p) { all.push(p); }); });
    if (!all.length) { empty(svg, 'No lag snapshots: run snapshot-end-offsets and lag.'); return; }
    var left = 80, right = 20, top = 28, height = 330, bottom = height - 30;
    svg.setAttribute('viewBox', '0 0 ' + WIDTH + ' ' + height);
    var ts = all.map(function (p) { return p.t; });
    var dom = padded(Math.min.apply(null, ts), Math.max.apply(null, ts));
    var x = scale(dom[0], dom[1], left, WIDTH - right);
    var maxLag = Math.max(1, Math.max.apply(null, all.map(function (p) { return p.lag || 0; })));
    var step = niceStep(maxLag / 5), ticks = Math.ceil(maxLag / step);
    var y = scale(0, step * ticks, bottom, top);
    timeAxis(svg, x, dom[0], dom[1], bottom, top);
    var axis = el('g', {'class': 'axis'}, svg);
    el('line', {x1: left, x2: left, y1: top, y2: bottom}, axis);
    for (var i = 0; i <= ticks; i++) {
      var v = step * i, py = y(v);
      el('line', {'class': 'grid', x1: left, x2: WIDTH - right, y1: py, y2: py}, axis);
      el('text', {x: left - 6, y: py + 4, 'text-anchor': 'end', 'class': 'muted'}, axis, num(v));
    }
    el('text', {x: left, y: 12, 'class': 'muted'}, svg, 'lag (messages)');
    var marks = 0;
    series.forEach(function (s) {
      var color = groupColor(s.group);
      var pts = s.points.filter(function (p) { return p.lag !== null; });
      if (pts.length > 1) {
        el('polyline', {'class': 'line', stroke: color,
                        points: pts.map(function (p) { return x(p.t) + ',' + y(p.lag); }).join(' ')}, svg);
      }
      pts.forEach(function (p) {
        var c = el('circle', {'class': 'mark lag-point', cx: x(p.t), cy: y(p.lag), r: 4, fill: color}, svg);
        tip(c, s.group + ' at ' + fullTime(p.t) + ': lag ' + num(p.lag) + ' (' + p.status + ')');
        marks += 1;
      });
    });
    svg.setAttribute('data-marks', String(marks));
    legend(legendBox, series.map(function (s) { return s.group; }), groupColor);
  }

  function renderOwnership(svg, legendBox) {
    var lanes = DATA.ownership;
    if (!lanes.length) { empty(svg, 'No partition assignments recorded.'); return; }
    var left = 300, right = 20, top = 10, lane = 18;
    var height = top + lanes.length * lane + 30;
    svg.setAttribute('viewBox', '0 0 ' + WIDTH + ' ' + height);
    var froms = [], tos = [], clients = [];
    lanes.forEach(function (l) {
      l.bars.forEach(function (b) { froms.push(b.from); tos.push(b.to); clients.push(b.client); });
    });
    var dom = padded(Math.min.apply(null, froms), Math.max.apply(null, tos));
    var x = scale(dom[0], dom[1], left, WIDTH - right);
    clients = Array.from(new Set(clients)).sort();
    var clientColor = colorOf(clients);
    timeAxis(svg, x, dom[0], dom[1], top + lanes.length * lane, top);
    var marks = 0;
    lanes.forEach(function (l, i) {
      var y0 = top + i * lane;
      el('text', {x: left - 8, y: y0 + lane / 2 + 4, 'text-anchor': 'end'}, svg,
         l.group + '  ' + l.topic + '-' + l.partition);
      l.bars.forEach(function (b) {
        var x0 = x(b.from), w = Math.max(x(b.to) - x0 - 1, 2);
        var r = el('rect', {'class': 'mark ownership' + (b.open ? ' open' : ''), x: x0, y: y0 + 2, width: w,
                            height: lane - 4, rx: 2, fill: clientColor(b.client)}, svg);
        tip(r, l.topic + '-' + l.partition + ' owned by ' + b.client + ' (generation ' + b.generation + ')\n' +
               fullTime(b.from) + ' → ' + (b.open ? 'now' : fullTime(b.to)) + '\nmember ' + b.member);
        marks += 1;
      });
    });
    svg.setAttribute('data-marks', String(marks));
    legend(legendBox, clients, clientColor);
  }

  function renderStatus(table) {
    var body = table.querySelector('tbody');
    if (!DATA.status.length) {
      var tr = document.createElement('tr');
      tr.innerHTML = '<td colspan="9" class="empty">No groups in the warehouse.</td>';
      body.appendChild(tr);
      return;
    }
    DATA.status.forEach(function (s) {
      var tr = document.createElement('tr');
      tr.className = 'status-row';
      function cell(text, cls) {
        var td = document.createElement('td');
        td.textContent = text;
        if (cls) td.className = cls;
        tr.appendChild(td);
        return td;
      }
      cell(s.group);
      var badge = document.createElement('span');
      badge.className = 'badge ' + (s.burrow_status || 'none');
      badge.textContent = s.burrow_status || 'no lag data';
      cell('').appendChild(badge);
      cell(s.state || '–');
      cell(s.members === null ? '–' : String(s.members), 'num');
      cell(num(s.total_lag), 'num');
      cell(lagSeconds(s.max_lag_seconds_interpolated, s.lag_seconds_unknown_interpolated), 'num');
      cell(lagSeconds(s.max_lag_seconds_message_timestamp, s.lag_seconds_unknown_message_timestamp), 'num');
      cell(String(s.partitions_not_ok), 'num');
      cell(fullTime(s.last_commit));
      cell(fullTime(s.snapshot));
      body.appendChild(tr);
    });
    table.setAttribute('data-rows', String(DATA.status.length));
  }

  try {
    renderStatus(document.getElementById('status'));
    renderRebalances(document.getElementById('rebalances'));
    renderLag(document.getElementById('lag'), document.getElementById('lag-legend'));
    renderOwnership(document.getElementById('ownership'), document.getElementById('ownership-legend'));
    document.body.setAttribute('data-rendered', 'true');
  } catch (err) {
    document.getElementById('errors').textContent = 'The dashboard failed to draw: ' + err;
    document.body.setAttribute('data-rendered', 'error');
    throw err;
  }
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
<div class="meta">{meta}</div>
<div id="errors"></div>
<section>
<h2>Consumer status now</h2>
<p class="note">Burrow status and lag at each group's newest end-offset snapshot; state and members from the
group records (– where the records say nothing about the group).</p>
<table id="status"><thead><tr><th>group</th><th>status</th><th>state</th><th>members</th><th>lag</th>
<th title="seconds since the high watermark reached the oldest unread offset, interpolated between
end-offset snapshots">max lag, s (interpolated)</th>
<th title="seconds since the timestamp of the message at the committed offset">max lag, s (message time)</th>
<th>partitions not OK</th><th>last commit</th><th>snapshot</th></tr></thead>
<tbody></tbody></table>
</section>
<section>
<h2>Rebalances over time</h2>
<p class="note">One dot per completed rebalance (when the group was Stable again); red ring: rebalance storm.
Hover for the generations, the likely cause and the bounds on how long members stopped.</p>
<svg class="chart" id="rebalances" data-chart="rebalances" xmlns="http://www.w3.org/2000/svg"></svg>
</section>
<section>
<h2>Lag per group over time</h2>
<p class="note">Total lag in messages at each end-offset snapshot.</p>
<svg class="chart" id="lag" data-chart="lag" xmlns="http://www.w3.org/2000/svg"></svg>
<div class="legend" id="lag-legend"></div>
</section>
<section>
<h2>Partition ownership</h2>
<p class="note">{ownership_note}</p>
<svg class="chart" id="ownership" data-chart="ownership" xmlns="http://www.w3.org/2000/svg"></svg>
<div class="legend" id="ownership-legend"></div>
</section>
<script type="application/json" id="dashboard-data">{data}</script>
<script>{script}</script>
</body>
</html>
"""


def _when(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def render_html(data: DashboardData, filters_text: str = "") -> str:
    """The page for ``data`` (pure)."""
    meta = [f"generated {_when(data.generated_at)}", f"warehouse {data.warehouse}"]
    if data.clusters:
        meta.append("cluster" + ("s " if len(data.clusters) > 1 else " ") + ", ".join(data.clusters))
    if filters_text:
        meta.append(filters_text)
    if data.missing_tables:
        meta.append("not yet in the warehouse: " + ", ".join(data.missing_tables))
    note = ("Who owned each partition, generation by generation (one colour per client id); an interval ends "
            "at the next record without it, an upper bound. Hover for details.")
    if data.ownership_lanes_total > len(data.ownership):
        note += (f" Showing {len(data.ownership)} of {data.ownership_lanes_total} partitions: narrow with "
                 "--group.")
    # "</" inside the JSON would end the <script> element early.
    payload = json.dumps(data.as_json_dict(), separators=(",", ":")).replace("</", "<\\/")
    return _PAGE.format(css=_CSS, meta=html.escape(" · ".join(meta)), ownership_note=html.escape(note),
                        data=payload, script=_SCRIPT)
