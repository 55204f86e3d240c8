"""Entry point of the ``offsetlake`` command.

Each subcommand lives in its own module exposing ``register(subparsers)``; the
module parses arguments and calls library code. Known failures (bad settings,
missing JVM artifacts, a broker that will not start) are reported as one line
on stderr with a non-zero exit status, never as a bare traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from cli import (
    check,
    coordinator_partition,
    dashboard,
    decode,
    demo,
    gold,
    ingest,
    jvm,
    kafka,
    lag,
    maintain,
    serve_metrics,
    serve_sql,
    simulate,
    snapshot_end_offsets,
    sql,
    validate,
)
from cli import run as run_once  # the `run` subcommand's module; `run()` below is the console script
from cli.errors import CommandError
from conf.settings import ConfigError

SUBCOMMANDS = (kafka, jvm, demo, ingest, run_once, simulate, decode, coordinator_partition, snapshot_end_offsets,
               lag, gold, validate, maintain, sql, serve_sql, serve_metrics, dashboard, check)

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="offsetlake",
        description=(
            "offsetlake keeps the history of Kafka consumer groups: it ingests __consumer_offsets "
            "with Spark Structured Streaming into Delta tables of commits, members, assignments, "
            "rebalances and lag."
        ),
        epilog=(
            "Settings come from offsetlake.toml (or --config / OFFSETLAKE_CONFIG) and "
            "OFFSETLAKE_<SECTION>__<KEY> environment variables; see conf/offsetlake.example.toml."
        ),
    )
    parser.add_argument("--config", metavar="FILE", help="TOML settings file (default: ./offsetlake.toml if present)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except ConfigError as exc:
        print(f"offsetlake: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("offsetlake: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except CommandError as exc:
        print(f"offsetlake: {exc}", file=sys.stderr)
        return EXIT_FAILURE


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
