"""Benchmark: offsetlake at 10,000 groups — the main job, checks, dashboard and queries, timed.

    .venv/bin/python bench/scale.py                                   # 10,000 groups, 10M commits (~20 min)
    .venv/bin/python bench/scale.py --groups 500 --commits 300000     # a quick look (~8 min)
    .venv/bin/python bench/scale.py --keep                            # keep the warehouse and the logs, then
    .venv/bin/python bench/scale.py --reuse /tmp/offsetlake-bench-scale-XXXX   # steps 4-7 again on it

What it does, on the embedded broker, each step in processes of its own as a user would run them:

1. **generate**: a week of history for ``--groups`` groups (``bench/scale_history.py``: the reference
   coordinator's records for each kind of group, moved to each group's own episodes; ``--commits`` offset
   commits) produced into a topic of ``--partitions`` partitions (a group's records on one partition, as
   the coordinator writes them); the records/s Kafka accepted them at is the baseline the main job's
   records/s is printed beside;
2. **snapshots**: end-offset snapshots of every partition those groups read (every 5 minutes through the
   last hour, hourly before), written by ``pipelines.end_offsets.append_snapshot`` (the topics exist only in
   the generated history, so the broker cannot be asked);
3. **run --once**: ``offsetlake run --once`` (ingest, silver, gold, lag);
4. **check**: ``offsetlake check --json``;
5. **dashboard**: ``offsetlake dashboard``; the page's size, and its load and render time in headless
   Chromium (``--dump-dom``, minus the same browser on an empty page);
6. **dashboard --serve**: the summary page, then a 1,000-partition group's own page, each fetched and timed;
7. **queries**: the five typical questions over ``offsetlake serve-sql`` (a warm Spark, PyHive; each asked
   twice), then through ``offsetlake sql`` as it answers by default (``--engine auto``: delta-rs's embedded
   engine, Spark when it cannot) and with ``--engine spark`` (a new JVM), each in a process of its own: the
   query's own time (printed by ``offsetlake sql`` apart from the engine's start-up) and the process's. The
   lag question's answer is checked by eye against the planned lagging groups, printed at the end. The last
   line's slowest query is the slowest of the default paths (``offsetlake sql``, serve-sql's first answer);
   ``--engine spark``'s, mostly its new JVM's warm-up, is printed beside it.

Memory: the process tree (this script, the broker's JVM, each command's Python driver, Spark's JVM, Spark's
Python workers) is sampled every 0.2 s with psutil; each step's peak of the sum and of each kind of process
is printed. The last line sums the run up:
``scale: G groups, A assignment rows, C commits, peak X.X GiB, slowest query Y.Y s``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.results import add_results_argument, start, write_result  # noqa: E402

if TYPE_CHECKING:
    from bench.scale_history import ClusterPlan

ROOT = Path(__file__).resolve().parent.parent
OFFSETLAKE = str(ROOT / ".venv" / "bin" / "offsetlake")
TOPIC = "scale-offsets"
GIB = 1024 ** 3


# --- memory ------------------------------------------------------------------------------------------------

def process_kind(cmdline: list[str]) -> str:
    """Which part of the run a process is, from its command line."""
    text = " ".join(cmdline)
    if "java" in (cmdline[0] if cmdline else ""):
        return "spark-jvm" if "org.apache.spark" in text else "broker-jvm"
    if "pyspark.daemon" in text or "pyspark.worker" in text or "pyspark/daemon" in text:
        return "python-workers"
    if "offsetlake" in text or "bench/scale.py snapshots" in text:
        return "driver"
    if "chromium" in text or "chrome" in text:
        return "browser"
    return "bench"


@dataclass
class MemoryPeaks:
    total: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)


class MemorySampler:
    """Samples the resident memory of this process and all its descendants; peaks per step."""

    def __init__(self, every: float = 0.2) -> None:
        import psutil

        self._psutil = psutil
        self._me = psutil.Process()
        self._every = every
        self._peaks = MemoryPeaks()
        self.whole = MemoryPeaks()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            by_kind: dict[str, int] = {}
            for proc in [self._me, *self._me.children(recursive=True)]:
                try:
                    kind = process_kind(proc.cmdline())
                    by_kind[kind] = by_kind.get(kind, 0) + proc.memory_info().rss
                except (self._psutil.NoSuchProcess, self._psutil.AccessDenied, self._psutil.ZombieProcess):
                    continue
            total = sum(by_kind.values())
            with self._lock:
                for peaks in (self._peaks, self.whole):
                    peaks.total = max(peaks.total, total)
                    for kind, rss in by_kind.items():
                        peaks.by_kind[kind] = max(peaks.by_kind.get(kind, 0), rss)

    def step(self) -> MemoryPeaks:
        """The peaks since the last call, and start afresh."""
        with self._lock:
            peaks, self._peaks = self._peaks, MemoryPeaks()
        return peaks

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@dataclass(frozen=True)
class StepResult:
    name: str
    seconds: float
    memory: MemoryPeaks
    note: str = ""


def describe_memory(peaks: MemoryPeaks) -> str:
    kinds = ", ".join(f"{k} {v / GIB:.2f}" for k, v in sorted(peaks.by_kind.items(), key=lambda kv: -kv[1]))
    return f"peak {peaks.total / GIB:.2f} GiB ({kinds})"


def load_text() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# --- producing ---------------------------------------------------------------------------------------------

def produce_history(bootstrap: str, groups: int, commits: int, days: float, partitions: int, end_ms: int
                    ) -> tuple[int, int, ClusterPlan]:
    """Generate and produce the history; returns (records, commits, the plan)."""
    from confluent_kafka import Producer

    from bench.scale_history import (
        ARCHETYPES,
        commit_rounds,
        group_records,
        merged,
        plan_cluster,
        simulate_template,
        steady_commits,
    )

    started = time.perf_counter()
    templates = {kind.name: simulate_template(kind) for kind in ARCHETYPES}
    print(f"  templates: {len(templates)} kinds of group simulated by the reference coordinator in "
          f"{time.perf_counter() - started:.1f} s", flush=True)
    plan = plan_cluster(groups, end_ms, days)
    rounds = commit_rounds(plan, commits)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.num.messages": 20000,
                         "compression.type": "lz4", "queue.buffering.max.messages": 500000})
    records = commit_count = 0
    for n, group in enumerate(plan.groups):
        # Kafka puts a group on partition abs(hashCode) % partitions; any stable hash keeps its records together.
        partition = zlib.crc32(group.group.encode()) % partitions
        for key, value, at in merged(group_records(templates[group.kind.name], group),
                                     steady_commits(plan, group, rounds)):
            while True:
                try:
                    producer.produce(TOPIC, key=key, value=value, partition=partition, timestamp=at)
                    break
                except BufferError:
                    producer.poll(0.05)
            records += 1
            commit_count += key[1] == 1 and key[0] == 0
            if records % 20000 == 0:
                producer.poll(0)
        if (n + 1) % max(1, len(plan.groups) // 10) == 0:
            print(f"  produced {n + 1:,} of {len(plan.groups):,} groups, {records:,} records", flush=True)
    assert producer.flush(300) == 0, "the broker did not take every record"
    return records, commit_count, plan


def write_snapshots(config: Path, groups: int, end_ms: int, days: float) -> None:
    """In a process of its own (``bench/scale.py snapshots``): the plan's end-offset snapshots."""
    from bench.scale_history import plan_cluster, snapshot_partitions, snapshot_times
    from conf.settings import load_settings
    from pipelines.end_offsets import EndOffsetsSnapshot, PartitionEndOffsets, append_snapshot
    from pipelines.spark_session import build_spark_session

    settings = load_settings(str(config))
    spark = build_spark_session(settings)
    plan = plan_cluster(groups, end_ms, days)
    for at in snapshot_times(plan):
        parts = tuple(PartitionEndOffsets(t, p, earliest, latest, latest, topic_id=topic_id)
                      for t, p, earliest, latest, topic_id in snapshot_partitions(plan, at))
        append_snapshot(spark, settings, EndOffsetsSnapshot(settings.cluster_name, at, parts))
    spark.stop()


