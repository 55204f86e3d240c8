"""Refresh every gold table from silver, incrementally and idempotently.

How it stays incremental: a Structured Streaming query reads what the silver tables gain from their
change data feeds (``pipelines.gold.silver_changes``), and its checkpoint -- the engine's bookkeeping,
not offsetlake's -- records how far it has read. Each micro-batch (``apply_changes``), one step after the other:

1. ``committed_offsets`` (the table commit freshness is measured on): MERGEs the newest record per key, applied
   only when newer than the row there (so re-applying a record changes nothing), tombstones deleting;
2. the group tables (rebalance events, generations, membership, assignments, state history, streams task
   assignments and topology): the groups that gained records (GroupMetadata records and members of classic
   groups, records of KIP-848 consumer, share and streams groups) are replayed
   from all of their records (``pipelines.gold.group_history``, the replay itself in ``history/``), and exactly
   those groups' rows replaced (one ``replaceWhere`` overwrite per table, atomic). KIP-848 topic ids keep the
   names the groups' own records give; the others are joined at read (``dashboards.topic_names``), so a name that
   arrives late changes no gold row;
3. ``offset_commit_rate``: recounts only the minutes that got new commits, from the silver partitions
   (``commit_date``) of those commits, and MERGEs them.

A batch that dies half-way is run again over the same rows after a restart and converges to the same
result (every step above is idempotent); with nothing new, no batch runs and nothing is written. If silver did more than
append (e.g. a retention delete; OPTIMIZE changes no rows and has no change data), gold is rebuilt from the
whole of silver instead, the query started afresh. A query without a checkpoint,
or a gold table missing, starts with a rebuild from silver at pinned versions (``bootstrap``).

Every gold commit of a refresh records the silver versions gold then reflects (``userMetadata``, ``recorded``,
``reflected_silver_versions``): ``check`` compares gold with silver as of those versions.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines.checkpoints import run_to_available
from pipelines.delta_tables import (  # latest_version: also found here by tests and benches
    LayoutChanged,
    ensure_current_table,
    ensure_table,
    latest_version,
    read_table,
    read_version,
    table_exists,
    table_path,
    user_metadata_entry,
)
from pipelines.gold.committed_offsets import TABLE as COMMITTED_OFFSETS
from pipelines.gold.group_generations import TABLE as GROUP_GENERATIONS
from pipelines.gold.group_history import MODERN_TYPES
from pipelines.gold.group_membership import TABLE as GROUP_MEMBERSHIP
from pipelines.gold.group_state_history import TABLE as GROUP_STATE_HISTORY
from pipelines.gold.offset_commit_rate import TABLE as OFFSET_COMMIT_RATE
from pipelines.gold.partition_assignments import TABLE as PARTITION_ASSIGNMENTS
from pipelines.gold.rebalance_events import TABLE as REBALANCE_EVENTS
from pipelines.gold.silver_changes import SOURCE_TABLE, SOURCES, column_of
from pipelines.gold.streams_task_assignments import TABLE as STREAMS_TASK_ASSIGNMENTS
from pipelines.gold.streams_topology import TABLE as STREAMS_TOPOLOGY
from pipelines.storage import Storage
from schemas import consumer_group_records, group_members, group_metadata, offset_commits
from schemas.table_spec import Incremental, TableSpec

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

GOLD: tuple[TableSpec, ...] = (COMMITTED_OFFSETS, OFFSET_COMMIT_RATE, GROUP_GENERATIONS, GROUP_MEMBERSHIP,
                                PARTITION_ASSIGNMENTS, GROUP_STATE_HISTORY, REBALANCE_EVENTS, STREAMS_TASK_ASSIGNMENTS,
                                STREAMS_TOPOLOGY)
"""The gold tables a refresh writes, each by the strategy its module declares (``TableSpec.incremental``)."""
GROUP_TABLES: tuple[TableSpec, ...] = (REBALANCE_EVENTS, *(
    spec for spec in GOLD if spec.incremental is Incremental.REPLACE_TOUCHED_GROUPS and spec is not REBALANCE_EVENTS))
"""Recomputed for the groups with new records (``group_tables``) and replaced by group (``replace_groups``), in this
order: gold.rebalance_events first, the table asked "why did this group rebalance"."""


def ensure_gold_tables(spark: SparkSession, settings: Settings) -> list[TableSpec]:
    """Create the missing gold tables and bring those an older offsetlake made up to their specs
    (``ensure_current_table``); return the tables it could not: partitioned otherwise (``LayoutChanged``), left as
    they are.

    Every gold table gained columns (KIP-848 groups), properties (deletion vectors) or clustering since its first
    release, and gold.offset_commit_rate a partitioning.
    """
    outdated = []
    for spec in GOLD:
        try:
            ensure_current_table(spark, settings, spec, same_partitioning=True)
        except LayoutChanged:
            outdated.append(spec)
    return outdated


def full_rebuild(spark: SparkSession, settings: Settings, silver: dict[str, DataFrame] | None = None
                 ) -> dict[str, DataFrame]:
    """Every gold table computed from all of silver, without writing: the reference for incremental runs.

    ``silver``: the silver tables' rows to build from (table name -> rows, e.g. ``pipelines.silver.
    tables_from_bronze``: gold rebuilt from bronze); None: the tables as the ingest wrote them.
    """
    from pipelines.gold.committed_offsets import committed_offsets
    from pipelines.gold.group_history import group_tables
    from pipelines.gold.offset_commit_rate import offset_commit_rate

    def rows(spec: TableSpec) -> DataFrame:
        return silver[spec.name] if silver is not None else read_table(spark, settings, spec)

    commits = rows(offset_commits.TABLE)
    frames = group_tables(rows(group_metadata.TABLE), rows(group_members.TABLE), rows(consumer_group_records.TABLE),
                          commits, settings, GROUP_TABLES)
    return {COMMITTED_OFFSETS.name: committed_offsets(commits),
            OFFSET_COMMIT_RATE.name: offset_commit_rate(commits), **frames}


def rebuild_differences(spark: SparkSession, settings: Settings, silver: dict[str, DataFrame] | None = None
                        ) -> dict[str, tuple[int, int]]:
    """Each table of ``GOLD`` -> (rows only in the table, rows only in ``full_rebuild``'s frame of it).

    (0, 0) everywhere means gold as the refreshes left it is gold rebuilt from all of silver -- or from the
    given ``silver`` rows, e.g. silver derived again from bronze's raw records (``pipelines.silver.
    tables_from_bronze``: what ``run`` keeps current must equal a rebuild from bronze).
    Rows are compared as multisets, every column (``row_differences``). gold.consumer_lag is not in ``GOLD``:
    it is built from the end-offset snapshots and the commits by its own refresh.
    """
    rebuilt = full_rebuild(spark, settings, silver)
    return {spec.name: row_differences(read_table(spark, settings, spec), rebuilt[spec.name],
                                       spec.schema.fieldNames()) for spec in GOLD}


def row_differences(left: DataFrame, right: DataFrame, columns: list[str]) -> tuple[int, int]:
    """(rows of ``left`` not in ``right``, rows of ``right`` not in ``left``) over ``columns``, as multisets.

    What ``left.exceptAll(right).count()`` and the reverse give, in one job: each distinct row counted on
    both sides at once. Two exceptAlls run each side's plan twice, and a full rebuild's is the expensive one.
    """
    from pyspark.sql import functions as F

    side = "_offsetlake_side"
    both = left.select(*columns, F.lit(1).alias(side)).unionByName(right.select(*columns, F.lit(-1).alias(side)))
    surplus = both.groupBy(*columns).agg(F.sum(side).alias("surplus"))
    [row] = surplus.agg(F.sum(F.greatest("surplus", F.lit(0))).alias("left"),
                        F.sum(F.greatest(-F.col("surplus"), F.lit(0))).alias("right")).collect()
    return int(row["left"] or 0), int(row["right"] or 0)


def refresh_gold(spark: SparkSession, settings: Settings,
                 on_written: Callable[[tuple[str, ...]], None] = lambda tables: None) -> dict[str, int]:
    """Bring every gold table up to date with silver; return each gold table's row count.

    ``on_written``: as for ``refresh_gold_tables``."""
    refresh_gold_tables(spark, settings, on_written)
    return {spec.name: read_table(spark, settings, spec).count() for spec in GOLD}


def refresh_gold_tables(spark: SparkSession, settings: Settings,
                        on_written: Callable[[tuple[str, ...]], None] = lambda tables: None) -> tuple[str, ...]:
    """Bring every gold table up to date with silver; return the names of the gold tables written.

    Runs the gold query (``pipelines.gold.silver_changes``) until it has applied everything silver holds
    (``Trigger.AvailableNow``), each micro-batch by ``apply_changes``; first, when the query has no
    checkpoint yet or a gold table is missing, rebuilds gold from all of silver (``bootstrap``).

    ``refresh_gold`` without the closing row counts (seven count jobs): ``offsetlake run`` calls this after each
    micro-batch, where those seconds are freshness. ``on_written`` is called with each table's name as soon as
    that table's Delta commit has returned: readers see a table's rows from then on, before the refresh ends
    (``pipelines/freshness.py`` measures from then).
    """
    from pipelines.gold import silver_changes

    missing = not all(table_exists(settings, spec) for spec in GOLD)
    checkpoint = silver_changes.checkpoint_path(settings)
    if missing:
        # Forgotten before any table is made: a refresh that dies from here on finds no checkpoint and rebuilds.
        Storage(spark).delete(checkpoint)
    outdated = ensure_gold_tables(spark, settings)
    if outdated:
        # A layout Delta cannot change in place (a new partitioning): such a table is made anew and all of gold
        # rebuilt from silver, the checkpoint forgotten first so that a refresh dying half-way rebuilds again.
        Storage(spark).delete(checkpoint)
        for spec in outdated:
            print(f"offsetlake: {spec.name} is laid out as an older offsetlake made it; rebuilding gold from "
                  "silver", file=sys.stderr)
            Storage(spark).delete(table_path(settings, spec))
            ensure_table(spark, settings, spec)
        missing = True
    for spec in SOURCES:  # the query reads all five; a warehouse without snapshots has no silver.topic_names yet
        ensure_table(spark, settings, spec)
    written: list[str] = []

    def announce(tables: tuple[str, ...]) -> None:
        written.extend(tables)
        on_written(tables)

    for attempt in (1, 2):
        starting: dict[str, int] | None = None
        seen = GoldVersions()
        if silver_changes.bootstrap_needed(spark, settings, not missing):
            Storage(spark).delete(checkpoint)
            starting = bootstrap(spark, settings, announce)
            seen.applied = dict(starting)
        try:
            run_to_available(silver_changes.silver_change_stream(spark, settings, starting), checkpoint,
                             "offsetlake-gold",
                             lambda batch, _, seen=seen: apply_changes(spark, settings, batch, announce, seen))
        except SilverRewritten:
            if attempt == 2:
                raise
            # Silver lost rows: gold is rebuilt from silver as it is by a query started afresh (a kill before this
            # runs the same batch, which fails the same way, again).
            Storage(spark).delete(checkpoint)
            continue
        break
    return tuple(dict.fromkeys(written))


class SilverRewritten(RuntimeError):
    """A batch of gold's query holds changes to silver other than appends (a retention DELETE, a RESTORE)."""


