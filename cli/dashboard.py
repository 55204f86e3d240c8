"""``offsetlake dashboard``: write a self-contained HTML dashboard of the warehouse's consumer groups."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cli import argument_types
from cli.errors import CommandError, first_line, reported_as_command_errors
from cli.settings_arg import settings_from
from dashboard.data import MAX_CHART_ROWS, MAX_CHARTED_GROUPS

if TYPE_CHECKING:
    from conf.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "dashboard",
        help="write a self-contained HTML dashboard (rebalances, ownership, lag, commits, deletions, status)",
        description=(
            "Write one HTML file of Vega-Lite charts (built with altair) of the gold tables: rebalances and "
            "static restarts coloured by likely cause with the members who joined and left, a partition-ownership "
            "timeline with gaps where nobody owned a partition, lag per partition in messages and in seconds (both "
            "estimators) coloured by Burrow status, commits per minute, offset and group deletions, and a status "
            "table, worst groups first. A group picker and a search box filter every chart; scroll over a chart "
            "to zoom its time axis. The file is self-contained: Vega, Vega-Lite and vega-embed (from "
            "vl-convert-python) and the data are inline, nothing is fetched from the network, so it opens from "
            "disk anywhere. Tables are read with delta-rs (no SparkSession, fast), and the status table is the "
            "view dashboards.consumer_status_now answered by delta-rs's embedded SQL engine; a table delta-rs "
            "cannot read is read with Spark instead. Run 'offsetlake gold' and 'offsetlake lag' first. "
            f"The charts hold at most the {MAX_CHARTED_GROUPS} worst groups whose rows fit in {MAX_CHART_ROWS:,} "
            "(a group too big for the page is passed over); every group is in the status table. With "
            "--serve, instead of writing a file, the same page is served at http://HOST:PORT/ and each group's "
            "name in the status table links to its own page (/group/<id>), built when opened from that group's "
            "rows alone: how to look at any of 10,000 groups."
        ),
        epilog="Examples: offsetlake dashboard --out report.html --group billing --since 2026-11-01; "
               "offsetlake dashboard --serve --port 8050",
    )
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--out", type=Path, help="the HTML file to write")
    target.add_argument("--serve", action="store_true",
                        help="serve the page over HTTP instead, with a page per group built on request (Ctrl-C stops)")
    parser.add_argument("--host", default="127.0.0.1", help="with --serve: the address to bind (default 127.0.0.1; "
                                                            "no authentication, so loopback unless a proxy guards it)")
    parser.add_argument("--port", type=argument_types.whole_number(0, 65535), default=8050,
                        help="with --serve: the port (default 8050; 0: any free one)")
    parser.add_argument("--group", action="append", default=[], metavar="G",
                        help="show only this group (repeat for several; default: every group)")
    parser.add_argument("--since", metavar="TIME", type=argument_types.iso_time,
                        help="drop what ended before TIME, in every chart; the time axes start there (ISO 8601, UTC "
                             "unless it has an offset, e.g. 2026-11-01 or 2026-11-01T12:00:00)")
    parser.add_argument("--engine", choices=("auto", "delta-rs", "spark"), default="auto",
                        help="how to read the tables (default auto: delta-rs, Spark for a table it refuses)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from dashboard.build import build_dashboard

    since = args.since  # epoch milliseconds (argument_types.iso_time)
    settings = settings_from(args)
    if args.serve:
        return serve(args, settings, since)
    with reported_as_command_errors():
        try:
            report = build_dashboard(settings, args.out, groups=args.group, since=since, engine=args.engine)
        except OSError as exc:
            raise CommandError(f"dashboard: cannot write {args.out}: {exc.strerror or exc}") from exc
        except Exception as exc:  # noqa: BLE001 - a table nobody can read is one line
            raise CommandError(f"dashboard: reading the warehouse failed: {first_line(exc)}") from exc
    data = report.data
    engines = ", ".join(sorted(set(report.read.engines.values()))) or "no tables"
    partitions = len({(s["group"], s["lane"]) for s in data.ownership})
    print(f"dashboard: wrote {report.out} ({data.groups_total} groups, {len(data.rebalances)} rebalances and "
          f"static restarts, {len(data.lag)} lag points, {partitions} partitions; the {len(data.charted_groups)} "
          f"worst groups charted) in "
          f"{report.seconds:.1f}s; read {len(report.read.engines)} tables and views with {engines} in "
          f"{report.read.seconds:.2f}s", file=sys.stderr)
    for table, reason in report.read.fallbacks.items():
        print(f"dashboard: {table} read with Spark: delta-rs refused it ({reason})", file=sys.stderr)
    for view, reason in report.read.unavailable_views.items():
        print(f"dashboard: {view} unavailable, its part of the page is empty: {reason}", file=sys.stderr)
    if data.missing_tables:
        print(f"dashboard: not in the warehouse yet: {', '.join(data.missing_tables)}", file=sys.stderr)
    return 0


def serve(args: argparse.Namespace, settings: Settings, since: int | None) -> int:
    from dashboard.serve import make_server

    if args.group:
        raise CommandError("dashboard: --group is for --out; served, every group has its page at /group/<id>")
    try:
        server = make_server(settings, args.host, args.port, since=since, engine=args.engine)
    except OSError as exc:
        raise CommandError(f"dashboard: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from exc
    host, port = server.server_address[:2]

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM (a service manager, kill) stops it as Ctrl-C does

    signal.signal(signal.SIGTERM, stop)
    print(f"dashboard: serving {settings.warehouse_uri} at http://{host}:{port}/ (a page per group at "
          f"/group/<id>; Ctrl-C stops)", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("dashboard: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
