"""Warehouses of real consumer traffic, built on a broker of their own in a background thread while other tests run.

Why: building one is mostly waiting, not computing. The real-traffic warehouse (tests/real_traffic.py), the
sample warehouse (tests/dashboard/sample_warehouse.py), the KIP-848 groups of
tests/pipelines/gold/kip848_traffic.py and the DAG's groups (tests/dags/dag_traffic.py) wait for consumer
sessions to expire (6 s each, the broker's minimum), for rebalances and for readers to catch up: 75 s, 45 s,
39 s and ~10 s of a serial run's wall time, mostly with a core idle (a serial run used ~60 % of the two cores,
issue 11's note). Built beside the rest of the suite, most of that wait is hidden: 13 min 17 s of pytest
before, 11 min 17 s after (2026-11-26, the same machine and hour; the CPU is then 80-95 % busy while the
builds run). The scenario warehouse (tests/pipelines/scenario_warehouse.py) and the maintained one
(tests/pipelines/maintained_warehouse.py) are built last: they are CPU work, not waiting, and overlap the second
half of the suite, when one core was idle about a third of the time. Last, the offsets_ingest DAG's run
(tests/dags/dag_run.py): a ``dag.test()`` in a process of its own, whose task starts a CLI JVM; it overlaps
the tests that come after the builds instead of waiting for the DAG tests at the end.
Moving more waiting there does not pay: the simulator's real-consumer runs (19 s of waiting) moved there took the
CPU the early foreground needed (the real-traffic build 80 s -> 96-116 s; 2026-11-26 22:36-23:43).

Why a second broker: each build ingests ``__consumer_offsets`` from where it ends when the build starts
(tests/ingest_scope.py). On the session broker it would also ingest the groups of tests running meanwhile, and
its tables would depend on which tests ran beside it. On a broker of its own, with the builds one after the
other, a warehouse holds exactly its own traffic, as when it was built in line.

Why a cluster name of its own (``CLUSTER``): the builds share the session's SparkSession with the tests running
meanwhile, and Spark refuses a second active streaming query of the same name; the ingest names its query after
the cluster and the topic (pipelines/ingest.py), so a background ingest of ``__consumer_offsets`` and a test's
would collide.

The tests that use a background warehouse run after the others (``order_items``), so the builds have the
rest of the suite to hide behind; a test that needs one before it is ready waits for it. A build that fails
fails every test using it, with the build's own exception.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from pathlib import Path
from typing import Any

import pytest

CLUSTER = "background"

#: Session fixtures built in the background, in the order they are built (and their tests run).
BACKGROUND_FIXTURES = ("real_traffic_warehouse", "sample_traffic_warehouse", "kip848_traffic_warehouse",
                       "dag_traffic_warehouse", "scenario_warehouse", "maintained_warehouse", "offsets_ingest_dag_run")


def _real_traffic(spark: Any, broker: Any, base_settings: Any, root: Path, built: Callable[[str], Any]) -> Any:
    from tests.real_traffic import build_real_traffic

    return build_real_traffic(spark, broker, base_settings, root)


def _sample(spark: Any, broker: Any, base_settings: Any, root: Path, built: Callable[[str], Any]) -> Any:
    from tests.dashboard.sample_warehouse import build_sample_warehouse

    return build_sample_warehouse(spark, broker, base_settings, root)


def _kip848(spark: Any, broker: Any, base_settings: Any, root: Path, built: Callable[[str], Any]) -> Any:
    from tests.pipelines.gold.kip848_traffic import build_kip848_traffic

    return build_kip848_traffic(spark, broker, base_settings, root)


def _dag(spark: Any, broker: Any, base_settings: Any, root: Path, built: Callable[[str], Any]) -> Any:
    from tests.dags.dag_traffic import build_dag_traffic

    return build_dag_traffic(spark, broker, base_settings, root)


def _scenarios(spark: Any, broker: Any, base_settings: Any, root: Path, built: Callable[[str], Any]) -> Any:
    from tests.pipelines.scenario_warehouse import build_scenario_warehouse

    return build_scenario_warehouse(spark, broker, base_settings, root)


def _maintained(spark: Any, broker: Any, base_settings: Any, root: Path, built: Callable[[str], Any]) -> Any:
    from tests.pipelines.maintained_warehouse import build_maintained_warehouse

    return build_maintained_warehouse(spark, broker, base_settings, root)


def _offsets_ingest_dag_run(spark: Any, broker: Any, base_settings: Any, root: Path,
                            built: Callable[[str], Any]) -> Any:
    from tests.dags.dag_run import run_offsets_ingest

    return run_offsets_ingest(built("dag_traffic_warehouse"), root)


#: name -> build(spark, the builds' broker, settings, a directory of its own, ``built``: an earlier build's result)
BUILDS: dict[str, Callable[[Any, Any, Any, Path, Callable[[str], Any]], Any]] = {
    "real_traffic_warehouse": _real_traffic,
    "sample_traffic_warehouse": _sample,
    "kip848_traffic_warehouse": _kip848,
    "dag_traffic_warehouse": _dag,
    "scenario_warehouse": _scenarios,
    "maintained_warehouse": _maintained,
    "offsets_ingest_dag_run": _offsets_ingest_dag_run,
}


def fixtures_needed(items: list[pytest.Item]) -> list[str]:
    """The background fixtures some selected test uses, in build order."""
    used = set().union(*(getattr(item, "fixturenames", ()) for item in items)) if items else set()
    return [name for name in BACKGROUND_FIXTURES if name in used]


def order_items(items: list[pytest.Item]) -> None:
    """Move every module that uses a background warehouse after the others (a stable sort: whole modules, so
    that module fixtures are set up once), those of the first-built warehouse first."""
    rank: dict[Path, int] = {}
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        for position, name in enumerate(BACKGROUND_FIXTURES, start=1):
            if name in names:
                path = Path(str(item.path))
                rank[path] = min(rank.get(path, position), position)
    items.sort(key=lambda item: rank.get(Path(str(item.path)), 0))


class BackgroundBuilds:
    """One daemon thread: start a broker of its own, then build each needed warehouse in turn."""

    def __init__(self, spark: Any, base_settings: Any, root: Path, needed: list[str]) -> None:
        self._spark, self._root = spark, root
        self._base_settings = base_settings.model_copy(update={"cluster_name": CLUSTER})
        self._futures: dict[str, Future[Any]] = {name: Future() for name in needed}
        self.timings: list[str] = []
        self.broker: Any = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="background-warehouses", daemon=True)

    def start(self) -> BackgroundBuilds:
        self._thread.start()
        return self

    def _run(self) -> None:
        from broker.embedded import EmbeddedBroker

        try:
            started = time.monotonic()
            self.broker = EmbeddedBroker(self._root / "traffic-broker")
            self.broker.start()
            self.timings.append(f"{time.monotonic() - started:6.1f} s  the traffic broker")
        except BaseException as exc:  # noqa: BLE001 - every waiting test gets the reason
            for future in self._futures.values():
                future.set_exception(exc)
            return
        for name, future in self._futures.items():
            started = time.monotonic()
            try:
                future.set_result(BUILDS[name](self._spark, self.broker, self._base_settings, self._root / name,
                                                self.result))
            except BaseException as exc:  # noqa: BLE001 - the tests using it fail with it
                future.set_exception(exc)
            self.timings.append(f"{time.monotonic() - started:6.1f} s  {name}")
        # The broker was started with PR_SET_PDEATHSIG (broker/embedded.py): Linux sends that signal when the
        # *thread* that started the process exits, so this thread lives as long as the broker.
        self._stopping.wait()

    def result(self, name: str) -> Any:
        """The warehouse ``name``, waiting for its build if need be (its exception if it failed)."""
        if name not in self._futures:
            raise KeyError(f"{name} was not scheduled: tests/conftest.py computes what the selected tests use")
        return self._futures[name].result()

    def stop(self) -> None:
        wait(self._futures.values(), timeout=600)  # a build still running: let it end before its broker does
        if self.broker is not None:
            self.broker.stop()
        self._stopping.set()
        self._thread.join(timeout=60)
