"""``offsetlake run --once``: ingest, gold and lag in one Spark application, for schedulers.

Why one process: every ``offsetlake`` command starts a JVM and pays its warm-up (a SparkSession,
Delta's and Spark's first plans) before doing any work, and the three steps a scheduler runs every
few minutes each paid it again (the offsets_ingest DAG used to start three). Here the gold refresh
and the lag refresh run in the JVM the ingest warmed up. Each step is the library call its own
command makes (``ingest --once``, ``gold``, ``lag``), with the same output, so the commands stay
thin entry points to the same code.

Only ``--once`` exists for now: the long-running form (Kafka to gold as one streaming job, issue 14)
replaces this loop of batch steps; until then ``offsetlake ingest`` is the continuous command.
"""

from __future__ import annotations

import argparse
import sys

from cli.errors import CommandError, first_line, reported_as_command_errors
from cli.ingest import add_source_arguments, bad_batch_cap
from cli.settings_arg import settings_from


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run", help="ingest, refresh gold and refresh lag in one Spark application (--once, for schedulers)",
        description=(
            "Drain the offsets topic up to its current end into bronze and silver (as 'offsetlake ingest "
            "--once'), then refresh the gold tables (as 'offsetlake gold'), then gold.consumer_lag from the "
            "end-offset snapshots not yet in it (as 'offsetlake lag'), in one JVM instead of three. A "
            "SIGTERM or Ctrl-C stops after the current micro-batch or step; what was committed stays, and "
            "the next run goes on from there. Exit status 1 names the step that failed."
        ),
        epilog="Take end-offset snapshots with 'offsetlake snapshot-end-offsets' (the end_offsets_snapshot DAG).",
    )
    parser.add_argument("--once", action="store_true", required=True,
                        help="drain what is there now, refresh, and exit (required: the continuous form is "
                             "'offsetlake ingest' until the streaming job of issue 14)")
    add_source_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cli import gold, lag
    from cli.ingest import ingest_with_progress, stop_requested_by_signals
    from pipelines.ingest import IngestOptions
    from pipelines.spark_session import build_spark_session

    settings = settings_from(args)
    if bad_batch_cap(args):
        return 2
    options = IngestOptions(topic=args.topic, once=True, max_offsets_per_trigger=args.max_offsets_per_trigger)
    with stop_requested_by_signals("run: stopping after the current batch or step (again to abort) ...") as stop:
        with reported_as_command_errors():
            spark = build_spark_session(settings)
            try:
                totals = ingest_with_progress(spark, settings, options, stop)
                if totals is None:
                    return 1
                totals.print_summary()
                if stop.is_set():
                    print("run: stopped after the ingest; gold and lag are refreshed by the next run",
                          file=sys.stderr)
                    return 0
                gold.refresh_and_print(spark, settings)
                if stop.is_set():
                    print("run: stopped after the gold refresh; lag is refreshed by the next run", file=sys.stderr)
                    return 0
                try:
                    lag.refresh_and_print(spark, settings)
                except CommandError:
                    raise
                except Exception as exc:  # noqa: BLE001 - Spark/Delta failures become one line
                    raise CommandError(f"lag refresh failed: {first_line(exc)}") from exc
            finally:
                spark.stop()
    return 0
