"""``offsetlake run``: the main job in one Spark application -- continuously, or ``--once`` for schedulers.

Why one process: every ``offsetlake`` command starts a JVM and pays its warm-up (a SparkSession,
Delta's and Spark's first plans) before doing any work, and the three steps a scheduler runs every
few minutes each paid it again (the offsets_ingest DAG used to start three). Each step is the library
call its own command makes (``ingest``, ``gold``, ``lag``, ``snapshot-end-offsets``), so the commands
stay thin entry points to the same code.

``--once``: ingest up to the topic's end, then gold, then lag, and exit. Without it the job runs until
stopped (``pipelines/main_job.py``): the ingest streams on a processing-time trigger and refreshes gold
after each batch, while the main thread takes end-offset snapshots on a timer and refreshes lag after
each, printing one line per cycle with its freshness.
"""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING

from cli import argument_types
from cli.console import LOG_FORMATS, say
from cli.errors import CommandError, first_line, reported_as_command_errors
from cli.ingest import add_source_arguments, bad_batch_cap
from cli.serve_metrics import add_metrics_arguments, serve_run_metrics
from cli.settings_arg import settings_from
from cli.writer_lease import writer_lease_held

if TYPE_CHECKING:
    from conf.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run", help="the main job in one Spark application: ingest, gold, lag and snapshots, until stopped "
                    "(or --once)",
        description=(
            "Keep the warehouse current in one JVM. Continuously (the default): the ingest streams the offsets "
            "topic into bronze on a processing-time trigger, and after each micro-batch silver's query decodes "
            "what bronze gained and gold's query applies what silver gained, before the next one is planned "
            "(a batch takes all that arrived meanwhile); a snapshot of every topic's end offsets is taken every "
            "--snapshot-every seconds, "
            "then gold.consumer_lag is refreshed. One line per micro-batch ('ingest: batch ...') and one per "
            "refresh ('run: batch ...: records, rows per layer, freshness' -- the age of the newest source "
            "record now visible in gold). With --once: drain the "
            "topic up to its current end (as 'offsetlake ingest --once'), refresh gold (as 'offsetlake gold') "
            "and lag (as 'offsetlake lag'), and exit. A SIGTERM or Ctrl-C stops after the current micro-batch "
            "or step; what was committed stays, and the next run goes on from there. Exit status 1 names the "
            "step that failed."
        ),
        epilog="With --once, take end-offset snapshots with 'offsetlake snapshot-end-offsets' (the "
               "end_offsets_snapshot DAG).",
    )
    parser.add_argument("--once", action="store_true",
                        help="drain what is there now, refresh gold and lag, and exit (for schedulers)")
    parser.add_argument("--trigger-interval", default="2 seconds", type=argument_types.trigger_interval,
                        help="the ingest's processing-time trigger when running continuously (default '2 seconds')")
    parser.add_argument("--snapshot-every", type=argument_types.seconds(allow_zero=True, meaning="(0: no snapshots)"),
                        default=60.0, metavar="SECONDS",
                        help="seconds between end-offset snapshots when running continuously; 0 takes none "
                             "(default 60)")
    parser.add_argument("--log-format", choices=LOG_FORMATS, default="text",
                        help="the terminal's lines as text (default) or one JSON object a line for a log shipper "
                             "(time, level, logger, message; a cycle's records, rows per layer, freshness_seconds and "
                             "gold_current_as_of)")
    add_source_arguments(parser)
    add_metrics_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cli import gold, lag
    from cli.ingest import ingest_with_progress, stop_requested_by_signals
    from pipelines.ingest import IngestOptions
    from pipelines.offsets_topic_source import check_source_topic
    from pipelines.spark_session import build_spark_session

    settings = settings_from(args)
    if bad_batch_cap(args):
        return 2
    if args.snapshot_every < 0:
        say("", "offsetlake: --snapshot-every must be >= 0 seconds (0: no snapshots)", level=logging.ERROR)
        return 2
    if args.once and args.metrics_port is not None:
        say("", "offsetlake: --metrics-port is for the continuous run (a --once run ends before Prometheus scrapes "
                "it)", level=logging.ERROR)
        return 2
    if not args.once:
        return run_continuously(args, settings)
    options = IngestOptions(topic=args.topic, once=True, max_offsets_per_trigger=args.max_offsets_per_trigger)
    with stop_requested_by_signals("run: stopping after the current batch or step (again to abort) ...") as stop:
        # The lease first (a second writer is refused whatever the cluster answers), then the source topic: a wrong
        # address or topic costs no JVM and leaves only the released lease.
        with reported_as_command_errors(), writer_lease_held(settings, "run", stop):
            check_source_topic(settings, args.topic)
            spark = build_spark_session(settings)
            try:
                totals = ingest_with_progress(spark, settings, options, stop)
                totals.print_summary()
                if stop.is_set():
                    say("run", "run: stopped after the ingest; gold and lag are refreshed by the next run")
                    return 0
                gold.refresh_and_print(spark, settings)
                if stop.is_set():
                    say("run", "run: stopped after the gold refresh; lag is refreshed by the next run")
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


