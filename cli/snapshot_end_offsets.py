"""``offsetlake snapshot-end-offsets``: ListOffsets of every partition -> silver.partition_end_offsets."""

from __future__ import annotations

import argparse
import sys
import time

from cli import argument_types
from cli.errors import CommandError, reported_as_command_errors
from cli.settings_arg import settings_from


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "snapshot-end-offsets", help="record every partition's log start, high watermark and last stable offset",
        description=(
            "Ask the cluster (AdminClient ListOffsets) for each partition's log start offset (EARLIEST), "
            "high watermark (LATEST, read_uncommitted) and last stable offset (LATEST, read_committed; below "
            "the high watermark while a transaction is open), and append them as one snapshot to "
            "silver.partition_end_offsets. Unless lag.message_timestamps is false, it also reads the "
            "timestamp of the message at each offset a consumer group has committed, for the "
            "message-timestamp lag estimator. Each row also records the topic's id (DescribeTopics), "
            "from which 'offsetlake gold' names the topic ids of KIP-848 groups' assignments. "
            "'offsetlake lag' turns the snapshots into gold.consumer_lag."
        ),
        epilog="Examples: offsetlake snapshot-end-offsets; "
               "offsetlake snapshot-end-offsets --topics orders payments --every 30 --count 120",
    )
    parser.add_argument("--topics", nargs="+", metavar="TOPIC",
                        help="topics to snapshot (default: every topic not starting with '__')")
    parser.add_argument("--include-internal", action="store_true",
                        help="with no --topics, also snapshot internal topics (__consumer_offsets, ...)")
    parser.add_argument("--every", type=argument_types.seconds(allow_zero=False), metavar="SECONDS",
                        help="take a snapshot every SECONDS (default: take one and exit)")
    parser.add_argument("--count", type=argument_types.whole_number(1), metavar="N",
                        help="with --every, stop after N snapshots (default: until Ctrl-C)")
    timestamps = parser.add_mutually_exclusive_group()
    timestamps.add_argument("--message-timestamps", dest="message_timestamps", action="store_true", default=None,
                            help="read the committed messages' timestamps (default: lag.message_timestamps)")
    timestamps.add_argument("--no-message-timestamps", dest="message_timestamps", action="store_false",
                            help="do not read them (cheaper; the message-timestamp estimator stays null)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pipelines.end_offsets import EndOffsetsError, check_topics, snapshot_end_offsets
    from pipelines.spark_session import build_spark_session

    if args.count is not None and args.every is None:
        raise CommandError("--count needs --every")
    settings = settings_from(args)
    total = args.count if args.every is not None else 1
    with reported_as_command_errors():
        try:  # before Spark: a wrong address or topic costs no JVM
            check_topics(settings, args.topics, args.include_internal)
        except EndOffsetsError as exc:
            raise CommandError(str(exc)) from exc
        spark = build_spark_session(settings)
        taken = 0
        next_at = time.monotonic()
        while total is None or taken < total:
            try:
                report = snapshot_end_offsets(spark, settings, args.topics, include_internal=args.include_internal,
                                              message_timestamps=args.message_timestamps)
            except EndOffsetsError as exc:
                raise CommandError(str(exc)) from exc
            taken += 1
            snap = report.snapshot
            behind = sum(p.latest_offset - p.last_stable_offset for p in snap.partitions)
            fetched = sum(len(p.committed_messages) for p in snap.partitions)
            print(f"snapshot {snap.snapshot_id} ({snap.snapshot_time:%Y-%m-%d %H:%M:%S} UTC): "
                  f"{len(snap.partitions)} partitions of {len(report.topics)} topics, "
                  f"{behind:,} messages in open transactions, {fetched} committed-message timestamps "
                  f"from {snap.groups_read} groups, {report.seconds:.1f}s", flush=True)
            if args.every is None or (total is not None and taken >= total):
                break
            next_at += args.every
            time.sleep(max(0.0, next_at - time.monotonic()))
    if taken > 1:
        print(f"{taken} snapshots appended to silver.partition_end_offsets", file=sys.stderr)
    return 0