#: What a gold table's Delta commits carry in ``userMetadata`` (``reflected_silver_versions`` reads it back).
USER_METADATA_KEY = "offsetlake.silver_versions"

@dataclass
class GoldVersions:
    """The silver versions gold reflects, as one refresh (one run of gold's query) wrote them: ``applied`` is None
    until the refresh rebuilt gold or applied a batch in full, and then what its commits record."""

    applied: dict[str, int] | None = None


def bootstrap(spark: SparkSession, settings: Settings, on_written: Callable[[tuple[str, ...]], None]
              ) -> dict[str, int]:
    """Rebuild every gold table from all of silver at pinned versions; return those versions (where the
    gold query starts reading).

    Pinned so that a row silver gains during the rebuild is read by the query, not lost between the two.
    """
    versions = {spec.name: latest_version(spark, settings, spec) or 0 for spec in SOURCES}
    pinned = {spec.name: read_version(spark, settings, spec, versions[spec.name]) for spec in SOURCES}
    rebuild_gold(spark, settings, pinned, on_written, recorded(versions))
    return versions


def rebuild_gold(spark: SparkSession, settings: Settings, silver: dict[str, DataFrame] | None,
                 on_written: Callable[[tuple[str, ...]], None], user_metadata: str | None = None) -> None:
    """Replace every gold table by ``full_rebuild``'s frame of it (each one atomic overwrite, its commit carrying
    ``user_metadata``)."""
    frames = full_rebuild(spark, settings, silver)
    for spec in GOLD:
        replace_groups(settings, spec, frames[spec.name], None, user_metadata)
        on_written((spec.name,))


