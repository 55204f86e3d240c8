"""Read the dashboard's tables and views as rows: through delta-rs (no JVM), or through Spark when delta-rs cannot.

delta-rs (``deltalake``) reads a table in a fraction of a second where a SparkSession takes many
seconds to start; tables are read through its DataFusion engine, which applies the deletion vectors
of the MERGE targets (its pyarrow path refuses them). A table delta-rs refuses (a reader feature it
lacks) is read with Spark instead; the report says which engine read which table.

Where a ``dashboards.*`` view (``pipelines/sql_views/``) answers what the page shows, the page reads the
view, not the tables it is computed from: with delta-rs's embedded DataFusion engine
(``pipelines.embedded_sql``, one ``open_catalog`` per page build), or with Spark for ``--engine spark``
and, under ``auto``, when the embedded engine cannot answer it (a table delta-rs refuses). A view whose
tables are not in the warehouse yet is left out and reported (``ReadReport.unavailable_views``).

Both readers return ``{column: value}`` dicts with timestamps as epoch milliseconds (UTC), so that
``dashboard/data.py`` never sees engine-specific types.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from conf.settings import Settings
from pipelines.delta_tables import table_exists, table_path
from schemas.catalog import TABLES

if TYPE_CHECKING:
    from pipelines.embedded_sql import EmbeddedCatalog

Row = dict[str, Any]
ENGINES = ("auto", "delta-rs", "spark")


@dataclass
class ReadReport:
    """Which engine read each table and view, how long reading took, why delta-rs was passed over, if it was,
    and why a view could not be read at all (``unavailable_views``: a table it reads is not there yet)."""

    engines: dict[str, str] = field(default_factory=dict)
    fallbacks: dict[str, str] = field(default_factory=dict)
    unavailable_views: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


Filter = str
"""A row filter pushed down to the reader: the name of a boolean column, keeping the rows where it is true.

It becomes ``WHERE "is_tombstone"`` in the DataFusion query ``read_with_delta_rs`` runs.
"""


def read_with_delta_rs(settings: Settings, name: str, columns: tuple[str, ...],
                       filters: tuple[Filter, ...] = (), groups: Collection[str] | None = None) -> list[Row]:
    """The table's ``columns`` (those it has) through delta-rs's DataFusion engine (``deltalake.QueryBuilder``).

    Not ``DeltaTable.to_pyarrow_table``: in deltalake 1.6.6 that path refuses tables with deletion vectors
    (its reader-feature check is narrower than DataFusion's), which the MERGE targets gold.committed_offsets
    and gold.offset_commit_rate have (pipelines/gold/committed_offsets.py); DataFusion applies them (a
    deleted row is not returned).
    ``groups``: only these groups' rows (``WHERE "group" IN (...)``, pushed down to the scan: files whose
    statistics rule the groups out are not read).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    delta = _delta_table(settings, name)
    present = {f.name for f in delta.schema().fields}
    wanted = [c for c in columns if c in present]

    def quoted(column: str) -> str:
        return '"' + column.replace('"', '""') + '"'

    conditions = [quoted(column) for column in filters]
    if groups is not None:
        conditions.append(group_condition(groups))
    where = " AND ".join(conditions)
    sql = f"SELECT {', '.join(map(quoted, wanted)) or '*'} FROM t" + (f" WHERE {where}" if where else "")
    table = _datafusion(delta, sql)
    for index, column in enumerate(table.schema):
        if pa.types.is_timestamp(column.type):
            millis = pc.cast(pc.cast(table.column(index), pa.timestamp("ms", tz="UTC")), pa.int64())
            table = table.set_column(index, column.name, millis)
    return table.to_pylist()


def _delta_table(settings: Settings, name: str) -> Any:
    from deltalake import DeltaTable

    return DeltaTable(table_path(settings, TABLES[name]), storage_options=dict(settings.storage.delta_rs) or None)


def _datafusion(delta: Any, sql: str) -> Any:
    """``sql`` over ``delta`` registered as ``t``, through delta-rs's DataFusion engine, as a pyarrow Table."""
    import pyarrow as pa
    from deltalake import QueryBuilder

    return pa.RecordBatchReader.from_stream(QueryBuilder().register("t", delta).execute(sql)).read_all()


