"""``offsetlake sql``: run Spark SQL against the warehouse, with its tables and the dashboard views in the catalog.

Two engines answer it: Spark (``pipelines/sql_views.py``) and, without a JVM, delta-rs's embedded DataFusion
(``pipelines/embedded_sql.py``), which reads the same Spark SQL through sqlglot. Both return rows in the same
Python types, so ``--format`` prints the same text whichever answered. The default, ``auto``, asks the
embedded engine first and Spark when it cannot answer (time travel, DESCRIBE, a Spark-only function, a table
delta-rs refuses, a failing query): a typical question at 10,000 groups takes a fraction of a second there
against several seconds for the first query of a new Spark JVM, which also takes seconds to start (bench/scale.py;
figures in CHANGELOG.md).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import decimal
import json
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from cli import argument_types
from cli.errors import CommandError, reported_as_command_errors
from cli.settings_arg import settings_from

if TYPE_CHECKING:
    from conf.settings import Settings
    from pipelines.sql_views import QueryResult

FORMATS = ("table", "csv", "json")
ENGINES = ("auto", "spark", "delta-rs")
DEFAULT_LIMIT = 1000


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sql", help="run Spark SQL against the warehouse (tables as layer.table, views as dashboards.*)",
        description=(
            "Run one Spark SQL statement against the warehouse. Every existing Delta table is in the catalog "
            "as layer.table (bronze.offsets_topic_records, silver.offset_commits, gold.rebalance_events, ...) "
            "and the dashboard questions are views in the dashboards schema (pipelines/sql_views/*.sql): "
            "top_rebalancing_groups, rebalance_timeline, partition_ownership, lag_over_time, "
            "consumer_status_now, stale_groups, membership_churn. Delta time travel works on tables: "
            "SELECT ... FROM gold.partition_assignments VERSION AS OF 3 (or TIMESTAMP AS OF '...'); "
            "DESCRIBE HISTORY gold.partition_assignments lists the versions. Quote the column `group` and "
            "`partition` with backticks. --list shows every table and view with what it answers. "
            "By default (--engine auto) a query is answered without a JVM by delta-rs's embedded DataFusion "
            "(the Spark SQL translated by sqlglot), in a second where Spark needs tens of seconds to start, "
            "and by Spark when the embedded engine cannot answer it: time travel (VERSION AS OF), DESCRIBE "
            "HISTORY, Spark-only functions (mode, lambdas such as filter(a, x -> ...)), a table delta-rs "
            "refuses; a line on stderr says so. --engine spark always asks Spark: use it for a query whose "
            "result or sort does not fit in this machine's memory (DataFusion holds it in memory, Spark "
            "spills to disk). --engine delta-rs never starts a JVM."
        ),
        epilog=(
            "Examples: offsetlake sql --list; offsetlake sql \"SELECT * FROM dashboards.consumer_status_now\"; "
            "offsetlake sql --format csv \"SELECT * FROM dashboards.partition_ownership WHERE `group` = 'billing' "
            "AND valid_from <= TIMESTAMP '2026-01-01 12:00:00' AND (valid_to IS NULL OR valid_to > "
            "TIMESTAMP '2026-01-01 12:00:00')\""
        ),
    )
    parser.add_argument("query", nargs="?", help="one Spark SQL statement (quote it for the shell)")
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="table (aligned columns, default), csv (with a header) or json (one object per line)")
    parser.add_argument("--limit", type=argument_types.whole_number(0, meaning="(0: all rows)"), default=DEFAULT_LIMIT,
                        metavar="N",
                        help=f"print at most N rows (default {DEFAULT_LIMIT}; 0 for all)")
    parser.add_argument("--list", action="store_true", help="list the tables and views with their descriptions")
    parser.add_argument("--engine", choices=ENGINES, default="auto",
                        help="auto (default: delta-rs when it can answer, else Spark), spark (every Spark SQL "
                             "feature, starts a JVM) or delta-rs (no JVM; queries only, no time travel or DESCRIBE)")
    parser.set_defaults(run=run)


def _text(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, list | dict | tuple):
        return json.dumps(_plain(value), default=str)
    return str(value)


def _plain(value: Any) -> Any:
    """Rows and nested values as JSON-friendly Python (Spark Rows are tuples with names)."""
    if hasattr(value, "asDict"):
        return {k: _plain(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bytes | bytearray):
        return value.hex()
    return value


def format_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """Aligned columns; numbers right-aligned (pure)."""
    cells = [[_text(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    numeric = [all(isinstance(row[i], int | float | decimal.Decimal) and not isinstance(row[i], bool)
                   for row in rows if row[i] is not None) and any(row[i] is not None for row in rows)
               for i in range(len(columns))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric, strict=True)
                         ).rstrip()

    return [line(columns), line(["-" * w for w in widths]), *(line(row) for row in cells)]


def write_rows(out: TextIO, fmt: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if v is None else _text(v) for v in row])
    elif fmt == "json":
        for row in rows:
            out.write(json.dumps({c: _plain(v) for c, v in zip(columns, row, strict=True)}, default=str) + "\n")
    else:
        for text in format_table(columns, rows):
            out.write(text + "\n")


def _print_list(report: Any, unreadable: dict[str, str] | None = None) -> None:
    from pipelines.sql_views import load_views
    from schemas.catalog import TABLES

    print("tables:")
    for name in report.tables:
        print(f"  {name:<34} {TABLES[name].description}")
    for name in report.missing_tables:
        print(f"  {name:<34} (not created yet in this warehouse)")
    for name, reason in (unreadable or {}).items():
        print(f"  {name:<34} [unreadable by delta-rs: {reason}]")
    print("\nviews:")
    skipped = report.skipped_views
    for view in load_views():
        note = f" [unavailable: {skipped[view.name]}]" if view.name in skipped else ""
        print(f"  {view.name:<34} {view.question}{note}")
        print(f"  {'':<34} parameters: {view.parameters}")


class QueryTimer:
    """Seconds spent answering the query itself (planning, reading, computing the rows)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self, answer: Callable[[], QueryResult]) -> QueryResult:
        started = time.perf_counter()
        try:
            return answer()
        finally:
            self.seconds = time.perf_counter() - started