# --- the steps --------------------------------------------------------------------------------------------

def run_command(args: list[str], env: dict[str, str], log: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    with log.open("a", encoding="utf-8") as fh:
        fh.write(f"$ {' '.join(args)}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}\n")
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"scale: {' '.join(args[1:3])} failed (exit {result.returncode}): {last}; see {log}")
    return result


def chromium_seconds(page: Path) -> tuple[float, int]:
    """Seconds for headless Chromium to load and render ``page`` (less an empty page's), and the DOM's size."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("scale: Debian's chromium is not installed: run `make browser`")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--virtual-time-budget=60000", "--dump-dom"]
    empty = page.with_name("empty.html")
    empty.write_text("<!DOCTYPE html><html><body></body></html>", encoding="utf-8")

    def timed(target: Path) -> tuple[float, str]:
        started = time.perf_counter()
        out = subprocess.run([browser, *flags, target.as_uri()], capture_output=True, text=True, timeout=600,
                             check=False)
        return time.perf_counter() - started, out.stdout

    base, _ = timed(empty)
    seconds, dom = timed(page)
    return max(0.0, seconds - base), len(dom)


@dataclass(frozen=True)
class Query:
    name: str
    sql: str


def typical_queries(plan: ClusterPlan, end_ms: int) -> list[Query]:
    """The five typical questions, on groups and a moment the generated history has answers for."""
    big = next(g for g in plan.groups if g.kind.name == "cooperative-big")
    storm = next(g for g in plan.groups if g.kind.storm)
    moment = (big.episodes[1] + big.episodes[2]) // 2
    at = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(moment / 1000))
    return [
        Query("top 20 groups by rebalances in the last 24 h",
              "SELECT `group`, rebalances_last_24h, rebalances, most_common_cause "
              "FROM dashboards.top_rebalancing_groups WHERE rebalances_last_24h > 0 "
              "ORDER BY rebalances_last_24h DESC, `group` LIMIT 20"),
        Query(f"who owned partition 7 of {big.topic} at {at}",
              f"SELECT `group`, member_id, client_id, generation, valid_from, valid_to "
              f"FROM dashboards.partition_ownership WHERE topic = '{big.topic}' AND `partition` = 7 "
              f"AND valid_from <= TIMESTAMP '{at}' AND (valid_to IS NULL OR valid_to > TIMESTAMP '{at}')"),
        Query(f"membership history of {big.group}",
              f"SELECT member_id, client_id, valid_from, valid_to FROM gold.group_membership "
              f"WHERE `group` = '{big.group}' ORDER BY valid_from, member_id"),
        Query("groups whose lag grew through the last hour",
              "WITH hourly AS (SELECT `group`, snapshot_time, total_lag FROM dashboards.lag_over_time "
              "WHERE snapshot_time >= current_timestamp() - INTERVAL 1 HOUR), "
              "ends AS (SELECT `group`, min(snapshot_time) AS first_at, max(snapshot_time) AS last_at, "
              "count(*) AS snapshots FROM hourly GROUP BY `group`) "
              "SELECT e.`group`, f.total_lag AS lag_an_hour_ago, l.total_lag AS lag_now, e.snapshots FROM ends e "
              "JOIN hourly f ON f.`group` = e.`group` AND f.snapshot_time = e.first_at "
              "JOIN hourly l ON l.`group` = e.`group` AND l.snapshot_time = e.last_at "
              "WHERE l.total_lag > f.total_lag ORDER BY l.total_lag - f.total_lag DESC, e.`group`"),
        Query(f"rebalance timeline of {storm.group}",
              f"SELECT stable_at, from_generation, to_generation, likely_cause, members_after, partitions_moved "
              f"FROM dashboards.rebalance_timeline WHERE `group` = '{storm.group}' ORDER BY stable_at"),
    ]


_ROWS = re.compile(r"^(\d+) rows in (\d+\.\d+) s", re.MULTILINE)


def run_query(query: Query, engine: str, env: dict[str, str], log: Path) -> tuple[int, float, float]:
    """(rows, the query's own seconds, the command's seconds) of ``offsetlake sql``."""
    started = time.perf_counter()
    result = run_command([OFFSETLAKE, "sql", "--engine", engine, "--limit", "0", "--format", "csv", query.sql],
                         env, log)
    wall = time.perf_counter() - started
    found = _ROWS.search(result.stderr)
    if found is None:
        raise SystemExit(f"scale: offsetlake sql printed no 'N rows in X s' line for {query.name!r}; see {log}")
    return int(found.group(1)), float(found.group(2)), wall


@contextlib.contextmanager
def serving(args: list[str], env: dict[str, str], log: Path, ready: str, timeout: float = 600.0
            ) -> Iterator[subprocess.Popen[str]]:
    """A long-running command, once it printed a line starting with ``ready`` (on stdout or stderr)."""
    out = log.with_name(log.stem + "-" + Path(args[1]).name + ".log")
    with out.open("w", encoding="utf-8") as sink:
        process = subprocess.Popen(args, env=env, stdout=sink, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + timeout
            while ready not in out.read_text(encoding="utf-8", errors="replace"):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"scale: {' '.join(args[1:3])} never said {ready!r}; see {out}")
                time.sleep(0.2)
            yield process
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()


def served_queries(queries: list[Query], env: dict[str, str], log: Path,
                   step: Callable[..., None]) -> float:
    """The queries over ``offsetlake serve-sql`` (a warm Spark, as a dashboard tool asks it), twice each; the
    slowest first answer."""
    from pyhive import hive

    from broker.embedded import free_port

    port = free_port()
    started = time.perf_counter()
    slowest = 0.0
    with serving([OFFSETLAKE, "serve-sql", "--port", str(port)], env, log, "serve-sql: ready"):
        step("serve-sql: start to ready", started)
        with contextlib.closing(hive.connect(host="127.0.0.1", port=port, username="bench")) as connection:
            for query in queries:
                times = []
                for _ in range(2):
                    began = time.perf_counter()
                    with contextlib.closing(connection.cursor()) as cursor:
                        cursor.execute(query.sql)
                        rows = len(cursor.fetchall())
                    times.append(time.perf_counter() - began)
                slowest = max(slowest, times[0])
                step(f"query [serve-sql] {query.name}", began, f"{rows:,} rows, first {times[0]:.2f} s, "
                     f"again {times[1]:.2f} s")
    return slowest


def served_dashboard(env: dict[str, str], log: Path, plan: ClusterPlan, step: Callable[..., None]) -> None:
    """``offsetlake dashboard --serve``: the summary page, then the biggest group's page, each timed."""
    import urllib.parse
    import urllib.request

    from broker.embedded import free_port

    port = free_port()
    big = next(g for g in plan.groups if g.kind.name == "cooperative-big")
    with serving([OFFSETLAKE, "dashboard", "--serve", "--port", str(port)], env, log, "dashboard: serving"):
        for what, path in (("summary page", "/"), (f"{big.group}'s page", f"/group/{urllib.parse.quote(big.group)}")):
            started = time.perf_counter()
            size = len(urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=600).read())
            step(f"dashboard --serve: {what}", started, f"{size / 2**20:.1f} MiB")


