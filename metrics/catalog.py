"""Every metric offsetlake exports, described once: name, type, labels, meaning, source and kminion's equivalent.

The collectors (``metrics/groups.py``, ``metrics/run.py``) take their help texts and label names from here, the
reference table of docs/metrics.md is ``reference_table()`` (a test compares them), and the Grafana dashboard and
the alerting rules in conf/ may use only these names (tested too), so none of the four can drift from the others.

Names follow kminion's where the meaning is the same (``kminion_kafka_consumer_group_topic_partition_lag`` ->
``offsetlake_consumer_group_topic_partition_lag``, labels ``group_id``, ``topic_name``, ``partition_id``), so a
Grafana dashboard built on kminion needs its prefix changed and a ``cluster`` label at most.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipelines.burrow_status import Status

GAUGE, COUNTER = "gauge", "counter"

CLUSTER, GROUP, TOPIC, PARTITION = "cluster", "group_id", "topic_name", "partition_id"
"""kminion's label names (and ``cluster``: settings' cluster_name, as Burrow's exporters label it)."""

PARTITION_LABELS = (CLUSTER, GROUP, TOPIC, PARTITION)
GROUP_LABELS = (CLUSTER, GROUP)
RUN_LABELS = (CLUSTER, "topic")

LAG_ESTIMATORS = {"interpolated": "lag_seconds_interpolated", "message_timestamp": "lag_seconds_message_timestamp"}
"""The ``estimator`` label's values and the gold.consumer_lag columns they come from."""
STOP_BOUNDS = {"lower": "stopped_ms_lower_bound", "upper": "stopped_ms_upper_bound"}
"""The ``bound`` label's values and the gold.rebalance_events columns they sum."""


def status_codes(names: tuple[str, ...]) -> str:
    """``1 OK, 2 WARN, ...``: Burrow's numeric codes (``protocol.StatusConstant``) of these status names."""
    return ", ".join(f"{Status[name].value} {name}" for name in names)


@dataclass(frozen=True)
class Metric:
    name: str  # as exposed, ``_total`` included for counters
    kind: str  # GAUGE or COUNTER
    labels: tuple[str, ...]
    help: str  # the HELP line: what a sample means
    source: str  # where its value comes from
    kminion: str = ""  # kminion's metric of the same meaning, if it has one

    @property
    def family_name(self) -> str:
        """The name prometheus_client's metric families take (a counter's without ``_total``)."""
        return self.name.removesuffix("_total") if self.kind == COUNTER else self.name


PARTITION_LAG = Metric(
    "offsetlake_consumer_group_topic_partition_lag", GAUGE, PARTITION_LABELS,
    "Messages the group has still to read on the partition, at the newest end-offset snapshot.",
    "gold.consumer_lag.lag of the cluster's newest snapshot; no sample while nothing is committed",
    "kminion_kafka_consumer_group_topic_partition_lag")
TOPIC_LAG = Metric(
    "offsetlake_consumer_group_topic_lag", GAUGE, (CLUSTER, GROUP, TOPIC),
    "Messages the group has still to read on the topic (its partitions' lag summed), at the newest snapshot.",
    "sum of gold.consumer_lag.lag over the topic's partitions in the newest snapshot",
    "kminion_kafka_consumer_group_topic_lag")
PARTITION_LAG_SECONDS = Metric(
    "offsetlake_consumer_group_topic_partition_lag_seconds", GAUGE, (*PARTITION_LABELS, "estimator"),
    "How old the oldest message the group has still to read on the partition is, at the newest snapshot, by "
    "estimator (interpolated, message_timestamp).",
    "gold.consumer_lag.lag_seconds_interpolated (estimator=\"interpolated\") and "
    "lag_seconds_message_timestamp (estimator=\"message_timestamp\"); no sample where the estimate is null")
PARTITION_STATUS = Metric(
    "offsetlake_consumer_group_topic_partition_status", GAUGE, (*PARTITION_LABELS, "status"),
    f"Burrow's status of the partition at the newest snapshot, as Burrow's code "
    f"({status_codes(('OK', 'WARN', 'STOP', 'STALL', 'REWIND'))}); the status label names it.",
    "gold.consumer_lag.partition_status; no sample while nothing is committed")
GROUP_STATUS = Metric(
    "offsetlake_consumer_group_status", GAUGE, (CLUSTER, GROUP, "status"),
    f"Burrow's status of the group at the newest snapshot, as Burrow's code "
    f"({status_codes(('NOTFOUND', 'OK', 'WARN', 'ERR'))}); the status label names it.",
    "gold.consumer_lag.group_status (the worst partition status, STOP/STALL/REWIND reported as ERR)")
LAG_SNAPSHOT_TIME = Metric(
    "offsetlake_consumer_lag_snapshot_timestamp_seconds", GAUGE, (CLUSTER,),
    "When the end-offset snapshot the lag and status metrics are of was taken (Unix time).",
    "gold.consumer_lag.snapshot_time of the cluster's newest snapshot")
MEMBERS = Metric(
    "offsetlake_consumer_group_members", GAUGE, GROUP_LABELS,
    "Members of the group now, as its newest records list them.",
    "gold.group_membership rows without valid_to, for each group whose current state is not Dead",
    "kminion_kafka_consumer_group_members")
GROUP_INFO = Metric(
    "offsetlake_consumer_group_info", GAUGE, (CLUSTER, GROUP, "state", "group_type"),
    "1 when the group is Stable, else 0; the state label is its current state, group_type classic or consumer.",
    "gold.group_state_history's current row (until is null), for each group not Dead",
    "kminion_kafka_consumer_group_info")
