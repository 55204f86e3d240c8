"""Entry point of the ``offsetlake`` command.

Each subcommand lives in its own module exposing ``register(subparsers)``; the
module parses arguments and calls library code. Every failure is reported as one
line on stderr with a non-zero exit status, never as a traceback: bad settings
(exit 2), and the library's known failures and any other error, Spark's and the
Kafka clients' included (exit 1, ``cli/errors.py``), whose stack traces go to the
debug log the line names.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

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
    serve_sql,
    simulate,
    snapshot_end_offsets,
    sql,
    validate,
)
from cli import run as run_once  # the `run` subcommand's module; `run()` below is the console script
from cli.errors import CommandError, debug_log, first_line, known_failure, write_details
from conf.settings import ConfigError, Settings, load_settings

SUBCOMMANDS = (kafka, jvm, demo, ingest, run_once, simulate, decode, coordinator_partition, snapshot_end_offsets,
               lag, gold, validate, maintain, sql, serve_sql, dashboard, check)

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
    log = debug_log_path(args)
    with debug_log(log):
        try:
            return int(args.run(args) or 0)
        except ConfigError as exc:
            print(f"offsetlake: config error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        except KeyboardInterrupt:
            print("offsetlake: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except CommandError as exc:
            # A failure of a component behind the command (its cause) has details; the command's own refusal none.
            details = write_details(exc, log, args.command) if exc.__cause__ is not None else ""
            print(f"offsetlake: {exc}{details}", file=sys.stderr)
            return EXIT_FAILURE
        except Exception as exc:  # noqa: BLE001 - the edge: whatever failed is one line, its trace in the log
            line = known_failure(exc) or f"{args.command} failed: {first_line(exc)}"
            print(f"offsetlake: {line}{write_details(exc, log, args.command)}", file=sys.stderr)
            return EXIT_FAILURE


def debug_log_path(args: argparse.Namespace) -> Path:
    """The settings' debug log (``debug_log``), or the default one when the settings are bad (the command reports
    that itself)."""
    try:
        return load_settings(getattr(args, "config", None)).debug_log_path
    except ConfigError:
        return Settings().debug_log_path


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
