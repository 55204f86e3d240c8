"""The warehouse's tables and dashboard views answered without a JVM, by delta-rs's embedded DataFusion engine.

A SparkSession takes tens of seconds to start on a small machine; a small installation that only wants to
ask the dashboard views a question can do without it. delta-rs (``deltalake``, already in the lock) reads
our Delta tables natively and exposes Apache DataFusion SQL over them as ``deltalake.QueryBuilder``
(``QueryBuilder().register(name, DeltaTable(uri, storage_options=...))`` then ``.execute(sql)``, which
returns an Arrow stream). DataFusion accepts ``CREATE SCHEMA`` and ``CREATE VIEW``, so every existing table
is registered under the same qualified name Spark uses (``gold.rebalance_events``, ``silver.offset_commits``)
and every view of ``pipelines/sql_views/`` is created as ``dashboards.<name>``: one catalog, two engines.

One source of truth for the SQL. The view files and the user's queries are Spark SQL. They are parsed
with sqlglot's Spark dialect (``sqlglot.parse(sql, read="spark")``) and written out with ``DataFusion``
below, sqlglot's Postgres generator plus these rewrites, each to a DataFusion built-in with Spark's meaning:

=====================================  ==================================================================
Spark                                  DataFusion
=====================================  ==================================================================
```group``` (backticks)                ``"group"`` (Postgres quoting; from the Postgres generator)
``a <=> b``                            ``a IS NOT DISTINCT FROM b`` (from the Postgres generator)
``TIMESTAMP 'T'``                      ``CAST('T' AS TIMESTAMP)``: a naive time, compared with our UTC
                                       columns as UTC, as Spark reads it in its session time zone (UTC)
``count_if(c)``                        ``count(CASE WHEN c THEN 1 END)`` (0, not NULL, when no row matches)
``max_by(x, y)`` / ``min_by(x, y)``    ``first_value(x ORDER BY y DESC|ASC) FILTER (WHERE y IS NOT NULL)``
``unix_micros(t)``                     ``CAST(to_timestamp_micros(t) AS BIGINT)``
``timestampdiff(SECOND|..., a, b)``    ``(unix_micros(b) - unix_micros(a)) / <micros per unit>``
                                       (integer division truncates, as Spark's does; units up to DAY)
``size(a)``                            ``cardinality(a)``
=====================================  ==================================================================

What has no expression-level equivalent is refused with a one-line error naming it (``mode()``, higher-order
functions with lambdas such as ``filter(a, x -> ...)``; the view files avoid them), and so is what only Spark
and Delta's JVM side can do: time travel (``VERSION AS OF``/``TIMESTAMP AS OF``), ``DESCRIBE HISTORY`` and
any statement that is not a query (the embedded engine is read-only).

Results come back in the Python types ``cli/sql.py`` prints for Spark: timestamps as naive ``datetime`` in
UTC (Spark's session time zone), decimals as ``Decimal``, structs as dicts, arrays as lists, maps as dicts.
A table delta-rs cannot read (a reader feature it lacks) is left out and reported in one line, as
``pipelines.sql_views.register_catalog`` reports a view it had to skip.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import sqlglot
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import ErrorLevel, ParseError, SqlglotError

from conf.settings import Settings
from pipelines.delta_tables import table_path
from pipelines.sql_views import VIEW_SCHEMA, CatalogReport, QueryResult, ViewSpec, load_views
from schemas.catalog import TABLES
from schemas.table_spec import TableSpec

if TYPE_CHECKING:
    import pyarrow as pa
    from deltalake import QueryBuilder

_MICROS_PER_UNIT = {"MICROSECOND": 1, "MILLISECOND": 1_000, "SECOND": 1_000_000, "MINUTE": 60_000_000,
                    "HOUR": 3_600_000_000, "DAY": 86_400_000_000}
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


class EmbeddedSqlError(ValueError):
    """A query the embedded engine cannot answer; ``str()`` is one line, meant to be shown as is."""


def _unix_micros(value: exp.Expression) -> exp.Expression:
    return exp.cast(exp.func("to_timestamp_micros", value), exp.DataType.build("BIGINT"))


def _first_value_by(self: DataFusion.Generator, expression: exp.ArgMax | exp.ArgMin, descending: bool) -> str:
    value, key = expression.this, expression.expression
    ordered = exp.Ordered(this=key.copy(), desc=descending, nulls_first=False)
    ordered_sql = self.sql(ordered)
    return f"first_value({self.sql(value)} ORDER BY {ordered_sql}) FILTER (WHERE {self.sql(key)} IS NOT NULL)"


def _timestamp_diff(self: DataFusion.Generator, expression: exp.TimestampDiff) -> str:
    unit = expression.text("unit").upper()
    if unit not in _MICROS_PER_UNIT:
        self.unsupported(f"timestampdiff({unit}, ...) (the embedded engine knows units up to DAY)")
        return ""
    end, start = expression.this, expression.expression
    difference = exp.Sub(this=_unix_micros(end.copy()), expression=_unix_micros(start.copy()))
    return f"({self.sql(difference)}) / {_MICROS_PER_UNIT[unit]}"


def _unsupported(what: str) -> Callable[[DataFusion.Generator, exp.Expression], str]:
    """A transform that refuses ``what`` (with ErrorLevel.RAISE, sqlglot raises UnsupportedError)."""

    def generate(self: DataFusion.Generator, expression: exp.Expression) -> str:
        self.unsupported(f"{what} has no DataFusion equivalent; use --engine spark")
        return ""

    return generate


class DataFusion(Postgres):
    """sqlglot's Postgres dialect, written for DataFusion (the rewrites of the module docstring)."""

    class Generator(Postgres.Generator):  # type: ignore[misc,valid-type]  # sqlglot declares it as a variable
        TYPE_MAPPING = {**Postgres.Generator.TYPE_MAPPING, exp.DataType.Type.TIMESTAMPTZ: "TIMESTAMP"}
        TRANSFORMS = {
            **Postgres.Generator.TRANSFORMS,
            exp.CountIf: lambda self, e: f"count(CASE WHEN {self.sql(e, 'this')} THEN 1 END)",
            exp.ArgMax: lambda self, e: _first_value_by(self, e, descending=True),
            exp.ArgMin: lambda self, e: _first_value_by(self, e, descending=False),
            exp.UnixMicros: lambda self, e: self.sql(_unix_micros(e.this)),
            exp.TimestampDiff: _timestamp_diff,
            exp.ArraySize: lambda self, e: f"cardinality({self.sql(e, 'this')})",
            exp.Mode: _unsupported("mode()"),
            exp.ArrayFilter: _unsupported("a lambda (filter(array, x -> ...))"),
            exp.Transform: _unsupported("a lambda (transform(array, x -> ...))"),
        }