def apply_changes(spark: SparkSession, settings: Settings, batch: DataFrame,
                  on_written: Callable[[tuple[str, ...]], None], seen: GoldVersions) -> None:
    """Apply one micro-batch of the gold query (silver's inserted rows) to gold; idempotent, so a batch run
    again after a crash changes nothing it had already changed.

    A batch holding any change that is not an insert (silver was changed, not appended to: a retention
    DELETE, a RESTORE) fails with ``SilverRewritten``, before writing anything: ``refresh_gold_tables`` then
    rebuilds gold from the whole of silver with the query started afresh.
    """
    from pipelines.gold import silver_changes

    applied = seen.applied
    if applied is not None:
        # What this refresh knows gold holds already: the bootstrap's versions, which the query reads once
        # more (it starts at them), and nothing after a batch it applied in full. Only its own record: a batch
        # that died half-way left some gold tables recording its versions.
        batch = batch.filter(silver_changes.after_versions(applied))
    rows = batch.localCheckpoint()  # read once from the change data feed; every step below reads it again
    summary = silver_changes.summarize(rows, touching_group())
    if summary.other_changes:
        raise SilverRewritten(f"silver holds {summary.other_changes} changes that are not appends")
    if not summary.versions:
        return
    # The versions of the tables this batch did not touch: from this refresh, else from gold's commits.
    known = applied if applied is not None else reflected_silver_versions(spark, settings)
    reflected = {**known, **summary.versions}
    _refresh(spark, settings, silver_changes.changed_rows(rows, summary), summary.versions, list(summary.groups),
             on_written, recorded(reflected))
    seen.applied = reflected