def _run_embedded(args: argparse.Namespace, settings: Settings, timer: QueryTimer) -> QueryResult | None:
    """The embedded engine's answer (or its list); never imports a SparkSession or starts a JVM."""
    from pipelines.embedded_sql import EmbeddedSqlError, open_catalog

    catalog = open_catalog(settings)
    if args.list:
        _print_list(catalog.report, catalog.unreadable_tables)
        return None
    try:
        return timer(lambda: catalog.query(args.query, args.limit or None))
    except EmbeddedSqlError as exc:
        raise CommandError(f"sql: {exc}") from exc


def run(args: argparse.Namespace) -> int:
    if not args.list and not args.query:
        raise CommandError("sql: give a query (quoted), or --list")
    settings = settings_from(args)
    timer = QueryTimer()
    if args.engine == "spark":
        result = _run_spark(args, settings, timer)
    elif args.engine == "delta-rs":
        result = _run_embedded(args, settings, timer)
    else:
        try:
            result = _run_embedded(args, settings, timer)
        except CommandError as refused:
            # Spark's answer, or its error alone: a wrong query is one line either way (the embedded engine's
            # refusal is said only once Spark has answered in its place).
            result = _run_spark(args, settings, timer)
            reason = str(refused).removeprefix("sql: ")
            print(f"sql: answered by Spark: the embedded engine could not ({reason})", file=sys.stderr)
    if result is None:  # --list printed
        return 0
    write_rows(sys.stdout, args.format, result.columns, result.rows)
    sys.stdout.flush()
    more = " (more rows: raise --limit, or 0 for all)" if result.truncated else ""
    # The query's own time, apart from the start-up (for Spark: the JVM and the catalog; a new JVM's first
    # query still pays for its warm-up, which serve-sql pays once). bench/scale.py reads it.
    print(f"{len(result.rows)} rows in {timer.seconds:.2f} s{more}", file=sys.stderr)
    return 0


def _run_spark(args: argparse.Namespace, settings: Settings, timer: QueryTimer) -> QueryResult | None:
    from pipelines import spark_session
    from pipelines.sql_views import error_line, quiet_query_context_logger, register_catalog, run_query

    with reported_as_command_errors():
        spark = spark_session.build_spark_session(settings, read_only=True)
        quiet_query_context_logger()
        report = register_catalog(spark, settings)
        if args.list:
            _print_list(report)
            return None
        try:
            return timer(lambda: run_query(spark, args.query, args.limit or None))
        except Exception as exc:  # noqa: BLE001 - a bad query is one line, never a JVM stack
            raise CommandError(f"sql: {error_line(exc)}") from exc
