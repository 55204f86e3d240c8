"""``offsetlake gold``: refresh the gold tables from silver and print their row counts."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from cli.errors import CommandError, first_line
from cli.settings_arg import settings_from
from cli.writer_lease import writer_lease_held

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from conf.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gold", help="refresh the gold tables (generations, members, assignments, rebalances, offsets) from silver, "
             "for classic and KIP-848 groups",
        description=(
            "Bring the gold tables up to date with silver: gold.committed_offsets, gold.offset_commit_rate, "
            "gold.group_generations, gold.group_membership, gold.partition_assignments, "
            "gold.group_state_history and gold.rebalance_events. The group tables cover classic groups "
            "(GroupMetadata records) and KIP-848 consumer groups (group.protocol=consumer; column group_type "
            "tells them apart): for those, one generation per group epoch, members with their member epochs, "
            "current and target assignments and partitions pending revocation, and the states Assigning, "
            "Reconciling, Stable, Empty and Dead derived from the epochs. Only silver rows added since the last "
            "refresh are read (a Structured Streaming query over silver's change data feeds, its checkpoint "
            "under <warehouse>/_checkpoints/gold; delete a gold table to have gold rebuilt) and only the "
            "groups they touch are replayed from their records; running it again with nothing new writes "
            "nothing. Run `offsetlake ingest` first. The storm flag of gold.rebalance_events is set by the "
            "[gold] settings "
            "storm_rebalances and storm_window_minutes. KIP-848 records name topics by id: the names come from "
            "offset commits and group records that carry both, and from the end-offset snapshots "
            "('offsetlake snapshot-end-offsets' records each topic's id); the cluster is never asked, so a "
            "rebuild gives the same rows. An id nothing names yet keeps a null topic until a snapshot names it. "
            "Prints each gold table's row count."
        ),
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pipelines.spark_session import build_spark_session

    settings = settings_from(args)
    with writer_lease_held(settings, "gold"):
        spark = build_spark_session(settings)
        try:
            refresh_and_print(spark, settings)
        finally:
            spark.stop()
    return 0


def refresh_and_print(spark: SparkSession, settings: Settings) -> None:
    """Refresh gold; print each table's row count (stdout) and one summary line (stderr).

    Shared with ``offsetlake run``; a Spark/Delta failure becomes one line (exit 1).
    """
    from pipelines.gold.refresh import refresh_gold

    try:
        counts = refresh_gold(spark, settings)
    except Exception as exc:  # noqa: BLE001 - Spark/Delta failures become one line
        raise CommandError(f"gold refresh failed: {first_line(exc)}") from exc
    for table, rows in counts.items():
        print(f"{table}\t{rows}")
    print(f"gold: refreshed {len(counts)} tables in {settings.warehouse_uri}", file=sys.stderr, flush=True)
