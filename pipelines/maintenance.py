"""Delta maintenance of the warehouse: OPTIMIZE (compact small files), then VACUUM (delete unused ones).

Why it is needed: the ingest appends a few small files to every silver table per micro-batch and
each gold refresh rewrites the touched groups' files, so after a day of five-minute runs a table
is thousands of small Parquet files (slow to list and read) plus the files those rewrites
replaced (dead weight on disk). OPTIMIZE rewrites the live small files into few large ones;
VACUUM deletes files that left the table more than ``maintenance.vacuum_retention_hours`` ago.

OPTIMIZE keeps the incremental gold refresh correct: its commit marks both the removed and the
added files ``dataChange=false`` (the rows are the same), so it has no change data, and gold's query
over silver's change data feeds (``pipelines.gold.silver_changes``) passes over it: gold neither re-reads
the compacted rows nor falls back to a full rebuild. VACUUM's own commits (``VACUUM START``/``END``)
carry no file actions at all.

What VACUUM may break is a reader that is behind: gold's query reads what silver gained since its
last batch from silver's change data feed, i.e. from the files those versions added, so a file
compacted away and then vacuumed before gold catches up is gone. Delta's 168-hour minimum makes
that a week of gold not running; a shorter retention must be allowed explicitly
(``maintenance.allow_short_retention``), and the daily DAG refreshes gold first.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conf.settings import DELTA_SAFE_RETENTION_HOURS, Settings
from pipelines.delta_tables import table_path
from pipelines.storage import Storage
from schemas.table_spec import TableSpec

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"


class MaintenanceError(ValueError):
    """Maintenance cannot run as configured (one line, shown to the user as is)."""


@dataclass(frozen=True)
class TableMaintenance:
    """What OPTIMIZE and VACUUM did to one table."""

    table: str
    live_files_before: int  # data files in the table's current snapshot, before OPTIMIZE
    live_files_after: int  # ... and after it
    files_on_disk_before: int  # Parquet data files under the table's directory, before VACUUM
    files_on_disk_after: int  # ... and after it
    seconds: float

    @property
    def vacuumed(self) -> int:
        return self.files_on_disk_before - self.files_on_disk_after


def maintained_tables() -> tuple[TableSpec, ...]:
    """Every table of the warehouse: bronze, silver and gold."""
    from schemas.catalog import TABLES

    return tuple(TABLES.values())


def retention_hours(settings: Settings) -> int:
    """The configured VACUUM retention, refused below Delta's safety minimum unless explicitly allowed.

    ``conf.settings`` refuses it already when it loads a file; this check also covers Settings
    built in code.
    """
    hours = settings.maintenance.vacuum_retention_hours
    if hours < 0:
        raise MaintenanceError(f"maintenance.vacuum_retention_hours is {hours}; expected a number of hours >= 0")
    if hours < DELTA_SAFE_RETENTION_HOURS and not settings.maintenance.allow_short_retention:
        raise MaintenanceError(
            f"maintenance.vacuum_retention_hours is {hours}, below Delta's {DELTA_SAFE_RETENTION_HOURS}-hour "
            "safety check; set maintenance.allow_short_retention = true to allow it")
    return hours


def data_files_on_disk(storage: Storage, uri: str) -> int:
    """Parquet data files under a table directory, skipping ``_delta_log`` and other ``_``/``.`` entries.

    Those are the entries VACUUM itself leaves alone (Delta treats them as hidden). Listed through
    Hadoop's FileSystem (``pipelines.storage``): the table may be on any warehouse URI.
    """
    count = 0
    for entry in storage.list(uri):
        if entry.name.startswith(("_", ".")):
            continue
        if entry.is_dir:
            count += data_files_on_disk(storage, entry.uri)
        elif entry.name.endswith(".parquet"):
            count += 1
    return count


def maintain(spark: SparkSession, settings: Settings, tables: Iterable[TableSpec] | None = None,
             on_table: Callable[[TableMaintenance], None] = lambda result: None) -> list[TableMaintenance]:
    """OPTIMIZE then VACUUM every existing table of ``tables`` (default: the whole warehouse).

    Tables that do not exist yet are skipped, and so is the VACUUM of a table whose data files on
    disk are all live (it would delete nothing; each VACUUM costs Spark jobs and two log commits).
    One table at a time, so a failure names its table and leaves the others as they were or fully
    maintained (each OPTIMIZE and VACUUM is its own commit).
    """
    from delta.tables import DeltaTable

    hours = retention_hours(settings)
    storage = Storage(spark)
    results = []
    for spec in (maintained_tables() if tables is None else tables):
        path = table_path(settings, spec)
        if not DeltaTable.isDeltaTable(spark, path):
            continue
        started = time.monotonic()
        table = DeltaTable.forPath(spark, path)
        live_before = _live_files(table)
        live_after = live_before
        if live_before > 1:  # a single file has nothing to be compacted with
            try:
                metrics = table.optimize().executeCompaction().first()["metrics"]
            except Exception as exc:  # noqa: BLE001 - name the table in a one-line error
                raise MaintenanceError(f"OPTIMIZE of {spec.name} failed: {_first_line(exc)}") from exc
            live_after = live_before - metrics["numFilesRemoved"] + metrics["numFilesAdded"]
        on_disk_before = data_files_on_disk(storage, path)
        # Every data file on disk is live: nothing was removed or left behind, VACUUM would delete nothing.
        if on_disk_before != live_after:
            try:
                _vacuum(spark, table, hours)
            except Exception as exc:  # noqa: BLE001
                raise MaintenanceError(f"VACUUM of {spec.name} failed: {_first_line(exc)}") from exc
        result = TableMaintenance(spec.name, live_before, live_after, on_disk_before, data_files_on_disk(storage, path),
                                  time.monotonic() - started)
        on_table(result)
        results.append(result)
    return results


def _live_files(table) -> int:  # type: ignore[no-untyped-def]
    return int(table.detail().select("numFiles").first()[0])


def _vacuum(spark: SparkSession, table, hours: int) -> None:  # type: ignore[no-untyped-def]
    """VACUUM with ``hours``; below the safety minimum (already allowed by the settings) the check is off."""
    if hours >= DELTA_SAFE_RETENTION_HOURS:
        table.vacuum(float(hours))
        return
    previous = spark.conf.get(RETENTION_CHECK, "true")
    spark.conf.set(RETENTION_CHECK, "false")
    try:
        table.vacuum(float(hours))
    finally:
        spark.conf.set(RETENTION_CHECK, previous)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
