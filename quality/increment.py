"""What ``offsetlake check`` has not judged yet: the increment since its last run, per rule scope.

Cross-row rules run on the increment: a check of the whole warehouse scans every table (minutes and gigabytes
of Spark JVM at 10,000 groups, bench/scale.py; recorded in CHANGELOG.md), and a scheduled check after each
`run --once` needs only what changed since the previous check. Each rule says what it must see to judge a row
(``quality.suite.Scope``): the row alone (ROW), every row of the row's group (GROUP: a window or a join within a
group), or the whole table (TABLE: an aggregate over it). The increment is then:

* the groups touched since the last check: the groups of every row silver's group and commit tables gained since
  then, read from their change data feeds (the same feeds gold's refresh reads, ``pipelines.gold.silver_changes``).
  Gold is derived from silver only, so a gold row changes only for such a group: a GROUP rule reads those groups'
  rows of its table and of each table it needs (silver as gold last saw it included), whole;
* new rows: what a table with a change data feed gained (inserts) and gold.consumer_lag's new snapshots (the table
  is append-only by snapshot); a ROW rule on another table (the gold tables, rewritten per group) reads the rows of
  the touched groups instead;
* a TABLE rule reads its tables whole (the quarantine rate: two counts).

Where the increment cannot be told, the check reads every table whole and says why: no earlier check recorded
its versions (the first run), a table is new since, silver changed otherwise than by appends (a retention DELETE:
its change data feed holds other change types), or a gold table was rewritten whole (a rebuild: an overwrite
without a predicate, a RESTORE, ...; its history says so). ``offsetlake check --full`` asks for it.

What the previous run checked is recorded in the Delta commit that appends its results to
audit.data_quality_results (``userMetadata``, ``recorded``): each table's version the run read, and the silver
versions gold then reflected (gold's rows of a group change after silver gains the group's rows, possibly after
the check that saw those silver rows). Read back through Delta's history API (``last_checked``).

Known limit: a KIP-848 group whose gold assignments gain a topic name later (a snapshot names a topic id) changes
without a silver row of its own; no GROUP rule reads KIP-848 topic names, so nothing is missed by the rules there
are, but a new rule that does would need ``--full``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines.delta_tables import newest_version, read_version, table_exists, table_path, user_metadata_entry
from schemas import consumer_group_records, group_members, group_metadata, offset_commits
from schemas.catalog import TABLES
from schemas.table_spec import CHANGE_DATA_FEED, TableSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: The silver tables whose new rows name the groups touched since the last check (what gold is derived from).
GROUP_SOURCES: tuple[TableSpec, ...] = (offset_commits.TABLE, group_metadata.TABLE, group_members.TABLE,
                                        consumer_group_records.TABLE)
#: Key of the record in audit.data_quality_results' commits (``userMetadata``).
USER_METADATA_KEY = "offsetlake.checked"
LAG_TABLE = "gold.consumer_lag"
#: Delta operations that leave a gold table's rows of untouched groups as they were (the refresh's MERGEs and
#: per-group replaceWhere writes, appends, and maintenance); anything else since the last check reads it whole.
KEEPS_UNTOUCHED_GROUPS = {"MERGE", "WRITE", "STREAMING UPDATE", "OPTIMIZE", "SET TBLPROPERTIES", "ADD CONSTRAINT",
                          "CLUSTER BY", "VACUUM START", "VACUUM END"}


def group_column(spec: TableSpec) -> str:
    """The column holding a table's consumer group id."""
    return "group_id" if spec is consumer_group_records.TABLE else "group"


def has_change_feed(spec: TableSpec) -> bool:
    return CHANGE_DATA_FEED in spec.properties


