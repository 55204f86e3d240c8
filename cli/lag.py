"""``offsetlake lag``: refresh gold.consumer_lag and print each group's status at its newest snapshot."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import TYPE_CHECKING, Any

from cli.errors import reported_as_command_errors
from cli.settings_arg import settings_from
from cli.writer_lease import writer_lease_held

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from conf.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lag", help="compute consumer lag and Burrow status (gold.consumer_lag) and print it per group",
        description=(
            "Join the end-offset snapshots (silver.partition_end_offsets, from 'snapshot-end-offsets') with "
            "the ingested commits (silver.offset_commits, from 'ingest') into gold.consumer_lag: at every "
            "snapshot, each group's lag per partition in messages and in seconds (two estimators: "
            "interpolation over the high-watermark history, and the committed message's timestamp) and "
            "its status by Burrow's rules (OK, WARN, STALL, STOP, REWIND; group: OK, WARN, ERR) over the "
            "last lag.intervals commits. Only the snapshots and commits silver gained since the last run are "
            "read: each partition's replay state (its last lag.intervals commits per group, its high-watermark "
            "history) is kept in the state store of a streaming query, checkpointed under "
            "<warehouse>/_checkpoints/<cluster>/consumer_lag. Then print, per "
            "group, its partitions at its newest snapshot. A snapshot is computed once the ingest has read "
            "__consumer_offsets up to where it ended when the snapshot was taken; until then it is pending "
            "(one line says until where). A deleted group (DeleteGroups) has no lag after "
            "its deletion and is not printed once a snapshot was taken after it."
        ),
        epilog="Run 'offsetlake ingest --once' first so that the snapshots meet the commits made before them.",
    )
    parser.add_argument("--group", help="print only this group")
    parser.add_argument("--full", action="store_true",
                        help="recompute every snapshot from all of silver (replaces this cluster's rows and the "
                             "query's state) instead of the new ones; snapshots the ingest has not passed "
                             "stay pending either way")
    parser.add_argument("--no-refresh", action="store_true", help="print what is in the table, compute nothing")
    parser.set_defaults(run=run)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}s"


def _number(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def refresh_and_print(spark: SparkSession, settings: Settings, *, full: bool = False) -> None:
    """Refresh gold.consumer_lag and print one line on stderr (shared with ``offsetlake run``)."""
    from pipelines.gold.consumer_lag import refresh_consumer_lag

    report = refresh_consumer_lag(spark, settings, full=full)
    print(f"lag: {report.snapshots} new snapshots with rows, {report.rows:,} rows appended to gold.consumer_lag "
          f"in {report.seconds:.1f}s", file=sys.stderr, flush=True)
    if report.pending.line():
        print(report.pending.line(), file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from pipelines.gold.consumer_lag import latest_status
    from pipelines.spark_session import build_spark_session

    settings = settings_from(args)
    writes = contextlib.nullcontext() if args.no_refresh else writer_lease_held(settings, "lag")
    with reported_as_command_errors(), writes:
        spark = build_spark_session(settings)
        if not args.no_refresh:
            refresh_and_print(spark, settings, full=args.full)
        rows = latest_status(spark, settings, args.group)
    if not rows:
        print("no lag rows yet: take snapshots with 'offsetlake snapshot-end-offsets' and ingest commits "
              "with 'offsetlake ingest --once'", file=sys.stderr)
        return 0
    print_status(rows)
    return 0


def print_status(rows: list[dict[str, Any]]) -> None:
    """Print ``latest_status`` rows: per group a header line, then one line per partition."""
    header = (f"  {'topic':<24} {'part':>4} {'committed':>10} {'end':>10} {'lag':>8} "
              f"{'lag(interp)':>11} {'lag(msg ts)':>11}  status")
    group = None
    for row in rows:
        if row["group"] != group:
            group = row["group"]
            print(f"\n{group}: {row['group_status']}  total lag {_number(row['group_lag'])}  "
                  f"at {row['snapshot_time']:%Y-%m-%d %H:%M:%S} UTC")
            print(header)
        flags = []
        if row["commit_ahead_of_snapshot"]:
            flags.append("commit ahead of snapshot")
        if row["committed_below_log_start"]:
            flags.append("committed below log start")
        print(f"  {row['topic']:<24} {row['partition']:>4} {_number(row['committed_offset']):>10} "
              f"{_number(row['latest_offset']):>10} {_number(row['lag']):>8} "
              f"{_seconds(row['lag_seconds_interpolated']):>11} {_seconds(row['lag_seconds_message_timestamp']):>11}"
              f"  {row['partition_status'] or 'no commit'}{' (' + ', '.join(flags) + ')' if flags else ''}")
