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
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

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
from cli.console import console_output, say
from cli.errors import CommandError, debug_log, first_line, known_failure, write_details
from conf.settings import ConfigError, Settings, load_settings

SUBCOMMANDS = (kafka, jvm, demo, ingest, run_once, simulate, decode, coordinator_partition, snapshot_end_offsets,
               lag, gold, validate, maintain, sql, serve_sql, serve_metrics, dashboard, check)

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class CommandLineParser(argparse.ArgumentParser):
    """offsetlake's parser, and through ``add_subparsers`` (whose parsers are of the parser's own class) every
    subcommand's and action's: no abbreviations, no unknown arguments, and a usage error in one line.

    Why no abbreviations: argparse takes any unambiguous prefix of an option by default, so a typo such as
    ``run --onc`` ran the whole job as ``--once``. Unknown arguments are refused by the parser they were
    given to, so the error names that subcommand (argparse's own check names only ``offsetlake``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        """One line on stderr (argparse prints the whole usage before it), exit status 2."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}; see '{self.prog} --help'\n")


def build_parser() -> argparse.ArgumentParser:
    parser = CommandLineParser(
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
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0), or a usage error already printed (EXIT_USAGE)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    log = debug_log_path(args)
    # Python logging, once for the command: the libraries' to the debug log, the command's own lines to the terminal.
    with debug_log(log), console_output(getattr(args, "log_format", "text")):
        try:
            return int(args.run(args) or 0)
        except ConfigError as exc:
            say("", f"offsetlake: config error: {exc}", level=logging.ERROR)
            return EXIT_USAGE
        except KeyboardInterrupt:
            say("", "offsetlake: interrupted", level=logging.ERROR)
            return EXIT_INTERRUPTED
        except CommandError as exc:
            # A failure of a component behind the command (its cause) has details; the command's own refusal none.
            details = write_details(exc, log, args.command) if exc.__cause__ is not None else ""
            say("", f"offsetlake: {exc}{details}", level=logging.ERROR)
            return EXIT_FAILURE
        except Exception as exc:  # noqa: BLE001 - the edge: whatever failed is one line, its trace in the log
            line = known_failure(exc) or f"{args.command} failed: {first_line(exc)}"
            say("", f"offsetlake: {line}{write_details(exc, log, args.command)}", level=logging.ERROR)
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