def _parse_error_line(exc: ParseError) -> str:
    if exc.errors:
        first = exc.errors[0]
        near = _ANSI_ESCAPE.sub("", str(first.get("highlight") or ""))
        return f"{first.get('description')} at line {first.get('line')}, column {first.get('col')} (near {near!r})"
    return _ANSI_ESCAPE.sub("", str(exc)).strip().splitlines()[0]


def parse_query(spark_sql: str) -> exp.Expression:
    """One Spark SQL query as a sqlglot tree; EmbeddedSqlError for anything the embedded engine refuses."""
    try:
        statements = [s for s in sqlglot.parse(spark_sql, read="spark") if s is not None]
    except ParseError as exc:
        raise EmbeddedSqlError(_parse_error_line(exc)) from exc
    if len(statements) != 1:
        raise EmbeddedSqlError(f"expected one SQL statement, got {len(statements)}")
    tree = statements[0]
    if isinstance(tree, exp.Describe):
        raise EmbeddedSqlError("DESCRIBE (and DESCRIBE HISTORY) needs Delta's JVM side: use --engine spark")
    if not isinstance(tree, exp.Query):
        raise EmbeddedSqlError(f"the embedded engine only answers queries (SELECT/WITH), not {tree.key.upper()}; "
                               "use --engine spark")
    if tree.find(exp.Version) is not None:
        raise EmbeddedSqlError("time travel (VERSION AS OF / TIMESTAMP AS OF) needs --engine spark")
    return cast(exp.Expression, tree)  # sqlglot types Query as a mixin, not an Expression


