"""``offsetlake ingest``: __consumer_offsets -> bronze, then silver (decoded from bronze), exactly once."""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING

from cli import argument_types
from cli.console import say
from cli.errors import CommandError, reported_as_command_errors
from cli.settings_arg import settings_from
from cli.writer_lease import writer_lease_held

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from conf.settings import Settings
    from pipelines.ingest import BatchReport, IngestOptions


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ingest", help="stream __consumer_offsets into the bronze and silver Delta tables",
        description=(
            "Read the offsets topic with Spark Structured Streaming and write bronze "
            "(offsets_topic_records, a plain copy; the audit in silver.ingest_batches), then, after each "
            "micro-batch, run silver's own streaming query over bronze, which decodes the new records into "
            "silver (offset_commits, group_metadata, group_members, consumer_group_records, quarantine): "
            "silver can always be derived again from bronze. Exactly once, both queries (a checkpoint each "
            "per cluster and topic under <warehouse>/_checkpoints/). Runs until Ctrl-C/SIGTERM, or with "
            "--once drains what is there now and exits (for schedulers)."
        ),
    )
    parser.add_argument("--once", action="store_true", help="drain the topic up to its current end, then exit")
    parser.add_argument("--trigger-interval", default="30 seconds", type=argument_types.trigger_interval,
                        help="processing-time trigger when running continuously (default '30 seconds')")
    add_source_arguments(parser)
    parser.set_defaults(run=run)


def add_source_arguments(parser: argparse.ArgumentParser) -> None:
    """--topic and --max-offsets-per-trigger, shared with ``offsetlake run``."""
    parser.add_argument("--topic", default="__consumer_offsets",
                        help="source topic (default __consumer_offsets; any topic holding records in its format)")
    parser.add_argument("--max-offsets-per-trigger", type=argument_types.whole_number(1), metavar="N",
                        help="cap on records per micro-batch")


def bad_batch_cap(args: argparse.Namespace) -> bool:
    """True (after one line on stderr) when --max-offsets-per-trigger is below 1."""
    if args.max_offsets_per_trigger is not None and args.max_offsets_per_trigger < 1:
        print("offsetlake: --max-offsets-per-trigger must be >= 1", file=sys.stderr)
        return True
    return False


def run(args: argparse.Namespace) -> int:
    from pipelines.ingest import IngestOptions
    from pipelines.offsets_topic_source import check_source_topic
    from pipelines.spark_session import build_spark_session

    settings = settings_from(args)
    if bad_batch_cap(args):
        return 2
    options = IngestOptions(topic=args.topic, once=args.once, trigger_interval=args.trigger_interval,
                            max_offsets_per_trigger=args.max_offsets_per_trigger)
    with stop_requested_by_signals("ingest: stopping after the current batch (again to abort) ...") as stop:
        # The lease first (a second writer is refused whatever the cluster answers), then the source topic: a wrong
        # address or topic costs no JVM and leaves only the released lease.
        with reported_as_command_errors(), writer_lease_held(settings, "ingest", stop):
            check_source_topic(settings, options.topic)
            spark = build_spark_session(settings)
            totals = ingest_with_progress(spark, settings, options, stop)
    totals.print_summary()
    return 0


@contextlib.contextmanager
def stop_requested_by_signals(message: str) -> Iterator[threading.Event]:
    """An event set by the first SIGINT/SIGTERM (printing ``message``); a second one aborts at once.

    Schedulers stop a task with SIGTERM and expect it to finish what it is doing: a micro-batch is
    committed or not at all (exactly once), so stopping between batches loses nothing.
    """
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        say(message.split(":", 1)[0], message)  # run:, ingest:
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@dataclass
class IngestTotals:
    records: int = 0
    batches: int = 0
    lost: int = 0
    quarantined: int = 0

    def print_summary(self) -> None:
        say("ingest", f"ingested {self.records:,} records in {self.batches} batches; "
                      f"{self.quarantined:,} quarantined, {self.lost:,} lost to retention", stdout=True,
            fields={"records": self.records, "batches": self.batches, "quarantined": self.quarantined,
                    "lost": self.lost})


def batch_printer(settings: Settings, topic: str, totals: IngestTotals) -> Callable[[BatchReport], None]:
    """The ingest's per-batch line on stderr (shared with ``offsetlake run``), adding each batch to ``totals``."""
    from pipelines.offsets_topic_source import topic_end_offsets

    def progress(report: BatchReport) -> None:
        totals.records += report.records
        totals.batches += 1
        totals.lost += report.lost_records
        totals.quarantined += report.rows_per_table.get("quarantine", 0)
        rate = report.records / report.seconds if report.seconds > 0 else 0.0
        try:
            ends = topic_end_offsets(settings, topic)
            behind = sum(max(0, end - report.end_offsets.get(p, 0)) for p, end in ends.items())
            distance = f"{behind:,} records behind the topic's end"
        except Exception:  # noqa: BLE001 - progress must not kill the ingest
            distance = "distance to the end unknown"
        rows = report.rows_per_table
        say("ingest",
            f"ingest: batch {report.batch_id}: {report.records:,} records in {report.seconds:.1f}s "
            f"({rate:,.0f}/s): {rows.get('offset_commits', 0):,} offset commits, "
            f"{rows.get('group_records', 0):,} group records, {rows.get('quarantine', 0):,} quarantined, "
            f"{report.lost_records:,} lost; {distance}")

    return progress


def ingest_with_progress(spark: SparkSession, settings: Settings, options: IngestOptions,
                         stop: threading.Event) -> IngestTotals:
    """Run the ingest, printing one line per micro-batch on stderr; ``CommandError`` if it failed (one line, the
    streaming query's error in the debug log)."""
    from pipelines.ingest import IngestError, run_ingest

    totals = IngestTotals()
    progress = batch_printer(settings, options.topic, totals)
    say("ingest", f"ingest: {options.topic} on {settings.kafka.bootstrap_servers} -> {settings.warehouse_uri} "
                  f"(cluster {settings.cluster_name}, {'once' if options.once else 'continuous'})")
    try:
        run_ingest(spark, settings, options, on_batch=progress, should_stop=stop.is_set,
                   on_restart=lambda reason: say("ingest", f"ingest: {reason}", level=logging.WARNING))
    except IngestError as exc:
        raise CommandError(f"ingest failed: {exc}") from exc
    return totals
