"""``offsetlake check``: run the data-quality suites of quality/ and fail on a critical expectation."""

from __future__ import annotations

import argparse
import json
import os
import sys

from cli.errors import CommandError, first_line
from cli.settings_arg import settings_from

RESULT_WORDS = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP", "error": "ERROR"}
SAMPLE_LINES = 3


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check", help="run the data-quality expectations (Great Expectations) over the warehouse",
        description=(
            "Run the data-quality suites in quality/ (one per table or concern: offset_commits, group_members, "
            "group_generations, partition_assignments, committed_offsets, consumer_lag, quarantine, cross_table) "
            "with Great Expectations over the warehouse's Delta tables. Expectations of tables that do not exist "
            "yet are skipped. Every result is appended to audit.data_quality_results (with up to "
            "quality.sample_rows unexpected rows as JSON) and GX data docs (HTML) are built into --docs-dir "
            "(default quality.docs_dir, else <warehouse>/_quality/data_docs). Prints one line per expectation "
            "(suite, expectation, severity, PASS/FAIL/SKIP/ERROR, observed value) and the data docs index. "
            "Exits 1 if any critical expectation failed or could not be evaluated, 0 otherwise (warnings are "
            "printed but do not fail). Thresholds and severity overrides are in the [quality] settings. "
            "--json writes the whole report as one JSON document (run_id, ok, critical_failing, counts and "
            "every result with its full observed value and unexpected rows) for schedulers and scripts. "
            "A check of every suite reads only what is new since the last one (the rows of the groups silver "
            "gained rows for, the new rows for rules on single rows, whole tables for aggregates) and says so on "
            "standard error; the first check, a table rewritten since (a rebuild, a retention delete) or --full "
            "reads whole tables."
        ),
    )
    parser.add_argument("--table", action="append", metavar="NAME", dest="tables",
                        help="only the suites checking this table (e.g. gold.consumer_lag) or this suite "
                             "(e.g. cross_table); repeatable")
    parser.add_argument("--full", action="store_true",
                        help="read every table whole, not only what is new since the last check")
    parser.add_argument("--docs-dir", metavar="DIR", help="where to build the GX data docs")
    parser.add_argument("--json", metavar="FILE", dest="json_file",
                        help="also write the report as JSON to FILE; '-' prints it on standard output instead "
                             "of the table (the summary lines stay on standard error)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    from quality.checkpoint import check_severity_overrides, select_suites

    try:
        select_suites(args.tables)
        check_severity_overrides(settings)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    if args.json_file not in (None, "-"):
        folder = os.path.dirname(os.path.abspath(args.json_file))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            raise CommandError(f"--json {args.json_file}: {folder} is not a writable directory")
    from pipelines.delta_tables import WarehouseUnreachable, table_exists
    from schemas.catalog import TABLES

    try:
        empty = not any(table_exists(settings, spec) for spec in TABLES.values())
    except WarehouseUnreachable as exc:
        raise CommandError(str(exc)) from exc
    if empty:
        raise CommandError(f"warehouse {settings.warehouse_uri} does not exist or holds no offsetlake table; run "
                           "`offsetlake ingest` first or set warehouse / OFFSETLAKE_WAREHOUSE")
    from pipelines.spark_session import build_spark_session
    from quality.checkpoint import run_checks

    spark = build_spark_session(settings)
    try:
        report = run_checks(spark, settings, tables=args.tables, docs_dir=args.docs_dir, full=args.full)
    except Exception as exc:  # noqa: BLE001 - Spark/Delta/GX failures become one line
        raise CommandError(f"data-quality check failed to run: {first_line(exc)}") from exc
    finally:
        spark.stop()
    if args.json_file is not None and args.json_file != "-":
        try:
            with open(args.json_file, "w", encoding="utf-8") as out:
                json.dump(report.as_json(), out, indent=1)
        except OSError as exc:
            raise CommandError(f"cannot write --json {args.json_file}: {exc.strerror or exc}") from exc
    return print_report(report, as_json=args.json_file == "-")


def print_report(report, as_json: bool = False) -> int:  # type: ignore[no-untyped-def]
    """Print one line per expectation (and a few unexpected rows of failures), or the report as JSON; 1 if a
    critical expectation failed."""
    if as_json:
        print(json.dumps(report.as_json()))
    else:
        _print_table(report)
    counts = report.counts()
    critical = sum(r.fails_run for r in report.results)
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    print(f"check: read {report.read}", file=sys.stderr)
    print(f"check: {len(report.results)} expectations ({summary}); {critical} critical failing; "
          f"results in audit.data_quality_results run_id={report.run_id}", file=sys.stderr)
    if report.docs_index is not None:
        print(f"check: data docs {report.docs_index}", file=sys.stderr)
    return 0 if report.ok else 1


def _print_table(report) -> None:  # type: ignore[no-untyped-def]
    rows = [("SUITE", "EXPECTATION", "SEVERITY", "RESULT", "OBSERVED")]
    for r in report.results:
        observed = r.details if r.status in ("skipped", "error") else _short(r.observed_value)
        rows.append((r.suite, r.expectation, r.severity, RESULT_WORDS[r.status], observed))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for index, row in enumerate(rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True)) + "  " + row[4])
        result = report.results[index - 1] if index else None
        if result is not None and result.status == "failed":
            for sample in result.unexpected_sample[:SAMPLE_LINES]:
                print(f"    unexpected: {_short(sample, 200)}")


def _short(value: object, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."