def to_datafusion(spark_sql: str | exp.Expression) -> str:
    """The DataFusion form of one Spark SQL query (pure; EmbeddedSqlError if it has no DataFusion form)."""
    tree = parse_query(spark_sql) if isinstance(spark_sql, str) else spark_sql
    try:
        return tree.sql(dialect=DataFusion, unsupported_level=ErrorLevel.RAISE)
    except SqlglotError as exc:
        raise EmbeddedSqlError(_ANSI_ESCAPE.sub("", str(exc)).strip().splitlines()[0]) from exc


def error_line(exc: BaseException) -> str:
    """The first non-empty line of a DataFusion, delta-rs or sqlglot error."""
    for line in _ANSI_ESCAPE.sub("", str(exc)).splitlines():
        if line.strip():
            return line.strip()
    return type(exc).__name__


@dataclass
class EmbeddedCatalog:
    """A DataFusion session (``deltalake.QueryBuilder``) holding the warehouse's tables and views.

    ``report`` says what was registered and what was left out, like ``register_catalog``'s for Spark;
    ``unreadable_tables`` names the tables delta-rs refused, with its reason (one line each).
    """

    builder: QueryBuilder
    report: CatalogReport
    unreadable_tables: dict[str, str] = field(default_factory=dict)
    seconds_to_open: float = 0.0

    def query(self, spark_sql: str, limit: int | None = None) -> QueryResult:
        """Answer one Spark SQL query; at most ``limit`` rows (``truncated`` says whether there were more).

        Raises EmbeddedSqlError (one line) for a query the engine refuses or fails to run.
        """
        return self._run(to_datafusion(spark_sql), limit)

    def query_view(self, view: str, where: str | None = None, params: Mapping[str, Any] | None = None,
                   order_by: str | None = None, limit: int | None = None) -> QueryResult:
        """One dashboards view, filtered: see the module-level :func:`query_view`."""
        name = view if view.startswith(f"{VIEW_SCHEMA}.") else f"{VIEW_SCHEMA}.{view}"
        known = {spec.name for spec in load_views()}
        if name not in known:
            raise EmbeddedSqlError(f"no view {name}; the views are {', '.join(sorted(known))}")
        if name not in self.report.views:
            reason = self.report.skipped_views.get(name, "not registered")
            raise EmbeddedSqlError(f"view {name} is unavailable in this warehouse: {reason}")
        select = f"SELECT * FROM {name}"
        if where:
            select += f" WHERE {where}"
        if order_by:
            select += f" ORDER BY {order_by}"
        tree = parse_query(select)
        _bind(tree, dict(params or {}))
        return self._run(to_datafusion(tree), limit)

    def _run(self, datafusion_sql: str, limit: int | None) -> QueryResult:
        import pyarrow as pa

        try:
            reader = pa.RecordBatchReader.from_stream(self.builder.execute(datafusion_sql))
            schema = _spark_like_schema(reader.schema)
            rows: list[tuple[Any, ...]] = []
            for batch in _batches(reader):
                if batch.num_rows == 0:
                    continue
                # safe=False: nanoseconds (DataFusion's now()) are truncated to microseconds, as Spark keeps them.
                converted = pa.Table.from_batches([batch]).cast(schema, safe=False)
                rows.extend(tuple(row.values()) for row in converted.to_pylist(maps_as_pydicts="lossy"))
                if limit is not None and len(rows) > limit:
                    break
        except Exception as exc:  # noqa: BLE001 - DataFusion's errors (planning, execution) arrive as one type each
            raise EmbeddedSqlError(self._explained(error_line(exc))) from exc
        truncated = limit is not None and len(rows) > limit
        return QueryResult(columns=list(reader.schema.names), rows=rows[:limit] if limit is not None else rows,
                           truncated=truncated)


    def _explained(self, line: str) -> str:
        """DataFusion's "table 'datafusion.gold.x' not found", with why the table or view is absent, if known."""
        match = re.search(r"table 'datafusion\.([a-z_]+\.[a-z_]+)' not found", line)
        if match is None:
            return line
        name = match.group(1)
        if name in self.unreadable_tables:
            return f"{line} (delta-rs cannot read it: {self.unreadable_tables[name]})"
        if name in self.report.skipped_views:
            return f"{line} ({self.report.skipped_views[name]})"
        if name in self.report.missing_tables:
            return f"{line} (not created yet in this warehouse)"
        return line