def recorded(versions: dict[str, int]) -> str:
    """The ``userMetadata`` every gold commit of a refresh step carries: the silver versions gold reflects once the
    step's writes are done (``reflected_silver_versions`` reads it back; ``check`` compares gold with them)."""
    return json.dumps({USER_METADATA_KEY: versions}, sort_keys=True)


def recording_session(spark: SparkSession, user_metadata: str) -> SparkSession:
    """A session of its own whose Delta commits carry ``user_metadata``: for the MERGEs, which take no per-operation
    ``userMetadata`` option (writes take one, ``replace_groups``). Of its own because the conf
    (``spark.databricks.delta.commitInfo.userMetadata``) is per session: set on a shared one, it would also mark the
    commits of other threads (an ingest's appends, another warehouse's refresh) meanwhile."""
    session = spark.newSession()
    session.conf.set("spark.databricks.delta.commitInfo.userMetadata", user_metadata)
    return session


def reflected_silver_versions(spark: SparkSession, settings: Settings) -> dict[str, int]:
    """The silver versions gold reflects: per silver table, the newest version recorded by a gold table's
    latest refresh commits (``recorded``); empty before the first refresh. Read from the tables' commit info
    through delta-rs (no Spark job: each refresh of ``run`` asks once)."""
    from deltalake import DeltaTable

    found: dict[str, int] = {}
    for spec in GOLD:
        if not table_exists(settings, spec):
            continue
        table = DeltaTable(table_path(settings, spec), storage_options=dict(settings.storage.delta_rs) or None)
        for commit in table.history(20):
            recorded = _recorded_versions(commit.get("userMetadata"))
            if recorded is not None:
                for name, version in recorded.items():
                    found[name] = max(version, found.get(name, version))
                break
    return found


def _recorded_versions(user_metadata: str | None) -> dict[str, int] | None:
    recorded = user_metadata_entry(user_metadata, USER_METADATA_KEY)
    return {str(k): int(v) for k, v in recorded.items()} if isinstance(recorded, dict) else None


def _refresh(spark: SparkSession, settings: Settings, changes: dict[str, DataFrame], versions: dict[str, int],
             touched: list[tuple[str, str]], on_written: Callable[[tuple[str, ...]], None], user_metadata: str
             ) -> None:
    """Apply silver's new rows (``changes``: table name -> the rows it gained; ``touched``: the groups they touch,
    (cluster_name, group), ``touching_group``) to gold.

    ``versions``: the Delta version of each table in ``changes`` that the batch read up to; the group tables
    are recomputed from silver at those versions (the other tables as they are: they gained no rows), so
    that gold reflects exactly the versions every commit records (``user_metadata``, ``recorded``).
    """
    from pipelines.gold.committed_offsets import merge_commits
    from pipelines.gold.offset_commit_rate import merge_rates

    def rows_of(spec: TableSpec) -> DataFrame:
        return (read_version(spark, settings, spec, versions[spec.name]) if spec.name in versions
                else read_table(spark, settings, spec))

    commits = changes.get(offset_commits.TABLE.name)
    if commits is not None:
        merge_commits(recording_session(spark, user_metadata), settings, commits)
        on_written((COMMITTED_OFFSETS.name,))
    # The group tables before the commit rate: gold.rebalance_events is the other table freshness is measured on.
    _refresh_groups(spark, settings, touched, rows_of, on_written, user_metadata)
    if commits is not None:
        merge_rates(recording_session(spark, user_metadata), settings, commits, rows_of(offset_commits.TABLE))
        on_written((OFFSET_COMMIT_RATE.name,))


