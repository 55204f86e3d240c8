"""The consumer groups' metrics, read from the gold tables through delta-rs at each scrape (no Spark, no Kafka).

A prometheus_client custom collector: each scrape asks the warehouse, so the samples are what gold holds when
Prometheus asks, and a group gold no longer has (deleted, or gone from the newest lag snapshot) leaves the output
at once instead of lingering as a gauge nobody resets. One collector serves one cluster, ``settings.cluster_name``,
as one ``offsetlake run`` keeps one cluster's gold; its samples carry it as the ``cluster`` label.

What a scrape reads, and why it stays small whatever the history:

* gold.consumer_lag: the cluster's newest snapshot only. Which snapshot that is comes from a query above a floor
  taken from the Delta log's file statistics (``newest_snapshot``), then its rows by ``snapshot_date`` and
  ``snapshot_id``: delta-rs skips the other days' partitions and the files whose statistics rule the id out;
* gold.group_state_history and gold.group_membership: the current rows (``until`` / ``valid_to`` null);
* gold.rebalance_events: per group and cause, counts, stop bounds summed and the newest times, over the table.

Each table's answer is kept with the Delta version it was read at, and read again only when the table has a new
version (delta-rs's ``update_incremental`` reads the log's new entries): between two gold refreshes a scrape costs
a look at four logs. Nothing is served from before the newest version, so the cache adds no staleness; it keeps
the rebalance counts, which scan the whole table, from being recounted at every scrape.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from conf.settings import Settings
from metrics import catalog as C
from pipelines.burrow_status import Status
from pipelines.delta_tables import table_path
from pipelines.gold import consumer_lag, group_membership, group_state_history, rebalance_events
from schemas.table_spec import TableSpec

Row = dict[str, Any]

READS: tuple[TableSpec, ...] = (consumer_lag.TABLE, group_state_history.TABLE, group_membership.TABLE,
                                rebalance_events.TABLE)
"""The gold tables a scrape reads."""

#: Files of gold.consumer_lag, newest first by their statistics, whose lowest snapshot id ``newest_snapshot``
#: tries as the floor before it asks the whole table (a cluster sharing the warehouse with busier ones).
SNAPSHOT_PROBES = 4


def sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def query(delta: Any, sql: str) -> list[Row]:
    """``sql`` over ``delta`` registered as ``t``, through delta-rs's DataFusion engine (it applies deletion
    vectors, which the group tables have), as rows."""
    import pyarrow as pa
    from deltalake import QueryBuilder

    return pa.RecordBatchReader.from_stream(QueryBuilder().register("t", delta).execute(sql)).read_all().to_pylist()


def epoch_seconds(value: dt.datetime | None) -> float | None:
    """A timestamp as Unix time (a naive one is UTC, as Spark's are)."""
    if value is None:
        return None
    return (value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)).timestamp()


def newest_snapshot(delta: Any, cluster: str) -> int | None:
    """The cluster's newest snapshot id in gold.consumer_lag (None: it has none), reading few files.

    ``max(snapshot_id) WHERE snapshot_id >= floor`` is the answer whenever it finds a row, whatever the floor, and
    delta-rs reads only the files whose statistics reach the floor. The floors tried are the lowest ids of the
    files with the highest ones (among files whose ``cluster_name`` range holds the cluster): a lag refresh appends
    one cluster's snapshot at a time, so the first try usually hits. Without statistics, the whole table is asked.
    """
    import pyarrow as pa

    where = f"cluster_name = {sql_string(cluster)}"
    files = pa.table(delta.get_add_actions(flatten=True))
    columns = set(files.column_names)
    if {"min.snapshot_id", "max.snapshot_id"} <= columns:
        ranges: list[tuple[int, int]] = []
        for f in files.to_pylist():
            low, high = f.get("min.cluster_name"), f.get("max.cluster_name")
            if (low is not None and cluster < low) or (high is not None and cluster > high):
                continue
            if f["min.snapshot_id"] is None or f["max.snapshot_id"] is None:
                ranges = []
                break
            ranges.append((f["max.snapshot_id"], f["min.snapshot_id"]))
        floor: int | None = None
        for _, low in sorted(ranges, reverse=True)[:SNAPSHOT_PROBES]:
            if floor is not None and low >= floor:
                continue  # every row of this file is at or above the floor already asked: none is the cluster's
            floor = low
            found = query(delta, f"SELECT max(snapshot_id) AS s FROM t WHERE {where} AND snapshot_id >= {floor}")
            if found[0]["s"] is not None:
                return int(found[0]["s"])
    found = query(delta, f"SELECT max(snapshot_id) AS s FROM t WHERE {where}")
    return None if found[0]["s"] is None else int(found[0]["s"])


