"""The main job's own health (``offsetlake run --metrics-port``): cycles, records, freshness, distance to the end.

Fed by the run loop one cycle report at a time (``RunHealth.observe``, the ``on_cycle`` hook of
``pipelines.main_job.run_main_job``), read by Prometheus between cycles: what a cycle knows is already in its
``CycleReport`` (its batches' records and end offsets, freshness, when it ended), so the job does no extra
work for its metrics but one ListOffsets per cycle for the distance to the topic's end, as the ingest's line
does per batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from metrics import catalog as C

if TYPE_CHECKING:
    from pipelines.main_job import CycleReport

SNAPSHOT_OUTCOMES = ("taken", "failed")


class RunHealth(Collector):
    """``catalog.RUN_METRICS`` of one run: ``observe`` each cycle report, ``collect`` at each scrape.

    ``topic_ends``: the source topic's end offsets (partition -> offset) now; its failures (an unreachable
    cluster) leave the distance out until a later cycle measures it.
    """

    def __init__(self, cluster: str, topic: str,
                 topic_ends: Callable[[], Mapping[int, int]] | None = None) -> None:
        self._labels = [cluster, topic]
        self._topic_ends = topic_ends
        self._lock = threading.Lock()
        self.cycles = 0
        self.records = 0
        self.snapshots = dict.fromkeys(SNAPSHOT_OUTCOMES, 0)
        self.freshness: float | None = None
        self.distance: int | None = None
        self.last_success: float | None = None

    def observe(self, report: CycleReport) -> None:
        distance = self._distance(report)
        with self._lock:
            self.cycles += 1
            self.records += sum(batch.records for batch in report.batches)
            if report.snapshot is not None:
                self.snapshots["taken" if report.snapshot == "taken" else "failed"] += 1
            if report.freshness is not None:
                self.freshness = report.freshness
            if report.visibility is not None:
                self.last_success = report.visibility.at.timestamp()
            self.distance = distance

    def _distance(self, report: CycleReport) -> int | None:
        """Records of the topic past what the cycle's batches had read, or None when not known. A run's first
        cycles, before its first batch, have read nothing yet (the ingest resumes from its checkpoint): unknown."""
        reached = report.visibility.end_offsets if report.visibility is not None else {}
        if not reached or self._topic_ends is None:
            return None
        try:
            ends = self._topic_ends()
        except Exception:  # noqa: BLE001 - the cluster may be briefly unreachable; the next cycle asks again
            return None
        return sum(max(0, end - reached.get(partition, 0)) for partition, end in ends.items())

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            for metric, value in ((C.RUN_CYCLES, self.cycles), (C.RUN_RECORDS, self.records)):
                family = CounterMetricFamily(metric.family_name, metric.help, labels=metric.labels)
                family.add_metric(self._labels, value)
                yield family
            snapshots = CounterMetricFamily(C.RUN_SNAPSHOTS.family_name, C.RUN_SNAPSHOTS.help,
                                            labels=C.RUN_SNAPSHOTS.labels)
            for outcome, count in self.snapshots.items():
                snapshots.add_metric([*self._labels, outcome], count)
            yield snapshots
            for metric, known in ((C.RUN_FRESHNESS, self.freshness), (C.RUN_DISTANCE, self.distance),
                                  (C.RUN_LAST_SUCCESS, self.last_success)):
                gauge = GaugeMetricFamily(metric.name, metric.help, labels=metric.labels)
                if known is not None:
                    gauge.add_metric(self._labels, known)
                yield gauge