def run_continuously(args: argparse.Namespace, settings: Settings) -> int:
    from cli.ingest import IngestTotals, batch_printer, stop_requested_by_signals
    from pipelines.ingest import IngestError, IngestOptions
    from pipelines.main_job import CycleReport, MainJobOptions, run_main_job
    from pipelines.source_faults import wait_for_source_topic
    from pipelines.spark_session import build_spark_session

    options = MainJobOptions(
        ingest=IngestOptions(topic=args.topic, once=False, trigger_interval=args.trigger_interval,
                             max_offsets_per_trigger=args.max_offsets_per_trigger),
        snapshot_every=args.snapshot_every or None,
        maintain_every=settings.maintenance.every_minutes * 60 or None)
    totals = IngestTotals()
    metrics = serve_run_metrics(args, settings)  # --metrics-port: the job's health, fed by each cycle

    def cycle(report: CycleReport) -> None:
        say("run", report.line(), stdout=True, fields=report.fields())
        metrics.observe(report)

    def source_state(line: str) -> None:
        """A fault of the source begun (a warning) or over, or the ingest restarted (``pipelines.source_faults``)."""
        over = line in ("connected again", f"{args.topic} is there; starting")
        say("run", f"run: {line}", level=logging.INFO if over else logging.WARNING)

    with stop_requested_by_signals("run: stopping after the current batch or step (again to abort) ...") as stop:
        # The lease first (a second writer is refused whatever the cluster answers), then the source topic: a wrong
        # address or topic costs no JVM and leaves only the released lease.
        with reported_as_command_errors(), writer_lease_held(settings, "run", stop):
            # No __consumer_offsets yet (no group has committed), or a cluster that does not answer: waited for.
            if not wait_for_source_topic(settings, args.topic, should_stop=stop.is_set, on_state=source_state):
                return 0
            say("run", f"run: {args.topic} on {settings.kafka.bootstrap_servers} -> {settings.warehouse_uri} (cluster "
                f"{settings.cluster_name}, trigger {args.trigger_interval}, snapshots "
                f"{f'every {args.snapshot_every:g}s' if args.snapshot_every else 'off'}); Ctrl-C or SIGTERM stops")
            spark = build_spark_session(settings)
            try:
                run_main_job(spark, settings, options, should_stop=stop.is_set,
                             on_batch=batch_printer(settings, args.topic, totals), on_cycle=cycle,
                             on_restart=source_state,
                             on_maintained=lambda result: say(
                                 "run", f"run: maintained {result.table}: live files {result.live_files_before} -> "
                                 f"{result.live_files_after}, files on disk {result.files_on_disk_before} -> "
                                 f"{result.files_on_disk_after} in {result.seconds:.1f}s"))
            except IngestError as exc:
                raise CommandError(f"ingest failed: {exc}") from exc
            except Exception as exc:  # noqa: BLE001 - Spark/Delta failures become one line
                raise CommandError(f"run failed: {first_line(exc)}") from exc
            finally:
                spark.stop()
    totals.print_summary()
    return 0
