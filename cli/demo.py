"""``offsetlake demo``: the end-to-end run on the embedded broker (what ``make demo`` calls)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cli.errors import reported_as_command_errors
from cli.settings_arg import settings_from


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo", help="run offsetlake end to end on an embedded broker",
        description="Start an embedded Kafka broker, run a real consumer group that consumes and "
                    "commits, ingest __consumer_offsets with Spark into Delta under the warehouse, "
                    "print a summary, stop the broker.",
    )
    parser.add_argument("--messages", type=int, default=300, help="messages to produce and consume (default 300)")
    parser.add_argument("--warehouse", help="override the warehouse directory from settings")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pipelines.demo import KEY_TYPE_NAMES, run_demo

    settings = settings_from(args)
    if args.warehouse:
        settings = settings.with_overrides(warehouse=args.warehouse)

    def report(line: str) -> None:
        print(f"demo: {line}", file=sys.stderr, flush=True)

    with reported_as_command_errors():
        result = run_demo(settings, messages=args.messages, report=report)
    print(f"\n__consumer_offsets records landed in {Path(result.table_path)}")
    print(f"{'key type':<9} {'record':<22} {'count':>6}")
    for key_type, count in sorted(result.records_per_key_type.items(), key=lambda kv: (kv[0] is None, kv[0])):
        name = KEY_TYPE_NAMES.get(key_type, "KIP-848/other") if key_type is not None else "(no key)"
        print(f"{key_type!s:<9} {name:<22} {count:>6}")
    print(f"done in {result.seconds:.1f}s")
    return 0