def table_count(env: dict[str, str], log: Path, sql: str) -> int:
    result = run_command([OFFSETLAKE, "sql", "--engine", "delta-rs", "--format", "csv", sql], env, log)
    return int(result.stdout.splitlines()[1])


def build_warehouse(args: argparse.Namespace, work: Path, config: Path, env: dict[str, str], log: Path,
                    end_ms: int, step: Callable[..., None]) -> tuple[int, ClusterPlan, dict[str, float]]:
    """Steps 1-3: the history into the broker, the snapshots, ``offsetlake run --once``; returns the commits, the
    plan and the main job's records/s beside the rate Kafka accepted the records at (the baseline)."""
    from broker.embedded import EmbeddedBroker
    from broker.workload import create_topic

    with EmbeddedBroker(work / "broker", heap="1g") as broker:
        create_topic({"bootstrap.servers": broker.bootstrap_servers}, TOPIC, partitions=args.partitions,
                     config={"retention.ms": "-1"})
        config.write_text(
            f'cluster_name = "scale"\nwarehouse = "{work / "warehouse"}"\n'
            f'[spark]\ndriver_memory = "{args.driver_memory}"\nshuffle_partitions = 4\nlog_level = "ERROR"\n'
            f'[kafka]\nbootstrap_servers = "{broker.bootstrap_servers}"\n'
            f'[lag]\nmessage_timestamps = false\n', encoding="utf-8")
        started = time.perf_counter()
        records, commits, plan = produce_history(broker.bootstrap_servers, args.groups, args.commits, args.days,
                                                 args.partitions, end_ms)
        produce_rate = records / (time.perf_counter() - started)
        step("generate and produce", started, f"{records:,} records ({commits:,} commits), "
             f"{produce_rate:,.0f} records/s")
        (work / "bench.json").write_text(json.dumps({"groups": args.groups, "days": args.days, "end_ms": end_ms,
                                                     "commits": commits}), encoding="utf-8")

        started = time.perf_counter()
        run_command([sys.executable, __file__, "snapshots", str(config), str(args.groups), str(end_ms),
                     str(args.days)], env, log)
        step("end-offset snapshots", started)

        started = time.perf_counter()
        run_command([OFFSETLAKE, "run", "--once", "--topic", TOPIC], env, log)
        seconds = time.perf_counter() - started
        step("offsetlake run --once", started, f"{records / seconds:,.0f} records/s "
             f"(baseline: produced at {produce_rate:,.0f} records/s)")
    return commits, plan, {"run_once_records_per_second": round(records / seconds),
                           "produced_records_per_second": round(produce_rate)}


