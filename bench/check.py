"""Benchmark: `offsetlake check` of the increment beside a check of whole tables, on one warehouse.

    .venv/bin/python bench/check.py                       # 1M commits of 1,000 groups, then 10k more in 50
    .venv/bin/python bench/check.py --commits 10000000 --groups 10000 --increment 100000

What it does, each step a command of its own (a new JVM, as a scheduler runs it), on the embedded broker:

1. produces bench/gold.py's records (``--commits`` OffsetCommit records of ``--groups`` groups, each
   rebalancing ``--generations`` times), then ``offsetlake ingest --once`` and ``offsetlake gold``;
2. ``offsetlake check``: the first check reads whole tables and records what it read;
3. produces ``--increment`` more commits and a rebalance in ``--touched`` groups, ingests them, refreshes gold;
4. **``offsetlake check``**: reads the increment (``quality/increment.py``);
5. **baseline, ``offsetlake check --full``**: the same warehouse, every table whole.

Prints each check's seconds, records/s over the warehouse's silver records, the peak resident memory of its
process tree (Python driver, Spark JVM, Python workers), what it read (its ``check: read`` line) and its
expectation counts; the last line is ``check: increment/full = X.X% at N commits``. Both checks must give the
same verdict for every expectation whose failing rows lie in the touched groups; bench/gold.py's synthetic
records fail two rules everywhere (commit times far from record times, assignments ending before they start,
from the generated timestamps), so the counts differ by design: the bench prints both.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench.gold as generated  # noqa: E402
from bench.results import start, write_result  # noqa: E402
from bench.scale import OFFSETLAKE, MemorySampler, describe_memory, load_text  # noqa: E402


def command(args: list[str], env: dict[str, str], log: Path, verdict: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``offsetlake args``; a check's exit 1 is a verdict (a critical expectation failed), not a failure."""
    result = subprocess.run([OFFSETLAKE, *args], env=env, capture_output=True, text=True, check=False)
    with log.open("a", encoding="utf-8") as fh:
        fh.write(f"$ offsetlake {' '.join(args)}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}\n")
    if result.returncode not in ((0, 1) if verdict else (0,)):
        last = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"check bench: offsetlake {args[0]} failed (exit {result.returncode}): {last}; see {log}")
    return result


def timed_check(label: str, args: list[str], env: dict[str, str], log: Path, sampler: MemorySampler,
                records: int, report: Path) -> tuple[float, dict]:
    sampler.step()
    started = time.perf_counter()
    result = command(["check", *args, "--json", str(report)], env, log, verdict=True)
    seconds = time.perf_counter() - started
    peaks = sampler.step()
    found = json.loads(report.read_text(encoding="utf-8"))
    read = next((line for line in result.stderr.splitlines() if line.startswith("check: read ")), "check: read ?")
    print(f"  {label:<34} {seconds:7.1f} s  {records / seconds:>10,.0f} records/s  {describe_memory(peaks)}; "
          f"load {load_text()}\n      {read}; {found['counts']}", flush=True)
    return seconds, found


def main() -> None:
    args = generated.workload_arguments(__doc__, "commits added before the checks compared")
    run = start("check", args)

    from broker.embedded import EmbeddedBroker
    from broker.workload import create_topic

    work = Path(tempfile.mkdtemp(prefix="offsetlake-bench-check-"))
    log = work / "commands.log"
    groups = [f"group-{g:04d}" for g in range(args.groups)]
    sampler = MemorySampler()
    try:
        with EmbeddedBroker(work / "broker", heap="1g") as broker:
            config = {"bootstrap.servers": broker.bootstrap_servers}
            topic = "bench-offsets"
            create_topic(config, topic, partitions=1, config={"retention.ms": "-1"})
            env = {**os.environ, "OFFSETLAKE_WAREHOUSE": str(work / "warehouse"), "OFFSETLAKE_CLUSTER_NAME": "bench",
                   "OFFSETLAKE_KAFKA__BOOTSTRAP_SERVERS": broker.bootstrap_servers,
                   "OFFSETLAKE_SPARK__DRIVER_MEMORY": "4g", "OFFSETLAKE_SPARK__LOG_LEVEL": "ERROR"}

            def absorb(records_iter) -> int:  # type: ignore[no-untyped-def]
                count = generated.produce(config, topic, records_iter)
                command(["ingest", "--once", "--topic", topic], env, log)
                command(["gold"], env, log)
                return count

            started = time.perf_counter()
            initial = absorb(generated.records(args.commits, groups, args.generations, 1, 0))
            print(f"set-up: {initial:,} records ({args.commits:,} commits) produced, ingested and refreshed in "
                  f"{time.perf_counter() - started:.1f}s", flush=True)
            first, _ = timed_check("first check (records what it read)", [], env, log, sampler, initial,
                                   work / "first.json")
            added = absorb(generated.records(args.increment, groups[:args.touched], 1, args.generations + 1,
                                             args.commits))
            print(f"increment: {added:,} records in {args.touched} groups, ingested and refreshed", flush=True)
            total = initial + added
            incremental, of_increment = timed_check("check of the increment", [], env, log, sampler, total,
                                                    work / "increment.json")
            full, of_whole = timed_check("baseline: check --full", ["--full"], env, log, sampler, total,
                                         work / "full.json")
            differ = [f"{a['suite']}.{a['expectation']}" for a, b in zip(of_increment["results"], of_whole["results"],
                                                                           strict=True) if a["status"] != b["status"]]
            print(f"  expectations whose status differs (failing rows outside the touched groups): "
                  f"{', '.join(differ) or 'none'}")
    finally:
        sampler.stop()
    print(f"peak memory of the whole run: {describe_memory(sampler.whole)}; load average {load_text()}")
    line = (f"check: increment/full = {100 * incremental / full:.1f}% at {args.commits:,} commits "
            f"({args.touched} of {args.groups:,} groups touched; first check {first:.1f}s)")
    write_result(run, {"increment_seconds": round(incremental, 2), "first_check_seconds": round(first, 2),
                       "increment_over_full_percent": round(100 * incremental / full, 1),
                       "records": total, "expectations_differing": differ},
                 {"full_check_seconds": round(full, 2)}, line)
    print(line)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
