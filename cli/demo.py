"""``offsetlake demo``: the end-to-end run on the embedded broker (what ``make demo`` calls)."""

from __future__ import annotations

import argparse
import sys

from cli.errors import reported_as_command_errors
from cli.settings_arg import settings_from


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo", help="run offsetlake end to end on an embedded broker",
        description="Start an embedded Kafka broker, run real consumer groups (classic and KIP-848) that "
                    "consume and commit, ingest __consumer_offsets with Spark into the bronze and silver "
                    "Delta tables under the warehouse, print a summary, stop the broker.",
    )
    parser.add_argument("--messages", type=int, default=400, help="messages to produce and consume (default 400)")
    parser.add_argument("--warehouse", help="override the warehouse directory from settings")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pipelines.demo import run_demo

    settings = settings_from(args)
    if args.warehouse:
        settings = settings.with_overrides(warehouse=args.warehouse)

    def report(line: str) -> None:
        print(f"demo: {line}", file=sys.stderr, flush=True)

    with reported_as_command_errors():
        result = run_demo(settings, messages=args.messages, report=report)
    print(f"\nDelta tables under {result.warehouse}:")
    for name, count in result.rows_per_table.items():
        print(f"  {name:<32} {count:>7,} rows")
    print("\nclassic group members as recorded in __consumer_offsets (silver.group_members):")
    for m in result.members:
        owned = ", ".join(f"{p['topic']}-{q}" for p in (m["assigned_partitions"] or []) for q in p["partitions"])
        leader = " (leader)" if m["is_leader"] else ""
        print(f"  {m['group']} gen {m['generation']} {m['protocol']}: {m['client_id']}{leader} owns [{owned}]")
    print("\nconsumer lag at the newest snapshot (gold.consumer_lag):")
    for row in result.lag:
        seconds = row.get("lag_seconds_interpolated")
        print(f"  {row['group']:<16} {row['topic']}-{row['partition']}: lag {row['lag']} messages"
              f"{'' if seconds is None else f' (~{seconds:.1f}s)'}, status {row['partition_status']} "
              f"(group {row['group_status']})")
    print(f"\ndone in {result.seconds:.1f}s")
    return 0