REBALANCES = Metric(
    "offsetlake_consumer_group_rebalances_total", COUNTER, (CLUSTER, GROUP, "cause"),
    "Completed rebalances of the group, by likely cause.",
    "gold.rebalance_events rows with event_type 'rebalance', counted by likely_cause ('unknown' when null)")
LAST_REBALANCE = Metric(
    "offsetlake_consumer_group_last_rebalance_timestamp_seconds", GAUGE, GROUP_LABELS,
    "When the group's newest completed rebalance ended: Stable (or Empty) again (Unix time).",
    "max(gold.rebalance_events.stable_at) of the group's rebalances; time() minus it is the time since")
REBALANCING_SECONDS = Metric(
    "offsetlake_consumer_group_rebalancing_seconds_total", COUNTER, (*GROUP_LABELS, "bound"),
    "Seconds the group's members stood stopped by rebalances, summed over its rebalances, as a lower and an "
    "upper bound (the start of a classic rebalance is not recorded).",
    "sum of gold.rebalance_events.stopped_ms_lower_bound (bound=\"lower\") and stopped_ms_upper_bound "
    "(bound=\"upper\") over the group's rebalances, in seconds; rebalances without bounds add nothing")
LAST_STORM = Metric(
    "offsetlake_consumer_group_last_storm_timestamp_seconds", GAUGE, GROUP_LABELS,
    "When the group's newest rebalance flagged as part of a storm ended (Unix time).",
    "max(gold.rebalance_events.stable_at) where is_storm: at least gold.storm_rebalances rebalances within "
    "gold.storm_window_minutes")
TABLE_UP = Metric(
    "offsetlake_warehouse_table_up", GAUGE, (CLUSTER, "table"),
    "1 when the scrape read the gold table, 0 when it is not in the warehouse yet or could not be read.",
    "the warehouse, through delta-rs, at each scrape",
    "kminion_exporter_up")
READ_SECONDS = Metric(
    "offsetlake_warehouse_read_seconds", GAUGE, (CLUSTER,),
    "Seconds the scrape spent reading the warehouse.",
    "the collector's clock")

GROUP_METRICS: tuple[Metric, ...] = (
    PARTITION_LAG, TOPIC_LAG, PARTITION_LAG_SECONDS, PARTITION_STATUS, GROUP_STATUS, LAG_SNAPSHOT_TIME, MEMBERS,
    GROUP_INFO, REBALANCES, LAST_REBALANCE, REBALANCING_SECONDS, LAST_STORM, TABLE_UP, READ_SECONDS)
"""What ``offsetlake serve-metrics`` (and ``run --metrics-port``) read from the warehouse at each scrape."""

RUN_CYCLES = Metric(
    "offsetlake_run_cycles_total", COUNTER, RUN_LABELS,
    "Cycles of the main job: a micro-batch's gold refresh, or a snapshot and its lag refresh.",
    "offsetlake run's cycle reports (pipelines/main_job.py CycleReport)")
RUN_RECORDS = Metric(
    "offsetlake_run_records_total", COUNTER, RUN_LABELS,
    "Records of the source topic the job's cycles took into gold; rate() of it is records/s.",
    "the records of each cycle's micro-batches",
    "kminion_exporter_offset_consumer_records_consumed_total")
RUN_FRESHNESS = Metric(
    "offsetlake_run_freshness_seconds", GAUGE, RUN_LABELS,
    "At the end of the last cycle, how old the newest source record visible in gold was.",
    "CycleReport.freshness (the line 'run: ... freshness N s'); no sample before a record reached gold")
RUN_DISTANCE = Metric(
    "offsetlake_run_topic_distance_records", GAUGE, RUN_LABELS,
    "Records of the source topic gold had not read at the last cycle: the topic's end minus what was read, "
    "summed over its partitions.",
    "the topic's end offsets (ListOffsets) against the cycle's Visibility.end_offsets; no sample while the "
    "cluster does not answer")
RUN_LAST_SUCCESS = Metric(
    "offsetlake_run_last_success_timestamp_seconds", GAUGE, RUN_LABELS,
    "When the job's last cycle ended with gold refreshed (Unix time).",
    "CycleReport.visibility.at")
RUN_SNAPSHOTS = Metric(
    "offsetlake_run_snapshots_total", COUNTER, (*RUN_LABELS, "outcome"),
    "End-offset snapshots the job tried, by outcome (taken, failed).",
    "CycleReport.snapshot")

RUN_METRICS: tuple[Metric, ...] = (RUN_CYCLES, RUN_RECORDS, RUN_FRESHNESS, RUN_DISTANCE, RUN_LAST_SUCCESS,
                                   RUN_SNAPSHOTS)
"""What ``offsetlake run --metrics-port`` adds: the job's own health, fed by its loop."""

METRICS: tuple[Metric, ...] = (*GROUP_METRICS, *RUN_METRICS)
BY_NAME = {metric.name: metric for metric in METRICS}


def reference_table() -> str:
    """docs/metrics.md's reference: a Markdown table of every metric (the test of the docs compares it)."""
    lines = ["| metric | type | labels | meaning | from | kminion |", "|---|---|---|---|---|---|"]
    for m in METRICS:
        labels = ", ".join(f"`{label}`" for label in m.labels)
        kminion = f"`{m.kminion}`" if m.kminion else "–"
        lines.append(f"| `{m.name}` | {m.kind} | {labels} | {m.help} | {m.source} | {kminion} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(reference_table())
