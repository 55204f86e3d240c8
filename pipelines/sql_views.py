"""The warehouse in Spark's catalog: every Delta table as ``layer.table``, and the dashboard questions as views.

Tables are registered as external tables over their Delta directories (``CREATE TABLE ... USING DELTA
LOCATION``), so ``SELECT * FROM gold.rebalance_events``, ``VERSION AS OF`` and ``DESCRIBE HISTORY`` work
in plain Spark SQL. The session catalog is in memory: nothing is persisted beside the tables, and
registering again (a new session, another warehouse) is cheap and idempotent.

Views are code: one ``.sql`` file per view in ``pipelines/sql_views/``, registered as
``dashboards.<file name>``. Each file starts with a comment header that says which question it answers
and how to ask it (``-- Question:``, ``-- Parameters:``, ``-- Reads:``, ``-- Example:``; a line starting
with ``--`` and two spaces continues the previous field). Parameterised questions (ownership at a point
in time, one group's timeline) are views the user filters with ``WHERE``; the examples are executed by
the tests, so they cannot rot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conf.settings import Settings
from schemas.catalog import TABLES
from schemas.table_spec import TableSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

VIEWS_DIR = Path(__file__).with_name("sql_views")
VIEW_SCHEMA = "dashboards"
_HEADER_FIELD = re.compile(r"^--\s*(Question|Parameters|Reads|Example):\s?(.*)$")
_CONTINUATION = re.compile(r"^--\s{2,}(.*)$")


@dataclass(frozen=True)
class ViewSpec:
    """A view of the ``dashboards`` schema, as read from its ``.sql`` file."""

    name: str
    question: str
    parameters: str
    reads: tuple[str, ...]
    examples: tuple[str, ...]
    sql: str


@dataclass
class CatalogReport:
    """What ``register_catalog`` put into the session catalog, and what it had to leave out (and why)."""

    tables: list[str] = field(default_factory=list)
    missing_tables: list[str] = field(default_factory=list)
    views: list[str] = field(default_factory=list)
    skipped_views: dict[str, str] = field(default_factory=dict)


def parse_view(name: str, text: str) -> ViewSpec:
    """Split a view file into its header fields and its SELECT (pure; raises ValueError on a bad header)."""
    fields: dict[str, list[str]] = {"Question": [], "Parameters": [], "Reads": []}
    examples: list[list[str]] = []
    current: list[str] | None = None
    lines = text.splitlines()
    body_start = len(lines)
    for index, line in enumerate(lines):
        if not line.startswith("--"):
            body_start = index
            break
        match = _HEADER_FIELD.match(line)
        if match:
            key, value = match.groups()
            if key == "Example":
                examples.append([value.strip()])
                current = examples[-1]
            else:
                fields[key] = [value.strip()]
                current = fields[key]
            continue
        continuation = _CONTINUATION.match(line)
        if continuation and current is not None:
            current.append(continuation.group(1).strip())
    missing = [key for key, value in fields.items() if not value]
    if missing:
        raise ValueError(f"view {name}: header lacks {', '.join(missing)} (see pipelines/sql_views.py)")
    sql = "\n".join(lines[body_start:]).strip().rstrip(";").strip()
    if not sql:
        raise ValueError(f"view {name}: no SELECT after the header")
    reads = tuple(part.strip() for part in " ".join(fields["Reads"]).split(",") if part.strip())
    return ViewSpec(
        name=f"{VIEW_SCHEMA}.{name}", question=" ".join(fields["Question"]),
        parameters=" ".join(fields["Parameters"]), reads=reads,
        examples=tuple(" ".join(example) for example in examples), sql=sql,
    )


def load_views(directory: Path = VIEWS_DIR) -> list[ViewSpec]:
    """Every view of ``directory``, ordered so that a view comes after the views it reads."""
    views = {spec.name: spec for spec in (parse_view(path.stem, path.read_text()) for path in
                                          sorted(directory.glob("*.sql")))}
    return dependency_order(views)


def dependency_order(views: dict[str, ViewSpec]) -> list[ViewSpec]:
    ordered: list[ViewSpec] = []
    placed: set[str] = set()

    def place(name: str, path: tuple[str, ...]) -> None:
        if name in placed:
            return
        if name in path:
            raise ValueError(f"views read each other in a cycle: {' -> '.join((*path, name))}")
        for dependency in views[name].reads:
            if dependency in views:
                place(dependency, (*path, name))
        placed.add(name)
        ordered.append(views[name])

    for name in sorted(views):
        place(name, ())
    return ordered


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _registered_location(spark: SparkSession, name: str) -> str | None:
    """Where the catalog's table ``name`` points, or None when there is no such table."""
    if not spark.catalog.tableExists(name):
        return None
    for row in spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect():
        if row["col_name"] == "Location":
            return _normal_location(str(row["data_type"]))
    return ""