def lag_rows(delta: Any, cluster: str) -> list[Row]:
    """The rows of the cluster's newest snapshot (each partition of each group that has committed to it)."""
    snapshot = newest_snapshot(delta, cluster)
    if snapshot is None:
        return []
    day = dt.datetime.fromtimestamp(snapshot / 1000, dt.UTC).date()  # snapshot_id is its start time in ms
    return query(delta, 'SELECT "group", topic, "partition", lag, lag_seconds_interpolated, '
                        "lag_seconds_message_timestamp, partition_status, group_status, snapshot_time FROM t "
                        f"WHERE cluster_name = {sql_string(cluster)} AND snapshot_date = DATE '{day.isoformat()}' "
                        f"AND snapshot_id = {snapshot}")


def current_states(delta: Any, cluster: str) -> dict[str, Row]:
    """group -> its current row of gold.group_state_history (the one without ``until``)."""
    rows = query(delta, 'SELECT "group", state, group_type, at FROM t '
                        f"WHERE cluster_name = {sql_string(cluster)} AND until IS NULL")
    current: dict[str, Row] = {}
    for row in sorted(rows, key=lambda r: epoch_seconds(r["at"]) or 0.0):
        current[row["group"]] = row
    return current


def open_members(delta: Any, cluster: str) -> dict[str, int]:
    """group -> its members now (rows of gold.group_membership without ``valid_to``)."""
    rows = query(delta, 'SELECT "group", count(*) AS members FROM t '
                        f'WHERE cluster_name = {sql_string(cluster)} AND valid_to IS NULL GROUP BY "group"')
    return {r["group"]: int(r["members"]) for r in rows}


def rebalance_summary(delta: Any, cluster: str) -> list[Row]:
    """Per group and likely cause: rebalances, their stop bounds summed (ms), the newest end and storm end."""
    bounds = "".join(f"sum({column}) AS {bound}_ms, " for bound, column in C.STOP_BOUNDS.items())
    return query(delta, f'SELECT "group", likely_cause, count(*) AS rebalances, {bounds}'
                        "max(stable_at) AS last_at, max(CASE WHEN is_storm THEN stable_at END) AS last_storm_at "
                        f"FROM t WHERE cluster_name = {sql_string(cluster)} AND event_type = 'rebalance' "
                        'GROUP BY "group", likely_cause')


_READERS: dict[str, Callable[[Any, str], Any]] = {
    consumer_lag.TABLE.name: lag_rows,
    group_state_history.TABLE.name: current_states,
    group_membership.TABLE.name: open_members,
    rebalance_events.TABLE.name: rebalance_summary,
}


@dataclass
class _Table:
    """A gold table's delta-rs handle and its last answer, with the version it was read at."""

    spec: TableSpec
    delta: Any = None
    version: int | None = None
    answer: Any = None


@dataclass
class Scrape:
    """What one scrape read: each table's answer (absent: not in the warehouse, or unreadable)."""

    answers: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


def gauge(metric: C.Metric) -> GaugeMetricFamily:
    return GaugeMetricFamily(metric.family_name, metric.help, labels=metric.labels)


def counter(metric: C.Metric) -> CounterMetricFamily:
    return CounterMetricFamily(metric.family_name, metric.help, labels=metric.labels)


class GroupMetrics(Collector):
    """The collector of ``offsetlake serve-metrics`` and of ``run --metrics-port``: every metric of
    ``catalog.GROUP_METRICS``, computed from gold at each ``collect``.

    ``on_problem`` hears, once per distinct message, why a table present in the warehouse could not be read; a
    table not there yet only sets its ``offsetlake_warehouse_table_up`` to 0. Scrapes are served one at a time.
    """

    def __init__(self, settings: Settings, on_problem: Callable[[str], None] = lambda message: None) -> None:
        self._settings = settings
        self._cluster = settings.cluster_name
        self._on_problem = on_problem
        self._reported: set[str] = set()
        self._tables = {spec.name: _Table(spec) for spec in READS}
        self._lock = threading.Lock()

    def read(self) -> Scrape:
        """Each table's answer at its newest version (from the cache when the version has not changed)."""
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        started = time.monotonic()
        scrape = Scrape()
        for name, table in self._tables.items():
            try:
                if table.delta is None:
                    table.delta = DeltaTable(table_path(self._settings, table.spec),
                                             storage_options=dict(self._settings.storage.delta_rs) or None)
                else:
                    table.delta.update_incremental()
                version = table.delta.version()
                if version != table.version:
                    table.answer, table.version = _READERS[name](table.delta, self._cluster), version
                scrape.answers[name] = table.answer
            except TableNotFoundError:
                table.delta, table.version = None, None
            except Exception as exc:  # noqa: BLE001 - one table's failure must not fail the scrape of the rest
                table.delta, table.version = None, None
                text = str(exc).strip()
                message = f"{name} could not be read: {text.splitlines()[0] if text else type(exc).__name__}"
                if message not in self._reported:
                    self._reported.add(message)
                    self._on_problem(message)
        scrape.seconds = time.monotonic() - started
        return scrape

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            scrape = self.read()
        yield from families(self._cluster, scrape)


