"""``offsetlake maintain``: OPTIMIZE then VACUUM every Delta table of the warehouse."""

from __future__ import annotations

import argparse
import sys

from cli.errors import CommandError
from cli.settings_arg import settings_from


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "maintain", help="compact (OPTIMIZE) and clean up (VACUUM) every Delta table of the warehouse",
        description=(
            "For every existing table of the warehouse (bronze, silver, gold), one at a time: OPTIMIZE "
            "rewrites its small data files into few large ones (same rows; the commit is marked "
            "dataChange=false, so the incremental gold refresh does not treat it as new data), then VACUUM "
            "deletes the data files that left the table at least maintenance.vacuum_retention_hours ago "
            "(default 168, Delta's safety minimum; fewer only with maintenance.allow_short_retention = true). "
            "Prints, per table, its live files before and after OPTIMIZE and its Parquet files on disk before "
            "and after VACUUM. Run it daily, e.g. from the delta_maintenance DAG."
        ),
        epilog="Example: OFFSETLAKE_MAINTENANCE__VACUUM_RETENTION_HOURS=336 offsetlake maintain",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    from pipelines.maintenance import MaintenanceError, TableMaintenance, maintain, retention_hours
    from pipelines.spark_session import build_spark_session

    try:
        hours = retention_hours(settings)
    except MaintenanceError as exc:
        raise CommandError(str(exc)) from exc
    print(f"{'table':<36} {'live files':>18} {'files on disk':>18} {'seconds':>8}")

    def report(result: TableMaintenance) -> None:
        print(f"{result.table:<36} {result.live_files_before:>8} -> {result.live_files_after:<7} "
              f"{result.files_on_disk_before:>8} -> {result.files_on_disk_after:<7} {result.seconds:>8.1f}",
              flush=True)

    spark = build_spark_session(settings)
    try:
        results = maintain(spark, settings, on_table=report)
    except MaintenanceError as exc:
        raise CommandError(str(exc)) from exc
    finally:
        spark.stop()
    print(f"maintain: {len(results)} tables in {settings.warehouse_uri} optimized and vacuumed "
          f"(retention {hours} h): {sum(r.live_files_before - r.live_files_after for r in results)} live files "
          f"compacted away, {sum(r.vacuumed for r in results)} files deleted", file=sys.stderr)
    return 0