def _normal_location(location: str) -> str:
    """A table location as compared here: a local one as its absolute path (``file:/x``, ``file:///x`` -> ``/x``),
    any other URI as given; no trailing slash."""
    if location.startswith("file:"):
        location = "/" + location.removeprefix("file:").lstrip("/")
    return location.rstrip("/")


def register_tables(spark: SparkSession, settings: Settings,
                    tables: dict[str, TableSpec] = TABLES) -> tuple[list[str], list[str]]:
    """Register every table of this warehouse that exists; drop stale registrations of the others.

    One SparkSession may serve several warehouses in turn (the tests do), so a table already registered
    at another location is re-pointed. Dropping an external table leaves its files alone.
    """
    from pipelines.delta_tables import table_exists, table_path

    registered, missing = [], []
    for layer in sorted({spec.layer for spec in tables.values()}):
        spark.sql(f"CREATE SCHEMA IF NOT EXISTS {layer}")
    for name, spec in tables.items():
        path = table_path(settings, spec)
        location = _registered_location(spark, name)
        if not table_exists(settings, spec):
            if location is not None:
                spark.sql(f"DROP TABLE IF EXISTS {name}")
            missing.append(name)
            continue
        if location is not None and location != _normal_location(path):
            spark.sql(f"DROP TABLE IF EXISTS {name}")
            location = None
        if location is None:
            spark.sql(f"CREATE TABLE IF NOT EXISTS {name} USING DELTA LOCATION {_sql_string(path)}")
        registered.append(name)
    return registered, missing


def register_views(spark: SparkSession, views: list[ViewSpec], available: set[str]) -> tuple[list[str], dict[str, str]]:
    """Create or replace each view whose inputs are available; say why the others were left out."""
    spark.sql(f"CREATE SCHEMA IF NOT EXISTS {VIEW_SCHEMA}")
    created, skipped = [], {}
    available = set(available)
    for view in views:
        absent = [name for name in view.reads if name not in available]
        if absent:
            spark.sql(f"DROP VIEW IF EXISTS {view.name}")
            skipped[view.name] = f"needs {', '.join(absent)}, not in this warehouse yet"
            continue
        try:
            spark.sql(f"CREATE OR REPLACE VIEW {view.name} COMMENT {_sql_string(view.question)} AS\n{view.sql}")
        except Exception as exc:  # noqa: BLE001 - e.g. a column an older warehouse lacks: skip this view only
            spark.sql(f"DROP VIEW IF EXISTS {view.name}")
            skipped[view.name] = error_line(exc)
            continue
        created.append(view.name)
        available.add(view.name)
    return created, skipped


def register_catalog(spark: SparkSession, settings: Settings) -> CatalogReport:
    """Tables and views of ``settings.warehouse`` into the session catalog; idempotent."""
    tables, missing = register_tables(spark, settings)
    views, skipped = register_views(spark, load_views(), set(tables))
    return CatalogReport(tables=tables, missing_tables=missing, views=views, skipped_views=skipped)


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool


def run_query(spark: SparkSession, query: str, limit: int | None) -> QueryResult:
    """Run one Spark SQL statement; at most ``limit`` rows (``truncated`` says whether there were more)."""
    frame: DataFrame = spark.sql(query)
    if limit is None:
        rows = frame.collect()
        truncated = False
    else:
        rows = frame.limit(limit + 1).collect()
        truncated = len(rows) > limit
        rows = rows[:limit]
    return QueryResult(columns=list(frame.columns), rows=[tuple(row) for row in rows], truncated=truncated)


def error_line(exc: BaseException) -> str:
    """The first non-empty line of a Spark error: the error class and message, without the JVM stack."""
    for line in str(exc).splitlines():
        if line.strip():
            return line.strip()
    return type(exc).__name__


def quiet_query_context_logger() -> None:
    """PySpark logs every failed query with its full JVM stack as JSON at ERROR (the Python loggers
    SQLQueryContextLogger and DataFrameQueryContextLogger, pyspark/errors/exceptions/base.py).

    A command that reports the error as one line itself silences them. They must be created as
    PySparkLoggers (their callers pass PySpark-only keyword arguments), then disabled.
    """
    from pyspark.logger import PySparkLogger

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True