@dataclass(frozen=True)
class Checked:
    """What one check run read: each table's Delta version, the silver versions gold reflected, and the newest
    gold.consumer_lag snapshot."""

    versions: dict[str, int]
    gold_reflected: dict[str, int] = field(default_factory=dict)
    lag_snapshot: int | None = None

    def user_metadata(self, cluster: str) -> str:
        return json.dumps({USER_METADATA_KEY: {"cluster": cluster, "versions": self.versions,
                                               "gold_reflected": self.gold_reflected,
                                               "lag_snapshot": self.lag_snapshot}}, sort_keys=True)

    @staticmethod
    def parse(user_metadata: str | None, cluster: str) -> Checked | None:
        found = user_metadata_entry(user_metadata, USER_METADATA_KEY)
        if not isinstance(found, dict) or found.get("cluster") != cluster:
            return None
        lag = found.get("lag_snapshot")
        return Checked({str(k): int(v) for k, v in (found.get("versions") or {}).items()},
                       {str(k): int(v) for k, v in (found.get("gold_reflected") or {}).items()},
                       None if lag is None else int(lag))


@dataclass(frozen=True)
class Increment:
    """The rows a check of the increment reads (``frames``), or why it reads whole tables (``whole_because``)."""

    checked: Checked  # what this run reads: recorded with its results
    previous: Checked | None
    whole_because: str | None  # None: the increment
    groups: tuple[tuple[str, str], ...] = ()  # (cluster_name, group) touched since the previous check
    new_rows: int = 0  # rows of tables with a change data feed, and new lag rows, since the previous check

    def describe(self) -> str:
        if self.whole_because is not None:
            return f"whole tables ({self.whole_because})"
        return f"the increment since the last check: {len(self.groups):,} groups touched, {self.new_rows:,} new rows"


def last_checked(spark: SparkSession, settings: Settings, depth: int = 200) -> Checked | None:
    """What the newest check of this cluster that recorded it read (None: none did, within the last ``depth``
    commits of audit.data_quality_results)."""
    from delta.tables import DeltaTable

    spec = TABLES["audit.data_quality_results"]
    if not table_exists(settings, spec):
        return None
    history = DeltaTable.forPath(spark, table_path(settings, spec)).history(depth)
    for row in history.select("version", "userMetadata").orderBy("version", ascending=False).collect():
        found = Checked.parse(row["userMetadata"], settings.cluster_name)
        if found is not None:
            return found
    return None


def current(spark: SparkSession, settings: Settings, tables: list[str]) -> Checked:
    """The versions a check reads now: each existing table's newest, gold's reflected silver versions, the newest
    lag snapshot."""
    from pyspark.sql import functions as F

    from pipelines.gold.refresh import reflected_silver_versions

    versions = {name: newest_version(settings, TABLES[name]) for name in tables}  # ~15 tables: no Spark job
    lag = None
    if LAG_TABLE in versions:
        lag = read_version(spark, settings, TABLES[LAG_TABLE], versions[LAG_TABLE]).filter(
            F.col("cluster_name") == settings.cluster_name).agg(F.max("snapshot_id")).first()[0]
    return Checked(versions, reflected_silver_versions(spark, settings), None if lag is None else int(lag))