def group_condition(groups: Collection[str]) -> str:
    """``"group" IN ('a', 'b')`` in DataFusion's SQL, quotes doubled; no group at all matches no row."""
    if not groups:
        return "FALSE"
    return '"group" IN (' + ", ".join("'" + g.replace("'", "''") + "'" for g in sorted(groups)) + ")"


def read_with_spark(spark: Any, settings: Settings, name: str, columns: tuple[str, ...],
                    filters: tuple[Filter, ...] = (), groups: Collection[str] | None = None) -> list[Row]:
    from pyspark.sql import functions as F

    from pipelines.delta_tables import read_table

    frame = read_table(spark, settings, TABLES[name])
    for column in filters:
        frame = frame.where(F.col(column))
    if groups is not None:
        frame = frame.where(F.col("group").isin(sorted(groups)))
    return _collect_with_millis(frame, columns)


def _collect_with_millis(frame: Any, columns: tuple[str, ...] | None = None) -> list[Row]:
    """A DataFrame's rows (``columns``, or all) as dicts, timestamps as epoch milliseconds."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    types = {f.name: f.dataType for f in frame.schema.fields}
    columns = tuple(types) if columns is None else columns
    selected = [F.unix_millis(F.col(c)).alias(c) if isinstance(types[c], T.TimestampType) else F.col(c)
                for c in columns if c in types]
    return [row.asDict(recursive=True) for row in frame.select(*selected).collect()]


def _millis(value: Any) -> Any:
    """A naive UTC ``datetime`` (the embedded engine's timestamps) as epoch milliseconds; others unchanged."""
    if isinstance(value, dt.datetime):
        return (value - _EPOCH) // dt.timedelta(milliseconds=1)
    return value


_EPOCH = dt.datetime(1970, 1, 1)


def read_view_with_delta_rs(catalog: EmbeddedCatalog, view: str) -> list[Row]:
    result = catalog.query_view(view)
    return [{c: _millis(v) for c, v in zip(result.columns, row, strict=True)} for row in result.rows]


def read_view_with_spark(spark: Any, view: str) -> list[Row]:
    """Every row of a view registered in ``spark``'s catalog (``pipelines.sql_views.register_catalog``)."""
    return _collect_with_millis(spark.table(view))


def read_tables(settings: Settings, wanted: dict[str, tuple[str, ...]], engine: str = "auto",
                spark_factory: Callable[[], Any] | None = None,
                filters: dict[str, tuple[Filter, ...]] | None = None,
                views: tuple[str, ...] = (), groups: Collection[str] | None = None,
                report: ReadReport | None = None) -> tuple[dict[str, list[Row]], ReadReport]:
    """Rows of each wanted table that exists in the warehouse (absent ones are left out of the result),
    and every row of each of ``views`` (``dashboards.<name>``) whose tables exist, under the view's name.

    ``filters``: per table, boolean columns whose true rows are the only ones read, pushed down by both
    engines (e.g. only the tombstones of a table of every commit). ``groups``: only these groups' rows of every
    wanted table (not of the views). ``report``: add to this report (a page read in two rounds).

    ``engine``: ``delta-rs`` (fail if it cannot), ``spark``, or ``auto`` (delta-rs, Spark per table
    when delta-rs refuses it). ``spark_factory`` builds the SparkSession only if one is needed.
    """
    started = time.monotonic()
    report = report if report is not None else ReadReport()
    session = _LazySession(settings, spark_factory)
    tables = _each_table(
        settings, wanted, engine, session, report,
        lambda name: read_with_delta_rs(settings, name, wanted[name], (filters or {}).get(name, ()), groups),
        lambda spark, name: read_with_spark(spark, settings, name, wanted[name], (filters or {}).get(name, ()),
                                            groups))
    if views:
        _read_views(settings, views, engine, session, tables, report)
    report.seconds += time.monotonic() - started
    return tables, report


class _LazySession:
    """The SparkSession, built only when a table or view needs it (``spark_factory``, else the settings')."""

    def __init__(self, settings: Settings, spark_factory: Callable[[], Any] | None) -> None:
        self._settings, self._factory, self._spark = settings, spark_factory, None

    def __call__(self) -> Any:
        if self._spark is None:
            if self._factory is None:
                from pipelines.spark_session import build_spark_session

                self._spark = build_spark_session(self._settings)
            else:
                self._spark = self._factory()
        return self._spark


def _each_table(settings: Settings, names: Collection[str], engine: str, session: _LazySession, report: ReadReport,
                by_delta_rs: Callable[[str], list[Row]], by_spark: Callable[[Any, str], list[Row]],
                ) -> dict[str, list[Row]]:
    """Each existing table of ``names`` read by delta-rs, or by Spark under ``engine`` (see ``read_tables``)."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    out: dict[str, list[Row]] = {}
    for name in names:
        if not table_exists(settings, TABLES[name]):
            continue
        if engine in ("auto", "delta-rs"):
            try:
                out[name] = by_delta_rs(name)
                report.engines[name] = "delta-rs"
                continue
            except Exception as exc:  # noqa: BLE001 - e.g. DeltaProtocolError: an unsupported reader feature
                if engine == "delta-rs":
                    raise
                report.fallbacks[name] = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        out[name] = by_spark(session(), name)
        report.engines[name] = "spark"
    return out


def count_rows_by_group(settings: Settings, names: Collection[str], engine: str = "auto",
                       spark_factory: Callable[[], Any] | None = None,
                       groups: Collection[str] | None = None) -> dict[tuple[str, str], int]:
    """Rows per (cluster, group) in all of ``names``' tables that exist: what charting each group would read.

    Two columns scanned and one row per group returned, where reading the rows themselves would bring millions
    into Python at 10,000 groups. The engine is chosen per table as ``read_tables`` chooses it."""
    where = f" WHERE {group_condition(groups)}" if groups is not None else ""
    sql = f'SELECT "cluster_name", "group", count(*) AS n FROM t{where} GROUP BY "cluster_name", "group"'

    def by_spark(spark: Any, name: str) -> list[Row]:
        from pyspark.sql import functions as F

        from pipelines.delta_tables import read_table

        frame = read_table(spark, settings, TABLES[name])
        if groups is not None:
            frame = frame.where(F.col("group").isin(sorted(groups)))
        return [r.asDict() for r in frame.groupBy("cluster_name", "group").agg(F.count("*").alias("n")).collect()]

    counted = _each_table(settings, names, engine, _LazySession(settings, spark_factory), ReadReport(),
                          lambda name: _datafusion(_delta_table(settings, name), sql).to_pylist(), by_spark)
    counts: dict[tuple[str, str], int] = {}
    for rows in counted.values():
        for r in rows:
            key = (r["cluster_name"], r["group"])
            counts[key] = counts.get(key, 0) + int(r["n"])
    return counts


def _read_views(settings: Settings, views: tuple[str, ...], engine: str, session: Callable[[], Any],
                out: dict[str, list[Row]], report: ReadReport) -> None:
    """Each view's rows into ``out``: embedded engine first (one catalog for all), Spark as for the tables."""
    from pipelines.embedded_sql import EmbeddedSqlError, open_catalog
    from pipelines.sql_views import load_views, register_catalog

    reads = {spec.name: spec.reads for spec in load_views()}
    catalog = open_catalog(settings) if engine in ("auto", "delta-rs") else None
    spark_catalog = None
    for view in views:
        if catalog is not None:
            absent = [t for t in reads[view] if t in catalog.report.missing_tables]
            if absent:
                report.unavailable_views[view] = f"needs {', '.join(absent)}, not in this warehouse yet"
                continue
            try:
                out[view] = read_view_with_delta_rs(catalog, view)
                report.engines[view] = "delta-rs"
                continue
            except EmbeddedSqlError as exc:  # e.g. a table delta-rs refuses: the view is not in its catalog
                if engine == "delta-rs":
                    raise
                report.fallbacks[view] = str(exc)
        if spark_catalog is None:
            spark_catalog = register_catalog(session(), settings)
        if view not in spark_catalog.views:
            report.unavailable_views[view] = spark_catalog.skipped_views.get(view, "not registered")
            continue
        out[view] = read_view_with_spark(session(), view)
        report.engines[view] = "spark"