def _batches(reader: pa.RecordBatchReader) -> Iterator[pa.RecordBatch]:
    while True:
        try:
            yield reader.read_next_batch()
        except StopIteration:
            return


def _spark_like_type(data_type: pa.DataType) -> pa.DataType:
    """The Arrow type whose Python values are Spark's: timestamps naive in UTC, in microseconds (Spark's
    precision; DataFusion's ``now()`` is in nanoseconds), nested types converted field by field."""
    import pyarrow as pa

    if pa.types.is_timestamp(data_type):
        return pa.timestamp("us")
    if pa.types.is_struct(data_type):
        return pa.struct([f.with_type(_spark_like_type(f.type)) for f in data_type])
    if pa.types.is_large_list(data_type) or pa.types.is_list_view(data_type) or pa.types.is_large_list_view(data_type):
        return pa.list_(data_type.value_field.with_type(_spark_like_type(data_type.value_type)))
    if pa.types.is_list(data_type):
        return pa.list_(data_type.value_field.with_type(_spark_like_type(data_type.value_type)))
    if pa.types.is_fixed_size_list(data_type):
        return pa.list_(data_type.value_field.with_type(_spark_like_type(data_type.value_type)))
    if pa.types.is_map(data_type):
        return pa.map_(data_type.key_field.with_type(_spark_like_type(data_type.key_type)),
                       data_type.item_field.with_type(_spark_like_type(data_type.item_type)))
    return data_type


def _spark_like_schema(schema: pa.Schema) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([f.with_type(_spark_like_type(f.type)) for f in schema])


def _literal(name: str, value: Any) -> exp.Expression:
    """A parameter's value as a SQL literal node (never spliced as text, so a value cannot change the query)."""
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | float | decimal.Decimal):
        return exp.Literal.number(value)
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return exp.cast(exp.Literal.string(value.isoformat(sep=" ")), exp.DataType.build("TIMESTAMP"))
    if isinstance(value, dt.date):
        return exp.cast(exp.Literal.string(value.isoformat()), exp.DataType.build("DATE"))
    raise EmbeddedSqlError(f"parameter :{name} is a {type(value).__name__}; expected str, int, float, Decimal, "
                           "bool, datetime, date or None")


def _bind(tree: exp.Expression, params: dict[str, Any]) -> None:
    placeholders = list(tree.find_all(exp.Placeholder))
    named = {p.name for p in placeholders}
    if any(not p.name for p in placeholders):
        raise EmbeddedSqlError("use named parameters (:name), not ?")
    if missing := sorted(named - params.keys()):
        raise EmbeddedSqlError(f"no value for parameter(s) {', '.join(':' + n for n in missing)}")
    if unused := sorted(params.keys() - named):
        raise EmbeddedSqlError(f"parameter(s) {', '.join(':' + n for n in unused)} not used in the filter")
    for placeholder in placeholders:
        placeholder.replace(_literal(placeholder.name, params[placeholder.name]))


def _register_tables(builder: QueryBuilder, settings: Settings, tables: Mapping[str, TableSpec],
                     storage_options: Mapping[str, str] | None) -> tuple[list[str], list[str], dict[str, str]]:
    from deltalake import DeltaTable

    options = dict(storage_options or settings.storage.delta_rs) or None  # default: the settings' storage.delta_rs
    registered, missing, unreadable = [], [], {}
    for layer in sorted({spec.layer for spec in tables.values()} | {VIEW_SCHEMA}):
        builder.execute(f"CREATE SCHEMA IF NOT EXISTS {layer}")
    for name, spec in tables.items():
        uri = table_path(settings, spec)
        try:
            if not DeltaTable.is_deltatable(uri, storage_options=options):
                missing.append(name)
                continue
            builder.register(name, DeltaTable(uri, storage_options=options))
        except Exception as exc:  # noqa: BLE001 - e.g. DeltaProtocolError: a reader feature delta-rs lacks
            unreadable[name] = error_line(exc)
            continue
        registered.append(name)
    return registered, missing, unreadable


