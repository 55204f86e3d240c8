"""Benchmark: ``offsetlake run`` left running at a sustained rate: does anything grow with the running time?

    .venv/bin/python bench/soak.py                            # 30 minutes at 5,000 commit records/s (the soak)
    .venv/bin/python bench/soak.py --minutes 6 --rate 1000    # a quick look that the bench works

What it does, on the embedded broker: a producer writes what the group coordinator would append to
``__consumer_offsets`` into a topic of ``--partitions`` partitions (``--topic`` of ``offsetlake run``, as
bench/scale.py does; a sustained 5,000 commits/s from real clients is more than two cores give): ``--rate``
OffsetCommit records per second over ``--groups`` groups (a group's records on one partition, as the coordinator
writes them), and every minute a GroupMetadata record of a new generation for ``--rebalancing`` of them (a
rebalance's outcome). Beside it, ``offsetlake run --topic ...`` in a process of its own, as a user runs it, for
``--minutes``; its cycle lines (``run: batch ...: N records ...; freshness X s``) are read as they come.

Per ``--window`` minutes (default 5) it prints: the records/s the run absorbed, how far it is behind the topic's
end (records produced minus records absorbed), freshness p50/p95 over the window's cycles, the resident memory of
each kind of process (the run's Python driver, Spark's JVM, Spark's Python workers; psutil), the threads of the
driver, files and bytes per Delta table (live files through delta-rs; all files under the table, its log apart,
through pyarrow's file system) and the size of the streaming checkpoints and of the lag query's state store.
The last line:
``soak: N min at R records/s, freshness p95 first/last X/Y s, memory first/last A/B GiB, behind at end Z records``
(memory: the driver, Spark's JVM and the workers together, at the end of the first and of the last window).
The figures go to bench/results/soak.json (bench/results.py).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scale import GIB, OFFSETLAKE, load_text, process_kind  # noqa: E402

TOPIC = "soak-offsets"
#: The topics the groups commit to, and how many partitions each has.
SOURCE_TOPICS, SOURCE_PARTITIONS = 50, 12
CYCLE = re.compile(r"^run: (?:batch(?:es)? [\d-]+|no new batch): ([\d,]+) records .*freshness ([\d.,]+)s")


# --- the load ---------------------------------------------------------------------------------------------

def group_name(g: int) -> str:
    return f"soak-group-{g:05d}"


def rebalance_record(group: str, generation: int, topic: str) -> tuple[bytes, bytes]:
    """A GroupMetadata v3 record: the group stable at ``generation`` with two members sharing ``topic``'s
    partitions, which member has which moving with the generation (what a rebalance ends with)."""
    from decoders import encode_assignment, encode_record, encode_subscription

    members = []
    for m in range(2):
        mine = [p for p in range(SOURCE_PARTITIONS) if (p + generation) % 2 == m]
        members.append({
            "member_id": f"consumer-{group}-{m}-{generation:08d}", "group_instance_id": None,
            "client_id": f"consumer-{group}-{m}", "client_host": f"/10.0.0.{m + 1}",
            "rebalance_timeout": 300_000, "session_timeout": 45_000,
            "subscription_raw": encode_subscription({"topics": [topic], "user_data": None, "owned_partitions": [],
                                                     "generation_id": generation, "rack_id": None}, 3),
            "assignment_raw": encode_assignment({"partitions": [{"topic": topic, "partitions": mine}],
                                                 "user_data": None}, 3),
        })
    value = {"protocol_type": "consumer", "generation": generation, "protocol": "range",
             "leader": members[0]["member_id"], "current_state_timestamp": int(time.time() * 1000),
             "members": members}
    key, encoded = encode_record("group_metadata", {"group": group}, value, 3)
    assert encoded is not None
    return key, encoded


class Load:
    """``rate`` OffsetCommit records a second over ``groups`` groups, and every minute a rebalance of
    ``rebalancing`` of them, produced into ``TOPIC`` in a thread until ``stop``."""

    def __init__(self, bootstrap: str, rate: int, groups: int, rebalancing: int, partitions: int) -> None:
        from confluent_kafka import Producer

        self.rate, self.groups, self.rebalancing, self.partitions = rate, groups, rebalancing, partitions
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "compression.type": "lz4",
                                  "queue.buffering.max.messages": 1_000_000})
        self.produced = 0
        self.rebalances = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="soak-load", daemon=True)

    def start(self) -> Load:
        self._thread.start()
        return self

    def _produce(self, key: bytes, value: bytes, partition: int) -> None:
        while True:
            try:
                self.producer.produce(TOPIC, key=key, value=value, partition=partition)
                self.produced += 1
                return
            except BufferError:
                self.producer.poll(0.05)

    def _run(self) -> None:
        from decoders import encode_record

        try:
            offsets = [0] * self.groups
            generations = [1] * self.groups
            started = time.monotonic()
            next_rebalance = started
            sent = 0
            n = 0
            while not self._stop.is_set():
                now = time.monotonic()
                if now >= next_rebalance:
                    for g in range(self.rebalancing):
                        generations[g] += 1
                        key, value = rebalance_record(group_name(g), generations[g], self.topic_of(g))
                        self._produce(key, value, self.partition_of(g))
                    self.rebalances += 1
                    next_rebalance += 60.0
                due = int((now - started) * self.rate) - sent
                for _ in range(min(due, self.rate)):  # never more than a second's worth at once
                    g = n % self.groups
                    n += 1
                    offsets[g] += 7
                    key, value = encode_record(
                        "offset_commit", {"group": group_name(g), "topic": self.topic_of(g),
                                          "partition": (n // self.groups) % SOURCE_PARTITIONS},
                        {"offset": offsets[g], "metadata": "", "commit_timestamp": int(time.time() * 1000)}, 3)
                    self._produce(key, value, self.partition_of(g))
                    sent += 1
                self.producer.poll(0)
                self._stop.wait(0.05)
            self.producer.flush(60)
            self.producer = None  # its threads end with it, before the broker stops
        except BaseException as exc:  # noqa: BLE001 - reported by stop()
            self.error = exc

    def topic_of(self, g: int) -> str:
        return f"orders-{g % SOURCE_TOPICS:02d}"

    def partition_of(self, g: int) -> int:
        # Kafka puts a group on partition abs(hashCode) % partitions; any stable hash keeps its records together.
        return zlib.crc32(group_name(g).encode()) % self.partitions

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        if self.error is not None:
            raise RuntimeError(f"the load stopped: {self.error}") from self.error
        return self.produced


# --- what the run does -------------------------------------------------------------------------------------

@dataclass
class Cycles:
    """The run's cycle lines as they come: (time, records, freshness)."""

    seen: list[tuple[float, int, float]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def read(self, stream: Any, log: Any) -> None:
        for line in stream:
            log.write(line)
            log.flush()
            match = CYCLE.match(line)
            if match:
                with self.lock:
                    self.seen.append((time.monotonic(), int(match.group(1).replace(",", "")),
                                      float(match.group(2).replace(",", ""))))
                    self.lines.append(line.strip())

    def between(self, start: float, end: float) -> list[tuple[float, int, float]]:
        with self.lock:
            return [c for c in self.seen if start <= c[0] < end]

    def absorbed(self) -> int:
        with self.lock:
            return sum(records for _, records, _ in self.seen)


def memory_by_kind(root_pid: int) -> tuple[dict[str, int], int]:
    """Resident bytes per kind of process of the run's tree (driver, spark-jvm, python-workers), and the
    driver's threads."""
    import psutil

    by_kind: dict[str, int] = {}
    threads = 0
    try:
        root = psutil.Process(root_pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return by_kind, threads
    for proc in processes:
        try:
            kind = process_kind(proc.cmdline())
            by_kind[kind] = by_kind.get(kind, 0) + proc.memory_info().rss
            if proc.pid == root_pid:
                threads = proc.num_threads()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return by_kind, threads


def tree_size(uri: str) -> tuple[int, int]:
    """Files and bytes under ``uri`` (pyarrow's file system for the URI; 0, 0 where nothing is), hidden ones
    left out."""
    from pyarrow import fs

    filesystem, path = fs.FileSystem.from_uri(uri)
    try:
        infos = filesystem.get_file_info(fs.FileSelector(path, recursive=True, allow_not_found=True))
    except (FileNotFoundError, OSError):
        return 0, 0
    # Not the checksum files Hadoop's local file system writes beside each file (.name.crc).
    files = [i for i in infos if i.type == fs.FileType.File and not i.base_name.startswith(".")]
    return len(files), sum(i.size or 0 for i in files)


@dataclass(frozen=True)
class TableFiles:
    table: str
    live_files: int  # in the table's current version (delta-rs)
    data_files: int  # under the table's directory, outside _delta_log (live and not yet vacuumed)
    data_bytes: int
    log_files: int  # under _delta_log (commits, checksums, checkpoints)


def table_files(settings: Any) -> list[TableFiles]:
    from deltalake import DeltaTable

    from pipelines.delta_tables import table_exists, table_path
    from schemas.catalog import TABLES

    out = []
    for spec in TABLES.values():
        if not table_exists(settings, spec):
            continue
        path = table_path(settings, spec)
        live = len(DeltaTable(path, storage_options=dict(settings.storage.delta_rs) or None).file_uris())
        all_files, all_bytes = tree_size(path)
        log_files, log_bytes = tree_size(f"{path}/_delta_log")
        out.append(TableFiles(spec.name, live, all_files - log_files, all_bytes - log_bytes, log_files))
    return out


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def seconds_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


# --- the run ------------------------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30.0, help="how long the run is left running (default 30)")
    parser.add_argument("--rate", type=int, default=5000, help="offset commit records produced per second")
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--rebalancing", type=int, default=20, help="groups rebalancing every minute")
    parser.add_argument("--partitions", type=int, default=8, help="partitions of the offsets topic")
    parser.add_argument("--window", type=float, default=5.0, help="minutes per printed window (default 5)")
    parser.add_argument("--driver-memory", default="4g", help="spark.driver.memory of the run")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (warehouse, logs)")
    args = parser.parse_args()

    from bench.results import write_result
    from broker.embedded import EmbeddedBroker
    from broker.workload import create_topic
    from conf.settings import load_settings
    from pipelines.gold.consumer_lag import lag_checkpoint
    from pipelines.storage import join

    work = Path(tempfile.mkdtemp(prefix="offsetlake-bench-soak-"))
    print(f"soak benchmark: {args.minutes:g} min at {args.rate:,} commit records/s over {args.groups:,} groups, "
          f"{args.rebalancing} rebalancing every minute; work {work}; load {load_text()}", flush=True)
    windows: list[dict[str, Any]] = []
    with EmbeddedBroker(work / "broker", heap="1g") as broker:
        create_topic({"bootstrap.servers": broker.bootstrap_servers}, TOPIC, partitions=args.partitions,
                     config={"retention.ms": "-1"})
        config = work / "offsetlake.toml"
        config.write_text(
            f'cluster_name = "soak"\nwarehouse = "{work / "warehouse"}"\ndebug_log = "{work / "debug.log"}"\n'
            f'[spark]\ndriver_memory = "{args.driver_memory}"\nshuffle_partitions = 4\nlog_level = "ERROR"\n'
            f'[kafka]\nbootstrap_servers = "{broker.bootstrap_servers}"\n'
            f'[lag]\nmessage_timestamps = false\n', encoding="utf-8")
        settings = load_settings(str(config))
        env = {**os.environ, "OFFSETLAKE_CONFIG": str(config), "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        load = Load(broker.bootstrap_servers, args.rate, args.groups, args.rebalancing, args.partitions).start()
        cycles = Cycles()
        log = open(work / "run.log", "w", encoding="utf-8")  # noqa: SIM115 - closed below, after the run
        run = subprocess.Popen([OFFSETLAKE, "run", "--topic", TOPIC], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
        reader = threading.Thread(target=cycles.read, args=(run.stderr, log), daemon=True)
        reader.start()
        started = time.monotonic()
        end = started + args.minutes * 60
        window_start = started
        try:
            while time.monotonic() < end and run.poll() is None:
                window_end = min(end, window_start + args.window * 60)
                while time.monotonic() < window_end and run.poll() is None:
                    time.sleep(1.0)
                now = time.monotonic()
                windows.append(window_figures(cycles, started, window_start, now, load, run.pid, settings,
                                              join(settings.warehouse_uri, "_checkpoints"), lag_checkpoint(settings)))
                print_window(windows[-1])
                window_start = now
        finally:
            produced = load.stop()  # first: what the run is behind is measured against a fixed end
            behind = produced - cycles.absorbed()
            run.send_signal(signal.SIGTERM)  # stops after the current batch or step
            try:
                run.wait(300)
            except subprocess.TimeoutExpired:
                run.kill()
                run.wait()
            reader.join(30)
            log.close()
    minutes = (windows[-1]["until_s"] if windows else 0.0) / 60
    first, last = (windows[0], windows[-1]) if windows else ({}, {})
    figures = {"minutes": round(minutes, 1), "produced": produced, "absorbed": cycles.absorbed(),
               "behind_at_end": behind, "exit_code": run.returncode, "windows": windows,
               "rebalances": load.rebalances}
    print(f"load {load_text()}; run's lines in {work / 'run.log'}" if args.keep else f"load {load_text()}")
    write_result("soak", figures, vars(args))
    if not args.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    print(f"soak: {minutes:.0f} min at {args.rate:,} records/s, freshness p95 first/last "
          f"{seconds_text(first.get('freshness_p95_s'))}/{seconds_text(last.get('freshness_p95_s'))} s, memory "
          f"first/last {first.get('memory_gib', 0):.2f}/{last.get('memory_gib', 0):.2f} GiB, behind at end "
          f"{behind:,} records")


def window_figures(cycles: Cycles, origin: float, start: float, end: float, load: Load, pid: int, settings: Any,
                   checkpoints: str, lag_state: str) -> dict[str, Any]:
    """One window's figures (times in seconds from ``origin``, the run's start)."""
    seen = cycles.between(start, end)
    fresh = [f for _, records, f in seen if records]
    by_kind, threads = memory_by_kind(pid)
    tables = table_files(settings)
    checkpoint_files, checkpoint_bytes = tree_size(checkpoints)
    state_files, state_bytes = tree_size(f"{lag_state}/state")
    return {
        "from_s": round(start - origin, 1), "until_s": round(end - origin, 1),
        "records_per_s": round(sum(records for _, records, _ in seen) / max(end - start, 1e-9), 1),
        "behind": load.produced - cycles.absorbed(), "cycles": len(seen),
        "freshness_p50_s": percentile(fresh, 50), "freshness_p95_s": percentile(fresh, 95),
        "memory_gib": round(sum(v for k, v in by_kind.items() if k in ("driver", "spark-jvm", "python-workers"))
                            / GIB, 3),
        "memory_by_kind_gib": {k: round(v / GIB, 3) for k, v in sorted(by_kind.items())},
        "driver_threads": threads,
        "tables": [vars(t) for t in tables],
        "checkpoint_files": checkpoint_files, "checkpoint_bytes": checkpoint_bytes,
        "lag_state_files": state_files, "lag_state_bytes": state_bytes,
    }


def print_window(w: dict[str, Any]) -> None:
    kinds = ", ".join(f"{k} {v:.2f}" for k, v in w["memory_by_kind_gib"].items())
    print(f"\n[{w['from_s'] / 60:.1f}-{w['until_s'] / 60:.1f} min] {w['records_per_s']:,.0f} records/s absorbed, "
          f"behind {w['behind']:,} records, {w['cycles']} cycles, freshness p50/p95 "
          f"{seconds_text(w['freshness_p50_s'])}/{seconds_text(w['freshness_p95_s'])} s; memory GiB: {kinds}; "
          f"driver threads {w['driver_threads']}; checkpoints {w['checkpoint_files']:,} files "
          f"{w['checkpoint_bytes'] / 2**20:.1f} MiB, lag state {w['lag_state_files']:,} files "
          f"{w['lag_state_bytes'] / 2**20:.1f} MiB; load {load_text()}", flush=True)
    for t in w["tables"]:
        print(f"  {t['table']:<36} live {t['live_files']:>5}  on disk {t['data_files']:>6} files "
              f"{t['data_bytes'] / 2**20:>8.1f} MiB  _delta_log {t['log_files']:>6} files", flush=True)


if __name__ == "__main__":
    main()