def find_increment(spark: SparkSession, settings: Settings, tables: list[str], full: bool) -> Increment:
    """The increment of ``tables`` (every table the check reads) since the last recorded check."""
    from pyspark.sql import functions as F

    now = current(spark, settings, tables)
    previous = None if full else last_checked(spark, settings)
    if full:
        return Increment(now, previous, "--full")
    if previous is None:
        return Increment(now, None, "no earlier check recorded what it read")
    new = sorted(set(now.versions) - set(previous.versions))
    if new:
        return Increment(now, previous, f"{', '.join(new)} not read by the last check")
    rewritten = [name for name in now.versions if not has_change_feed(TABLES[name])
                 and _rewritten(spark, settings, name, previous.versions[name], now.versions[name])]
    if rewritten:
        return Increment(now, previous, f"{', '.join(rewritten)} rewritten since the last check")
    from pipelines.gold.refresh import GOLD

    refreshed = any(spec.name in now.versions for spec in GOLD)  # else no rule reads gold: silver's versions do
    unreflected = [spec.name for spec in GROUP_SOURCES
                   if spec.name in now.versions and spec.name not in previous.gold_reflected]
    if refreshed and unreflected:
        return Increment(now, previous, f"gold had not been refreshed from {', '.join(unreflected)} at the last check")
    groups: set[tuple[str, str]] = set()
    new_rows = 0
    for name, version in now.versions.items():
        spec = TABLES[name]
        if not has_change_feed(spec):
            continue
        # A group source is read from the older of the versions the last check read and gold then reflected (gold's
        # rows of a group change after silver gains them); its rows after the former are the new rows.
        since = previous.versions[name]
        if spec in GROUP_SOURCES:
            since = min(since, previous.gold_reflected.get(name, since))
        if since >= version:
            continue
        changes = changes_between(spark, settings, spec, since, version)
        new = (F.col("_commit_version") > previous.versions[name]).cast("long")
        keys = ["_change_type", *(["cluster_name", group_column(spec)] if spec in GROUP_SOURCES else [])]
        try:  # one job per table: its change types, its groups and its new rows
            summary = changes.groupBy(*keys).agg(F.sum(new).alias("new")).collect()
        except Exception as exc:  # noqa: BLE001 - versions from before its change data feed, files VACUUM removed
            return Increment(now, previous, _unreadable(name, since, exc))
        others = sorted({row["_change_type"] for row in summary} - {"insert"})
        if others and spec in GROUP_SOURCES:
            return Increment(now, previous, f"{name} changed otherwise than by appends ({', '.join(others)})")
        new_rows += sum(int(row["new"] or 0) for row in summary if row["_change_type"] == "insert")
        if spec in GROUP_SOURCES:
            groups |= {(row["cluster_name"], row[group_column(spec)]) for row in summary}
    if now.lag_snapshot is not None and now.lag_snapshot != previous.lag_snapshot:
        new_rows += new_lag_rows(spark, settings, now, previous).count()
    return Increment(now, previous, None, tuple(sorted(groups)), new_rows)


def _unreadable(name: str, after: int, exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"{name}'s change data feed cannot be read after version {after} ({first[:160]})"


def changes_between(spark: SparkSession, settings: Settings, spec: TableSpec, after: int, until: int) -> DataFrame:
    """The table's change data feed after version ``after`` up to ``until`` (with ``_change_type``,
    ``_commit_version``)."""
    return (spark.read.format("delta").option("readChangeFeed", "true").option("startingVersion", after + 1)
            .option("endingVersion", until).load(table_path(settings, spec)))


def new_lag_rows(spark: SparkSession, settings: Settings, now: Checked, previous: Checked) -> DataFrame:
    from pyspark.sql import functions as F

    rows = read_version(spark, settings, TABLES[LAG_TABLE], now.versions[LAG_TABLE]).filter(
        F.col("cluster_name") == settings.cluster_name)
    return rows if previous.lag_snapshot is None else rows.filter(F.col("snapshot_id") > previous.lag_snapshot)


def _rewritten(spark: SparkSession, settings: Settings, name: str, after: int, until: int) -> bool:
    """Whether a table without a change data feed had, after version ``after``, a commit that may have changed rows
    of groups no silver row touched: anything but the refresh's MERGEs, per-group overwrites and appends (for
    gold.consumer_lag, appends only: its --full rebuild overwrites by cluster)."""
    from delta.tables import DeltaTable

    if until == after:
        return False
    if until < after:
        return True  # made anew since (its versions restarted)
    history = DeltaTable.forPath(spark, table_path(settings, TABLES[name])).history(until - after + 1)
    for row in history.filter(f"version > {after}").select("operation", "operationParameters").collect():
        operation, parameters = row["operation"], row["operationParameters"] or {}
        if operation not in KEEPS_UNTOUCHED_GROUPS:
            return True
        if operation == "WRITE" and parameters.get("mode") == "Overwrite" and (
                name == LAG_TABLE or parameters.get("predicate") in (None, "", "[]")):
            return True
    return False