def families(cluster: str, scrape: Scrape) -> Iterator[Metric]:
    """The metric families of one scrape's answers (see ``catalog.GROUP_METRICS`` for what each means)."""
    answers = scrape.answers
    states: dict[str, Row] | None = answers.get(group_state_history.TABLE.name)
    # Groups whose current state is Dead were deleted: their members and rebalances are history, not metrics.
    live = None if states is None else {g for g, row in states.items() if row["state"] != "Dead"}

    yield from _lag_families(cluster, answers.get(consumer_lag.TABLE.name))

    members: dict[str, int] | None = answers.get(group_membership.TABLE.name)
    if members is not None:
        family = gauge(C.MEMBERS)
        for group in sorted(live if live is not None else members):  # a live group without open rows has none
            family.add_metric([cluster, group], members.get(group, 0))
        yield family
    if states is not None:
        family = gauge(C.GROUP_INFO)
        for group in sorted(live or ()):
            row = states[group]
            family.add_metric([cluster, group, row["state"], row["group_type"]], 1 if row["state"] == "Stable" else 0)
        yield family

    summary: list[Row] | None = answers.get(rebalance_events.TABLE.name)
    if summary is not None:
        yield from _rebalance_families(cluster, [r for r in summary if live is None or r["group"] in live])

    up = gauge(C.TABLE_UP)
    for spec in READS:
        up.add_metric([cluster, spec.name], 1 if spec.name in answers else 0)
    yield up
    read = gauge(C.READ_SECONDS)
    read.add_metric([cluster], scrape.seconds)
    yield read


def _lag_families(cluster: str, rows: list[Row] | None) -> Iterator[Metric]:
    if rows is None:
        return
    lag, seconds, status = gauge(C.PARTITION_LAG), gauge(C.PARTITION_LAG_SECONDS), gauge(C.PARTITION_STATUS)
    topic_lag: dict[tuple[str, str], int] = defaultdict(int)
    group_status: dict[str, str] = {}
    for r in sorted(rows, key=lambda r: (r["group"], r["topic"], r["partition"])):
        labels = [cluster, r["group"], r["topic"], str(r["partition"])]
        group_status[r["group"]] = r["group_status"]
        if r["lag"] is not None:
            lag.add_metric(labels, r["lag"])
            topic_lag[(r["group"], r["topic"])] += r["lag"]
        for estimator, column in C.LAG_ESTIMATORS.items():
            if r[column] is not None:
                seconds.add_metric([*labels, estimator], r[column])
        if r["partition_status"] in Status.__members__:
            status.add_metric([*labels, r["partition_status"]], Status[r["partition_status"]].value)
    topic = gauge(C.TOPIC_LAG)
    for (group, topic_name), total in sorted(topic_lag.items()):
        topic.add_metric([cluster, group, topic_name], total)
    groups = gauge(C.GROUP_STATUS)
    for group, name in sorted(group_status.items()):
        if name in Status.__members__:
            groups.add_metric([cluster, group, name], Status[name].value)
    snapshot = gauge(C.LAG_SNAPSHOT_TIME)
    if rows:
        snapshot.add_metric([cluster], epoch_seconds(rows[0]["snapshot_time"]) or 0.0)
    yield from (lag, topic, seconds, status, groups, snapshot)


def _rebalance_families(cluster: str, summary: list[Row]) -> Iterator[Metric]:
    rebalances, stopped = counter(C.REBALANCES), counter(C.REBALANCING_SECONDS)
    last, storm = gauge(C.LAST_REBALANCE), gauge(C.LAST_STORM)
    bounds: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(C.STOP_BOUNDS, 0.0))
    newest: dict[str, float] = {}
    newest_storm: dict[str, float] = {}
    for r in sorted(summary, key=lambda r: (r["group"], r["likely_cause"] or "unknown")):
        group = r["group"]
        rebalances.add_metric([cluster, group, r["likely_cause"] or "unknown"], r["rebalances"])
        for bound in C.STOP_BOUNDS:
            bounds[group][bound] += (r[f"{bound}_ms"] or 0) / 1000
        for into, at in ((newest, epoch_seconds(r["last_at"])), (newest_storm, epoch_seconds(r["last_storm_at"]))):
            if at is not None:
                into[group] = max(at, into.get(group, at))
    for group, by_bound in sorted(bounds.items()):
        for bound, value in by_bound.items():
            stopped.add_metric([cluster, group, bound], value)
    for family, times in ((last, newest), (storm, newest_storm)):
        for group, at in sorted(times.items()):
            family.add_metric([cluster, group], at)
    yield from (rebalances, last, stopped, storm)