def _refresh_groups(spark: SparkSession, settings: Settings, touched: list[tuple[str, str]],
                    rows_of: Callable[[TableSpec], DataFrame], on_written: Callable[[tuple[str, ...]], None],
                    user_metadata: str) -> None:
    """Replay the groups a batch touched (``touched``) from all of their records, and replace those groups' rows in
    the group tables."""
    from pipelines.gold.group_history import commits_in_windows, group_tables

    if not touched:
        return
    metadata, members, records, commits = (rows_of(spec) for spec in (
        group_metadata.TABLE, group_members.TABLE, consumer_group_records.TABLE, offset_commits.TABLE))
    # The groups as a literal predicate, not a join: Delta skips the files of other groups by their statistics (the
    # silver group tables are clustered by group), and there is no join to plan.
    in_scope = groups_predicate(touched)
    metadata, members, commits = (rows.filter(in_scope) for rows in (metadata, members, commits))
    records = records.filter(groups_predicate(touched, "group_id"))
    metadata = metadata.localCheckpoint()  # read twice: the records, and the commits' time windows
    commits = commits_in_windows(commits, metadata)
    frames = group_tables(metadata, members, records, commits, settings, GROUP_TABLES)
    for spec in GROUP_TABLES:
        replace_groups(settings, spec, frames[spec.name], touched, user_metadata)
        on_written((spec.name,))


def touching_group() -> Column:
    """Over the rows of gold's query (``pipelines.gold.silver_changes``), the group a row touches: a struct of
    ``cluster_name`` and ``group`` for a new GroupMetadata record or member of a classic group, or a new record of
    a KIP-848 consumer, share or streams group; null for every other row (``silver_changes.summarize`` collects them).

    Why new silver.group_members rows touch their groups although each comes with its GroupMetadata record:
    silver's query appends a batch's group_metadata rows and its group_members rows in two Delta commits, and
    gold's query may plan a batch between the two (``offsetlake gold`` beside a running ingest; a batch run again
    after a kill may find either one written). That batch replays the group without the record's members (or the
    members without their record); the rows of the later commit, in the next batch, must touch the group again, or
    gold would keep it so until its next record (unlike a rebuild).
    """
    from pyspark.sql import functions as F

    def of(spec: TableSpec, group: str = "group") -> Column:
        struct = F.col(column_of(spec))
        return F.struct(struct["cluster_name"].alias("cluster_name"), struct[group].alias("group"))

    records = F.col(column_of(consumer_group_records.TABLE))
    return (F.when(F.col(SOURCE_TABLE) == group_metadata.TABLE.name, of(group_metadata.TABLE))
            .when(F.col(SOURCE_TABLE) == group_members.TABLE.name, of(group_members.TABLE))
            .when((F.col(SOURCE_TABLE) == consumer_group_records.TABLE.name)
                  & records["type"].isin(*[t for types in MODERN_TYPES.values() for t in types]),
                  of(consumer_group_records.TABLE, "group_id")))


def replace_groups(settings: Settings, spec: TableSpec, rows: DataFrame, groups: list[tuple[str, str]] | None,
                   user_metadata: str | None = None) -> None:
    """Make ``spec``'s rows of ``groups`` [(cluster_name, group)] exactly ``rows``, in one atomic Delta commit (which
    carries ``user_metadata``).

    ``replaceWhere`` removes those groups' rows and adds ``rows`` together, so rows of other groups
    are never touched and a repeated call leaves the same content. ``groups=None`` replaces the table.
    """
    writer = rows.select(*spec.schema.fieldNames()).write.format("delta").mode("overwrite")
    if groups is not None:
        writer = writer.option("replaceWhere", groups_predicate(groups))
    if user_metadata is not None:
        writer = writer.option("userMetadata", user_metadata)
    writer.save(table_path(settings, spec))


def groups_predicate(groups: list[tuple[str, str]], group_column: str = "group") -> str:
    """SQL: the rows of ``groups`` [(cluster_name, group)], by ``cluster_name`` and ``group_column``."""
    def quote(text: str) -> str:
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

    by_cluster: dict[str, list[str]] = {}
    for cluster, group in groups:
        by_cluster.setdefault(cluster, []).append(group)
    return " OR ".join(f"(cluster_name = {quote(cluster)} AND `{group_column}` IN "
                       f"({', '.join(map(quote, sorted(names)))}))" for cluster, names in sorted(by_cluster.items()))