def _register_views(builder: QueryBuilder, views: list[ViewSpec], available: set[str],
                    unreadable: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    created, skipped = [], {}
    available = set(available)
    for view in views:
        absent = [name for name in view.reads if name not in available]
        if absent:
            why = [f"{name} (delta-rs cannot read it)" if name in unreadable else f"{name} (not in this warehouse yet)"
                   for name in absent]
            skipped[view.name] = f"needs {', '.join(why)}"
            continue
        try:
            builder.execute(f"CREATE VIEW {view.name} AS\n{to_datafusion(view.sql)}").read_all()
        except Exception as exc:  # noqa: BLE001 - e.g. a column an older warehouse lacks: skip this view only
            skipped[view.name] = error_line(exc)
            continue
        created.append(view.name)
        available.add(view.name)
    return created, skipped


def open_catalog(settings: Settings, storage_options: Mapping[str, str] | None = None,
                 tables: Mapping[str, TableSpec] = TABLES) -> EmbeddedCatalog:
    """Every existing table of ``settings.warehouse`` and every dashboards view in a new DataFusion session.

    ``storage_options`` go to ``deltalake.DeltaTable`` unchanged (object-store credentials and endpoints,
    e.g. ``{"AWS_REGION": ...}``); a local warehouse needs none. Starts no JVM and imports no SparkSession.
    """
    from deltalake import QueryBuilder

    started = time.monotonic()
    builder = QueryBuilder()
    registered, missing, unreadable = _register_tables(builder, settings, tables, storage_options)
    views, skipped = _register_views(builder, load_views(), set(registered), unreadable)
    report = CatalogReport(tables=registered, missing_tables=missing, views=views, skipped_views=skipped)
    return EmbeddedCatalog(builder=builder, report=report, unreadable_tables=unreadable,
                           seconds_to_open=time.monotonic() - started)


def run_query(settings: Settings, query: str, limit: int | None = None,
              storage_options: Mapping[str, str] | None = None) -> QueryResult:
    """Answer one Spark SQL query over the warehouse with the embedded engine (``EmbeddedSqlError`` if not)."""
    return open_catalog(settings, storage_options).query(query, limit)


def query_view(settings: Settings, view: str, where: str | None = None, params: Mapping[str, Any] | None = None,
               order_by: str | None = None, limit: int | None = None,
               storage_options: Mapping[str, str] | None = None,
               catalog: EmbeddedCatalog | None = None) -> QueryResult:
    """Answer one dashboards view, filtered, without a JVM: for the HTML page and other Python callers.

    ``view``: the view's name, with or without ``dashboards.`` (``"rebalance_timeline"``).
    ``where``: a Spark SQL boolean expression over the view's columns, with named parameters ``:name``
    (quote ``group`` and ``partition`` with backticks); ``params`` gives each parameter its value
    (str, int, float, Decimal, bool, None, ``datetime`` — naive means UTC, aware is converted — or
    ``date``). Values are put into the query as literal nodes of the parsed tree, never pasted as text,
    so a value cannot change the query. A parameter without a value, or a value without a parameter,
    is an error. ``order_by``: a Spark SQL ORDER BY list. ``limit``: at most that many rows.
    ``catalog``: an :func:`open_catalog` to reuse (opening one reads every table's Delta log).

    Returns a ``QueryResult`` (``columns``, ``rows`` as tuples of Spark's Python types, ``truncated``).
    Raises ``EmbeddedSqlError`` (one line) for an unknown or unavailable view, a bad filter or a failed query.

    Example::

        result = query_view(settings, "rebalance_timeline",
                            where="`group` = :group AND stable_at >= :since",
                            params={"group": "billing", "since": datetime(2026, 11, 1)},
                            order_by="stable_at")
        rows = [dict(zip(result.columns, row)) for row in result.rows]
    """
    catalog = catalog or open_catalog(settings, storage_options)
    return catalog.query_view(view, where=where, params=params, order_by=order_by, limit=limit)
