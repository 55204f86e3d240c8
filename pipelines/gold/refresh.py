"""Refresh every gold table from silver, incrementally and idempotently.

How it stays incremental: ``gold._refresh_state`` holds, per silver table, the last Delta
version gold reflects. A refresh reads only the rows that silver commits after that version
added (silver's change data feed; silver is append-only; ``silver_changes``), then:

* ``committed_offsets``: MERGEs the newest record per key, applied only when newer than the
  row there (so re-applying a record changes nothing), tombstones deleting;
* ``offset_commit_rate``: recounts only the minutes that got new commits, from the silver
  partitions (``commit_date``) of those commits, and MERGEs them;
* the group tables (generations, membership, assignments, state history, rebalance events):
  recomputes only the groups that got new GroupMetadata records (classic groups) or new
  silver.consumer_group_records rows of KIP-848 consumer groups, from all of those groups'
  records of both kinds (a group id can move between the protocols), and replaces exactly those
  groups' rows (one ``replaceWhere`` overwrite per table, atomic). KIP-848 groups are derived
  by ``consumer_groups`` (a replay of their records per group); their topic ids are named from
  offset commits that carry ids, the groups' records, silver.topic_names (the ids the end-offset
  snapshots described, ``pipelines.topic_names``) and names gold already has -- never by asking the
  cluster, so a rebuild gives the same rows. A group whose assignments hold an id no source named yet
  is recomputed when a later snapshot or commit names it.

Then the new versions are written to the state table. A refresh that dies half-way re-reads
the same silver rows next time and converges to the same result (every step above is
idempotent); one with no new silver versions writes nothing. If a silver commit did more than
append (e.g. a retention delete; OPTIMIZE changes no rows and is passed over), its log entry is
gone, or the change data feed does not cover it, the refresh rebuilds from the whole table at the
current version instead.

How it runs: a refresh whose increment Delta's history counts at no more than
``gold.interpreted_up_to_rows`` rows runs on Spark's interpreted expressions, not generated code
(``pipelines.spark_jobs.interpreted_expressions`` says why); full rebuilds on generated code.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines.delta_tables import ensure_current_table, ensure_table, read_table, table_path
from pipelines.gold.committed_offsets import TABLE as COMMITTED_OFFSETS
from pipelines.gold.group_generations import TABLE as GROUP_GENERATIONS
from pipelines.gold.group_membership import TABLE as GROUP_MEMBERSHIP
from pipelines.gold.group_state_history import TABLE as GROUP_STATE_HISTORY
from pipelines.gold.offset_commit_rate import TABLE as OFFSET_COMMIT_RATE
from pipelines.gold.partition_assignments import TABLE as PARTITION_ASSIGNMENTS
from pipelines.gold.rebalance_events import TABLE as REBALANCE_EVENTS
from pipelines.spark_jobs import interpreted_expressions, run_together
from schemas import consumer_group_records, group_members, group_metadata, offset_commits, refresh_state, topic_names
from schemas.table_spec import Incremental, TableSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

SOURCES: tuple[TableSpec, ...] = (offset_commits.TABLE, group_metadata.TABLE, group_members.TABLE,
                                  consumer_group_records.TABLE, topic_names.TABLE)
GOLD: tuple[TableSpec, ...] = (COMMITTED_OFFSETS, OFFSET_COMMIT_RATE, GROUP_GENERATIONS, GROUP_MEMBERSHIP,
                                PARTITION_ASSIGNMENTS, GROUP_STATE_HISTORY, REBALANCE_EVENTS)
"""The gold tables a refresh writes, each by the strategy its module declares (``TableSpec.incremental``)."""
GROUP_TABLES: tuple[TableSpec, ...] = tuple(
    spec for spec in GOLD if spec.incremental is Incremental.REPLACE_TOUCHED_GROUPS)
"""Recomputed for the groups with new records (``group_tables``) and replaced by group (``replace_groups``)."""


@dataclass(frozen=True)
class SilverChanges:
    """Rows silver gained after ``after`` up to ``version`` (``full``: the whole table at ``version``)."""

    version: int
    rows: DataFrame | None
    full: bool


def ensure_gold_tables(spark: SparkSession, settings: Settings) -> None:
    # Every gold table gained columns (KIP-848 groups), properties (deletion vectors) or clustering since its first
    # release: a table an older offsetlake made is brought up to its spec (once per process).
    for spec in GOLD:
        ensure_current_table(spark, settings, spec)
    ensure_table(spark, settings, refresh_state.TABLE)


def group_tables(metadata: DataFrame, members: DataFrame, settings: Settings,
                 consumer: dict[str, DataFrame] | None = None, commits: DataFrame | None = None,
                 materialize: bool = False) -> dict[str, DataFrame]:
    """Every group gold table from silver group_metadata and group_members rows (all, or some groups').

    ``consumer``: the KIP-848 groups' rows of each table (``consumer_groups.consumer_group_tables``),
    added to the classic ones (the storm flag of rebalance events is computed over both).
    ``commits``: silver.offset_commits rows of (at least) the same groups: the members' last commits
    bound when they stopped for a rebalance and tell a LeaveGroup from a possible session expiry
    (``rebalance_events.last_commits``). A commit made before a GroupMetadata record is appended
    before it in the same ``__consumer_offsets`` partition, so a refresh that sees a record has
    every commit that bears on it.
    ``materialize``: checkpoint (``localCheckpoint``) the intermediate frames several tables share (the
    record sequence, the member rows, the transitions), so that each table's write plans and runs only its
    own last steps instead of the whole chain again (the refresh: its input rows are checkpointed already).
    On bench/gold.py's data at 20,000 commits (+200 in 5 groups; 2026-11-27 13:20-13:27, load ~3, two runs
    each) the group steps of an incremental refresh took 9.2 and 9.8 s with it against 10.5 and 11.3 s.
    """
    from pipelines.gold import group_history
    from pipelines.gold.group_generations import group_generations
    from pipelines.gold.group_membership import group_membership
    from pipelines.gold.group_state_history import group_state_history
    from pipelines.gold.partition_assignments import partition_assignments
    from pipelines.gold.rebalance_events import rebalance_events, transitions

    sequence = group_history.record_sequence(metadata)
    if materialize:
        sequence = sequence.localCheckpoint()
    member_rows = group_history.member_sequence(sequence, members)
    transition_rows = transitions(group_history.record_summaries(sequence, members), commits)
    if materialize:
        member_rows, transition_rows = member_rows.localCheckpoint(), transition_rows.localCheckpoint()
    consumer = consumer or {}
    events = rebalance_events(transition_rows, settings, consumer.get(REBALANCE_EVENTS.name))
    frames = {
        GROUP_GENERATIONS.name: group_generations(sequence, transition_rows),
        GROUP_MEMBERSHIP.name: group_membership(member_rows),
        PARTITION_ASSIGNMENTS.name: partition_assignments(member_rows),
        GROUP_STATE_HISTORY.name: group_state_history(sequence),
    }
    for name, rows in consumer.items():
        if name in frames:
            frames[name] = frames[name].unionByName(rows)
    return {**frames, REBALANCE_EVENTS.name: events}


def full_rebuild(spark: SparkSession, settings: Settings, silver: dict[str, DataFrame] | None = None
                 ) -> dict[str, DataFrame]:
    """Every gold table computed from all of silver, without writing: the reference for incremental runs.

    ``silver``: the silver tables' rows to build from (table name -> rows, e.g. ``pipelines.silver.
    tables_from_bronze``: gold rebuilt from bronze); None: the tables as the ingest wrote them. silver.topic_names
    (the end-offset snapshots' topic ids, not from ``__consumer_offsets``) is always read as it is.
    """
    from pipelines.gold.committed_offsets import committed_offsets
    from pipelines.gold.consumer_groups import consumer_group_tables, has_consumer_groups
    from pipelines.gold.offset_commit_rate import offset_commit_rate
    from pipelines.topic_names import topic_names as named_topic_ids

    def rows(spec: TableSpec) -> DataFrame:
        return silver[spec.name] if silver is not None else read_table(spark, settings, spec)

    commits = rows(offset_commits.TABLE)
    records = rows(consumer_group_records.TABLE)
    named = named_topic_ids(spark, settings)
    consumer = (consumer_group_tables(records, [commits, *([named] if named is not None else [])])
                if has_consumer_groups(records) else None)
    frames = group_tables(rows(group_metadata.TABLE), rows(group_members.TABLE), settings, consumer, commits)
    return {COMMITTED_OFFSETS.name: committed_offsets(commits),
            OFFSET_COMMIT_RATE.name: offset_commit_rate(commits), **frames}


def rebuild_differences(spark: SparkSession, settings: Settings, silver: dict[str, DataFrame] | None = None
                        ) -> dict[str, tuple[int, int]]:
    """Each table of ``GOLD`` -> (rows only in the table, rows only in ``full_rebuild``'s frame of it).

    (0, 0) everywhere means gold as the refreshes left it is gold rebuilt from all of silver -- or from the
    given ``silver`` rows, e.g. silver derived again from bronze's raw records (``pipelines.silver.
    tables_from_bronze``: issue 14's acceptance, what ``run`` keeps current equals a rebuild from bronze).
    Rows are compared as multisets, every column (``row_differences``). gold.consumer_lag is not in ``GOLD``:
    it is built from the end-offset snapshots and the commits by its own refresh.
    """
    rebuilt = full_rebuild(spark, settings, silver)
    found = run_together(spark, [lambda spec=spec: row_differences(read_table(spark, settings, spec),
                                                                   rebuilt[spec.name], spec.schema.fieldNames())
                                 for spec in GOLD], settings.gold.concurrent_writes)
    return {spec.name: pair for spec, pair in zip(GOLD, found, strict=True)}


def row_differences(left: DataFrame, right: DataFrame, columns: list[str]) -> tuple[int, int]:
    """(rows of ``left`` not in ``right``, rows of ``right`` not in ``left``) over ``columns``, as multisets.

    What ``left.exceptAll(right).count()`` and the reverse give, in one job: each distinct row counted on
    both sides at once. Two exceptAlls ran each side's plan twice; a full rebuild's is the expensive one
    (make demo's comparison took 30.7 s that way, 2026-11-27).
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
    counts = run_together(spark, [lambda spec=spec: read_table(spark, settings, spec).count() for spec in GOLD],
                          settings.gold.concurrent_writes)
    return {spec.name: count for spec, count in zip(GOLD, counts, strict=True)}


def refresh_gold_tables(spark: SparkSession, settings: Settings,
                        on_written: Callable[[tuple[str, ...]], None] = lambda tables: None) -> tuple[str, ...]:
    """Bring every gold table up to date with silver; return the names of the gold tables written.

    ``refresh_gold`` without the closing row counts, which cost about 3 s even on a small warehouse (seven
    count jobs; bench/gold.py's data at 2,000 commits, 2026-11-27): ``offsetlake run`` calls this after
    each micro-batch, where those seconds are freshness. ``on_written`` is called with each table's name as
    soon as that table's Delta commit has returned (the commit tables, then the group tables; the tables of
    one step are written side by side, so in the order they finish, possibly from the step's threads):
    readers see a table's rows from then on, before the refresh ends (``pipelines/freshness.py`` measures
    from then). Until 2026-11-27 it was called once per step, when the step's last table was committed.
    """
    ensure_gold_tables(spark, settings)
    done = {row["source_table"]: row["version"] for row in read_table(spark, settings, refresh_state.TABLE)
            .collect()}
    new = [v for v in (silver_versions(spark, settings, spec, done.get(spec.name)) for spec in SOURCES)
           if v is not None]
    with interpreted_expressions(spark, is_small(new, settings.gold.interpreted_up_to_rows)):
        return _refresh(spark, settings, done, new, on_written)


def is_small(new: list[SilverVersions], limit: int) -> bool:
    """Whether silver gained at most ``limit`` rows, counted, and no rebuild: such a refresh runs interpreted.

    ``limit`` 0: never (always generated code)."""
    return limit > 0 and all(v.appended is not None and v.rows is not None for v in new) and sum(
        v.rows or 0 for v in new) <= limit


def _refresh(spark: SparkSession, settings: Settings, done: dict[str, int], new: list[SilverVersions],
             on_written: Callable[[tuple[str, ...]], None]) -> tuple[str, ...]:
    """``refresh_gold_tables`` once it knows which silver versions are new (``new``) and how to run."""
    from pyspark.sql import functions as F

    from pipelines.gold.committed_offsets import committed_offsets, merge_commits
    from pipelines.gold.offset_commit_rate import merge_rates, offset_commit_rate

    changes = {v.spec.name: read_changes(spark, settings, v) for v in new}

    written: list[str] = []
    commits = changes.get(offset_commits.TABLE.name)
    if commits is not None and commits.rows is not None:
        if commits.full:
            replace_groups(settings, COMMITTED_OFFSETS, committed_offsets(commits.rows), None)
            on_written((COMMITTED_OFFSETS.name,))
            replace_groups(settings, OFFSET_COMMIT_RATE, offset_commit_rate(commits.rows), None)
            on_written((OFFSET_COMMIT_RATE.name,))
        else:
            # Two tables, two MERGEs that read the same (checkpointed) changes: side by side, as the group tables
            # below (on 2,000 commits each MERGE took 3-4 s, mostly Delta's fixed cost of a MERGE; 2026-11-27).
            silver_commits = _read_version(spark, settings, offset_commits.TABLE, commits.version)
            run_together(spark, [
                _announced(COMMITTED_OFFSETS, on_written,
                           lambda: merge_commits(spark, settings, commits.rows)),
                _announced(OFFSET_COMMIT_RATE, on_written,
                           lambda: merge_rates(spark, settings, commits.rows, silver_commits))],
                settings.gold.concurrent_writes)
        written += (COMMITTED_OFFSETS.name, OFFSET_COMMIT_RATE.name)

    scope = with_groups(touched_groups(changes), newly_named_groups(spark, settings, changes))
    if scope is not None and scope.groups != []:
        groups = scope.groups
        def rows_of(spec: TableSpec) -> DataFrame:  # at the version this refresh reaches (empty if none)
            version = changes[spec.name].version if spec.name in changes else done.get(spec.name)
            return (_read_version(spark, settings, spec, version) if version is not None
                    else spark.createDataFrame([], spec.schema))

        group_metadata_rows, member_rows, records, commit_rows = (
            rows_of(spec) for spec in (group_metadata.TABLE, group_members.TABLE, consumer_group_records.TABLE,
                                       offset_commits.TABLE))
        from pipelines.gold.consumer_groups import RECORD_TYPES, consumer_group_tables, has_consumer_groups

        records = records.filter(F.col("type").isin(*RECORD_TYPES))
        if groups is not None:
            # The groups as a literal predicate, not a join: Delta skips the files of other groups by their
            # statistics (the silver group tables are clustered by group), and there is no join to plan.
            in_scope = _groups_predicate(groups)
            group_metadata_rows = group_metadata_rows.filter(in_scope)
            member_rows = member_rows.filter(in_scope)
            commit_rows = commit_rows.filter(in_scope)
            records = records.filter(_groups_predicate(groups, group_column="group_id"))
        # The affected groups' records are few (one per rebalance): materialise them once for five tables.
        group_metadata_rows = group_metadata_rows.localCheckpoint()
        member_rows = member_rows.localCheckpoint()
        records = records.localCheckpoint()
        consumer = None
        if has_consumer_groups(records):
            # Topic ids are named from commits that carry them, silver.topic_names and names gold has.
            from pipelines.topic_names import topic_names as named_topic_ids

            known = [read_table(spark, settings, COMMITTED_OFFSETS),
                     read_table(spark, settings, PARTITION_ASSIGNMENTS)]
            if commits is not None and commits.rows is not None:
                known.append(commits.rows)
            named = named_topic_ids(spark, settings)
            if named is not None:
                known.append(named)
            consumer = consumer_group_tables(records, known)
        frames = group_tables(group_metadata_rows, member_rows, settings, consumer, commit_rows, materialize=True)
        run_together(spark, [_announced(spec, on_written,
                                        lambda spec=spec: replace_groups(settings, spec, frames[spec.name], groups))
                             for spec in GROUP_TABLES], settings.gold.concurrent_writes)
        written += [spec.name for spec in GROUP_TABLES]

    if changes:
        now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        state = {**done, **{name: change.version for name, change in changes.items()}}
        rows = [(name, version, now) for name, version in sorted(state.items())]
        spark.createDataFrame(rows, refresh_state.TABLE.schema).write.format("delta").mode("overwrite") \
            .save(table_path(settings, refresh_state.TABLE))
    return tuple(written)


def _announced(spec: TableSpec, on_written: Callable[[tuple[str, ...]], None], write: Callable[[], None]
               ) -> Callable[[], None]:
    """``write``, then ``on_written`` with ``spec``'s name: the table is readable from its commit on, not from
    when the other writes of its step end (the five group tables' last commit came up to seconds after the
    first in ``run``'s cycles)."""
    def write_and_announce() -> None:
        write()
        on_written((spec.name,))
    return write_and_announce


@dataclass(frozen=True)
class GroupScope:
    """The groups whose gold rows a refresh recomputes: ``groups`` [(cluster_name, group)], None = all."""

    groups: list[tuple[str, str]] | None


def touched_groups(changes: dict[str, SilverChanges]) -> GroupScope | None:
    """Groups with new classic GroupMetadata records or members, or new KIP-848 consumer-group records; None:
    nothing new.

    A source read in full (first refresh, or rebuilt after a removal) recomputes every group.

    Why new silver.group_members rows touch their groups although each comes with its GroupMetadata record:
    the ingest appends a batch's group_metadata rows and then its group_members rows, two Delta commits,
    while ``offsetlake run`` refreshes gold beside it. A refresh that read group_metadata's newest version
    just after the first and group_members' just before the second recomputed the group without the
    record's members, and took both versions as done: the members' rows, arriving with the next version,
    touched nothing, and gold kept the group without them until its next record (unlike a rebuild).
    """
    from functools import reduce

    from pyspark.sql import functions as F

    from pipelines.gold.consumer_groups import RECORD_TYPES

    metadata = changes.get(group_metadata.TABLE.name)
    members = changes.get(group_members.TABLE.name)
    records = changes.get(consumer_group_records.TABLE.name)
    sources = [c for c in (metadata, members, records) if c is not None and c.rows is not None]
    if not sources:
        return None
    if any(c.full for c in sources):
        return GroupScope(None)
    groups = [c.rows.select("cluster_name", "group") for c in (metadata, members)
              if c is not None and c.rows is not None]
    if records is not None and records.rows is not None:
        groups.append(records.rows.filter(F.col("type").isin(*RECORD_TYPES))
                      .select("cluster_name", F.col("group_id").alias("group")))
    touched = reduce(lambda a, b: a.unionByName(b), groups).distinct().collect()
    return GroupScope(sorted((r["cluster_name"], r["group"]) for r in touched))


def newly_named_groups(spark: SparkSession, settings: Settings, changes: dict[str, SilverChanges]
                       ) -> list[tuple[str, str]]:
    """KIP-848 groups whose gold assignments hold a topic id gold could not name, and that new rows of
    silver.topic_names (ids a snapshot described) or new offset commits now name: recomputed although they
    have no new records, so that a name that arrives after a group's last record reaches its rows (as a
    rebuild would give them)."""
    from functools import reduce

    from pyspark.sql import functions as F

    from pipelines.delta_tables import table_exists

    named = [change.rows for name, change in changes.items()
             if name in (topic_names.TABLE.name, offset_commits.TABLE.name) and change.rows is not None]
    if not named or not table_exists(settings, PARTITION_ASSIGNMENTS):
        return []
    ids = reduce(lambda a, b: a.unionByName(b), [rows.filter(F.col("topic_id").isNotNull())
                                                 .select("cluster_name", "topic_id") for rows in named])
    unnamed = read_table(spark, settings, PARTITION_ASSIGNMENTS).filter(
        F.col("topic").isNull() & F.col("topic_id").isNotNull())
    return sorted((r["cluster_name"], r["group"]) for r in unnamed.join(ids, ["cluster_name", "topic_id"], "left_semi")
                  .select("cluster_name", "group").distinct().collect())


def with_groups(scope: GroupScope | None, groups: list[tuple[str, str]]) -> GroupScope | None:
    """``scope`` widened by ``groups`` (a scope of every group stays so)."""
    if not groups:
        return scope
    if scope is None:
        return GroupScope(sorted(groups))
    if scope.groups is None:
        return scope
    return GroupScope(sorted(set(scope.groups) | set(groups)))


def replace_groups(settings: Settings, spec: TableSpec, rows: DataFrame, groups: list[tuple[str, str]] | None
                   ) -> None:
    """Make ``spec``'s rows of ``groups`` [(cluster_name, group)] exactly ``rows``, in one atomic Delta commit.

    ``replaceWhere`` removes those groups' rows and adds ``rows`` together, so rows of other groups
    are never touched and a repeated call leaves the same content. ``groups=None`` replaces the table.
    """
    writer = rows.select(*spec.schema.fieldNames()).write.format("delta").mode("overwrite")
    if groups is not None:
        writer = writer.option("replaceWhere", _groups_predicate(groups))
    writer.save(table_path(settings, spec))


def _groups_predicate(groups: list[tuple[str, str]], group_column: str = "group") -> str:
    """SQL: the rows of ``groups`` [(cluster_name, group)], by ``cluster_name`` and ``group_column``."""
    def quote(text: str) -> str:
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

    by_cluster: dict[str, list[str]] = {}
    for cluster, group in groups:
        by_cluster.setdefault(cluster, []).append(group)
    return " OR ".join(f"(cluster_name = {quote(cluster)} AND `{group_column}` IN "
                       f"({', '.join(map(quote, sorted(names)))}))" for cluster, names in sorted(by_cluster.items()))


def _read_version(spark: SparkSession, settings: Settings, spec: TableSpec, version: int) -> DataFrame:
    return spark.read.format("delta").option("versionAsOf", version).load(table_path(settings, spec))


#: Operations (DESCRIBE HISTORY's ``operation``) that change no rows: a refresh passes over their versions.
#: OPTIMIZE rewrites rows it keeps (its files are ``dataChange=false``: no change data); the others touch
#: metadata or no files. Any other version that is not a blind append makes the refresh read the whole table.
ROWS_UNCHANGED = frozenset({"OPTIMIZE", "VACUUM START", "VACUUM END", "SET TBLPROPERTIES", "UNSET TBLPROPERTIES",
                            "ADD COLUMNS", "CHANGE COLUMN", "ADD CONSTRAINT", "DROP CONSTRAINT", "UPGRADE PROTOCOL",
                            "CLUSTER BY"})


def latest_version(spark: SparkSession, settings: Settings, spec: TableSpec) -> int | None:
    """The table's newest Delta version (its history's last entry), or None when the table does not exist."""
    from delta.tables import DeltaTable

    path = table_path(settings, spec)
    if not DeltaTable.isDeltaTable(spark, path):
        return None
    return int(DeltaTable.forPath(spark, path).history(1).head()["version"])


def silver_changes(spark: SparkSession, settings: Settings, spec: TableSpec, after: int | None
                   ) -> SilverChanges | None:
    """What ``spec`` gained after version ``after`` (None: never read); None when nothing is new.

    ``silver_versions`` (which versions, from Delta's history) then ``read_changes`` (their rows).
    """
    versions = silver_versions(spark, settings, spec, after)
    return None if versions is None else read_changes(spark, settings, versions)


@dataclass(frozen=True)
class SilverVersions:
    """The versions of a silver table a refresh reads, as Delta's history tells them (``silver_versions``)."""

    spec: TableSpec
    version: int  # the table's newest version: what gold will reflect
    appended: tuple[int, ...] | None  # the versions that appended rows since; None: read the whole table
    rows: int | None  # rows those versions appended (their numOutputRows); None: not known, or the whole table


def silver_versions(spark: SparkSession, settings: Settings, spec: TableSpec, after: int | None
                    ) -> SilverVersions | None:
    """Which versions of ``spec`` a refresh reads after version ``after`` (None: never read); None when none is new.

    Delta says it, through public APIs only (so any warehouse URI works): the table's history tells which
    versions since ``after`` only appended rows (``isBlindAppend``: silver is written by appends) and how many
    (``operationMetrics.numOutputRows``), changed none (``ROWS_UNCHANGED``), or did anything else -- a
    retention DELETE, a RESTORE, an overwrite --, after which gold is rebuilt from the whole table at its
    newest version. No data is read here: the refresh decides from the row counts how to run
    (``GoldSettings.interpreted_up_to_rows``) before it reads anything.
    """
    from delta.tables import DeltaTable

    path = table_path(settings, spec)
    if not DeltaTable.isDeltaTable(spark, path):
        return None
    table = DeltaTable.forPath(spark, path)
    version = int(table.history(1).head()["version"])
    if after is not None and version <= after:
        return None
    whole = SilverVersions(spec, version, None, None)
    if after is None:
        return whole
    versions = table.history(version - after).select("version", "operation", "isBlindAppend",
                                                     "operationMetrics").collect()
    if sorted(v["version"] for v in versions) != list(range(after + 1, version + 1)):
        return whole  # log entries gone (Delta's log retention): what changed cannot be told
    if any(not v["isBlindAppend"] and v["operation"] not in ROWS_UNCHANGED for v in versions):
        return whole
    appended = [v for v in versions if v["isBlindAppend"] and v["operation"] not in ROWS_UNCHANGED]
    counts = [(v["operationMetrics"] or {}).get("numOutputRows") for v in appended]
    rows = sum(int(count) for count in counts) if all(count is not None for count in counts) else None
    return SilverVersions(spec, version, tuple(sorted(v["version"] for v in appended)), rows)


def read_changes(spark: SparkSession, settings: Settings, versions: SilverVersions) -> SilverChanges:
    """The rows ``versions`` says to read: the appended versions' rows, or the whole table at its newest version.

    The appended rows are read from the table's change data feed (``CHANGE_DATA_FEED``; Delta serves an
    append's inserts from the files it added) and kept on the executors (``localCheckpoint``): the refresh
    reads them several times, and a range of versions the feed does not cover -- written before the property
    was set -- is found here and read in full instead.
    """
    spec, version = versions.spec, versions.version

    def whole() -> SilverChanges:
        return SilverChanges(version, _read_version(spark, settings, spec, version), full=True)

    if versions.appended is None:
        return whole()
    if not versions.appended:
        return SilverChanges(version, None, full=False)
    path = table_path(settings, spec)
    feed = (spark.read.format("delta").option("readChangeFeed", "true")
            .option("startingVersion", versions.appended[0]).option("endingVersion", versions.appended[-1])
            .load(path))
    rows = feed.filter(feed["_change_type"] == "insert").drop("_change_type", "_commit_version", "_commit_timestamp")
    try:
        rows = rows.localCheckpoint()
    except Exception as error:  # noqa: BLE001 - only Delta's "no change data for these versions" is expected
        if "DELTA_MISSING_CHANGE_DATA" not in str(error):
            raise
        return whole()
    return SilverChanges(version, rows, full=False)