def analyse(work: Path, env: dict[str, str], log: Path, plan: ClusterPlan, step: Callable[..., None]) -> None:
    """Steps 4-5: ``offsetlake check`` and the dashboard (a failure is reported, and the queries still run)."""
    started = time.perf_counter()
    check = subprocess.run([OFFSETLAKE, "check", "--json", str(work / "check.json")], env=env, capture_output=True,
                           text=True, check=False)
    with log.open("a", encoding="utf-8") as fh:
        fh.write(f"$ offsetlake check\n{check.stdout[-20000:]}\n{check.stderr[-20000:]}\n")
    step("offsetlake check", started, f"exit {check.returncode} (1: an expectation failed)")
    if check.returncode not in (0, 1):
        raise SystemExit(f"scale: offsetlake check failed (exit {check.returncode}); see {log}")

    page = work / "dashboard.html"
    started = time.perf_counter()
    try:
        run_command([OFFSETLAKE, "dashboard", "--out", str(page)], env, log)
    except SystemExit as failed:
        step("offsetlake dashboard", started, f"FAILED: {failed}")
        return
    step("offsetlake dashboard", started, f"{page.stat().st_size / 2**20:.1f} MiB of HTML")
    started = time.perf_counter()
    render, dom = chromium_seconds(page)
    step("dashboard in headless Chromium", started, f"render {render:.1f} s, DOM {dom / 2**20:.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--commits", type=int, default=10_000_000, help="offset commits in the history")
    parser.add_argument("--days", type=float, default=7.0, help="days of history")
    parser.add_argument("--partitions", type=int, default=8, help="partitions of the offsets topic")
    parser.add_argument("--driver-memory", default="4g", help="spark.driver.memory of each Spark command")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (warehouse, logs)")
    parser.add_argument("--reuse", metavar="WORK",
                        help="skip generating and the main job: check, dashboard and queries on a kept work directory")
    add_results_argument(parser)
    args = parser.parse_args()
    run = start("scale", args)


    work = Path(args.reuse) if args.reuse else Path(tempfile.mkdtemp(prefix="offsetlake-bench-scale-"))
    log = work / "commands.log"
    sampler = MemorySampler()
    steps: list[StepResult] = []

    def step(name: str, started: float, note: str = "") -> None:
        result = StepResult(name, time.perf_counter() - started, sampler.step(), note)
        steps.append(result)
        print(f"{name}: {result.seconds:.1f} s, {describe_memory(result.memory)}; load {load_text()}"
              + (f"; {note}" if note else ""), flush=True)

    print(f"scale benchmark: {args.groups:,} groups, {args.commits:,} commits, {args.days:g} days; work {work}; "
          f"load {load_text()}", flush=True)
    config = work / "offsetlake.toml"
    env = {**os.environ, "OFFSETLAKE_CONFIG": str(config)}
    if args.reuse:
        # The warehouse of an earlier run (--keep): the same plan, from the same arguments and end time.
        from bench.scale_history import plan_cluster

        saved = json.loads((work / "bench.json").read_text(encoding="utf-8"))
        args.groups, args.days, end_ms, commits = saved["groups"], saved["days"], saved["end_ms"], saved["commits"]
        plan = plan_cluster(args.groups, end_ms, args.days)
        rates: dict[str, float] = {}
    else:
        end_ms = int(time.time() * 1000)
        commits, plan, rates = build_warehouse(args, work, config, env, log, end_ms, step)
    analyse(work, env, log, plan, step)
    served_dashboard(env, log, plan, step)
    assignments = table_count(env, log, "SELECT count(*) FROM gold.partition_assignments")
    queries = typical_queries(plan, end_ms)
    slowest_by = {"serve-sql (first answer)": served_queries(queries, env, log, step)}
    for query in queries:
        # auto: what `offsetlake sql` does by default (the embedded engine, Spark when it cannot answer);
        # spark: the same question in a new Spark JVM, as --engine spark asks it.
        for engine in ("auto", "spark"):
            started = time.perf_counter()
            rows, own, wall = run_query(query, engine, env, log)
            path = f"offsetlake sql --engine {engine}"
            slowest_by[path] = max(slowest_by.get(path, 0.0), own)
            step(f"query [{engine}] {query.name}", started, f"{rows:,} rows, query {own:.2f} s, "
                 f"command {wall:.1f} s")
    sampler.stop()
    print(f"\nplanned lagging groups (the lag query should list them): {sum(g.lagging for g in plan.groups):,}")
    print(f"\n{'step':<72} {'seconds':>9} {'peak GiB':>9}")
    for s in steps:
        print(f"{s.name[:72]:<72} {s.seconds:9.1f} {s.memory.total / GIB:9.2f}")
    print(f"whole run: {describe_memory(sampler.whole)}; load {load_text()}; logs in {log}")
    print("slowest query: " + "; ".join(f"{path} {seconds:.2f} s" for path, seconds in slowest_by.items()))
    # The last line's figure: the slowest answer a user waits for on the default paths (offsetlake sql, serve-sql);
    # --engine spark's first query in a new JVM is printed above and beside, not in it.
    slowest = max(seconds for path, seconds in slowest_by.items() if "--engine spark" not in path)
    if not args.keep and not args.reuse:
        shutil.rmtree(work, ignore_errors=True)
    line = (f"scale: {args.groups:,} groups, {assignments:,} assignment rows, {commits:,} commits, "
            f"peak {sampler.whole.total / GIB:.1f} GiB, slowest query {slowest:.1f} s")
    write_result(run, {"slowest_query_seconds": round(slowest, 2), "peak_gib": round(sampler.whole.total / GIB, 2),
                       "assignment_rows": assignments, "commits": commits,
                       "run_once_records_per_second": rates.get("run_once_records_per_second"),
                       "slowest_query_seconds_by_path": {path: round(s, 2) for path, s in slowest_by.items()},
                       "step_seconds": {s.name: round(s.seconds, 1) for s in steps}},
                 {"produced_records_per_second": rates["produced_records_per_second"]} if rates else None, line)
    print(line)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "snapshots":
        write_snapshots(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    else:
        main()
