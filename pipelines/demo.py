"""The end-to-end demo (``make demo``): real groups on a real broker, then the main job, then a summary.

Steps, each reported with its duration:

1. start the embedded broker, create a topic, produce a first round of messages;
2. run the scripted workload (``broker/demo_workload.py``): seven groups, each living through one
   kind of rebalance -- scale-out, crash, graceful leave, static restart, cooperative, KIP-848, and
   a consumer that stops reading. The groups stay alive;
3. an end-offset snapshot; a second round of messages, which every group but the lagging one reads;
   a second snapshot;
4. the main job, running from before the workload to here as ``offsetlake run`` runs
   (``pipelines/main_job.py``: the ingest streaming ``__consumer_offsets`` on a 2-second trigger, gold
   refreshed after each batch), is left to absorb everything the broker has written, then stopped;
   the consumer-lag refresh; how long records took to reach gold (``pipelines/freshness.py``: p50/p95
   from a commit to gold.committed_offsets and from a rebalance's record to gold.rebalance_events),
   over every record and over those appended once the job was warm: before the workload, a steady
   group (``SteadyCommitter``) commits every second from the job's start until the end of step 3, and
   the workload waits until gold has absorbed those commits and then a member joining a warm-up group
   (both of gold's paths run once), as a long-running job would have;
5. ``validate``: reference-coordinator scenarios through the same pipeline, into a scratch warehouse
   (``<warehouse>/_validation``) so that their groups stay out of the demo's tables;
6. a summary per group read back from gold (generations, rebalances and their likely causes, current
   members and assignment, lag and Burrow status) beside what the workload did, and how to query
   the tables.

The summary is built by pure functions over plain rows (``GoldRows`` -> ``GroupSummary`` -> lines),
so it is tested without Spark. The demo owns its warehouse: it empties a warehouse it wrote before
(marked by ``DEMO_MARKER``) and refuses any other non-empty directory, because a new broker's
``__consumer_offsets`` cannot continue an old checkpoint and the same group names would collide.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conf.settings import Settings
from pipelines.freshness import Latency

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from broker.demo_workload import ScenarioOutcome
    from pipelines.main_job import CycleReport, MainJobOptions

ROOT = Path(__file__).resolve().parents[1]
DEMO_MARKER = ".offsetlake-demo"
VALIDATION_DIR = "_validation"
VALIDATION_SCENARIOS = ("range-join-leave-crash", "static-membership-restart")


class DemoError(RuntimeError):
    """The demo cannot run or a step failed; the message is one line and names the step."""


@dataclass(frozen=True)
class DemoOptions:
    topic: str = "demo-orders"
    partitions: int = 6
    messages: int = 400  # first round; the second round is half of it
    validation_scenarios: tuple[str, ...] = VALIDATION_SCENARIOS  # names in conf/scenarios/, or paths
    parallel: bool = True  # run the workload's scenarios side by side


@dataclass(frozen=True)
class GoldRows:
    """What the summary reads from gold, as plain dicts (one list per table, any columns)."""

    generations: list[dict[str, Any]] = field(default_factory=list)  # gold.group_generations
    rebalances: list[dict[str, Any]] = field(default_factory=list)  # gold.rebalance_events
    members: list[dict[str, Any]] = field(default_factory=list)  # gold.group_membership, valid_to null
    assignments: list[dict[str, Any]] = field(default_factory=list)  # gold.partition_assignments, valid_to null
    lag: list[dict[str, Any]] = field(default_factory=list)  # gold.consumer_lag at each group's newest snapshot


@dataclass(frozen=True)
class GroupSummary:
    group: str
    generations: list[dict[str, Any]]
    rebalances: list[dict[str, Any]]
    members: list[dict[str, Any]]
    assignments: list[dict[str, Any]]
    lag: list[dict[str, Any]]


@dataclass(frozen=True)
class ValidationOutcome:
    warehouse: Path
    scenarios: list[str]
    ok: bool
    differences: dict[tuple[str, str], int]  # (scenario, table) -> differences, non-zero ones only
    run_id: str
    seconds: float


@dataclass(frozen=True)
class DemoResult:
    warehouse: Path
    outcomes: list[ScenarioOutcome]
    rows_per_table: dict[str, int]
    gold: GoldRows
    validation: ValidationOutcome | None
    steps: list[tuple[str, float]]
    seconds: float
    freshness: FreshnessOutcome | None = None
    #: gold table -> (rows only in the table, rows only in a full rebuild from bronze); all (0, 0) when they agree
    rebuild: dict[str, tuple[int, int]] | None = None


@dataclass(frozen=True)
class FreshnessOutcome:
    """How long records took to reach gold while the main job ran beside the workload."""

    commits: Latency
    rebalances: Latency
    cycles: int
    trigger: str
    # The same over the records appended once the job was warm (its gold refreshes had written commits, then a
    # group's rebalance): what a long-running job shows; None if it was not warm in time.
    warm_commits: Latency | None = None
    warm_rebalances: Latency | None = None


# ---------------------------------------------------------------- the warehouse

def prepare_warehouse(path: Path) -> None:
    """Make ``path`` an empty demo warehouse: create it, or empty one the demo wrote; refuse anything else."""
    if path.exists() and not path.is_dir():
        raise DemoError(f"warehouse {path} is a file, not a directory")
    if path.is_dir() and any(path.iterdir()):
        if not (path / DEMO_MARKER).is_file():
            raise DemoError(f"warehouse {path} is not empty and was not written by the demo; "
                            "pass --warehouse with a new or demo directory")
        for child in path.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    path.mkdir(parents=True, exist_ok=True)
    (path / DEMO_MARKER).write_text("written by offsetlake demo; emptied at every demo run\n")


def scenario_path(name: str) -> Path:
    """A scenario by name (``conf/scenarios/<name>.yaml``) or path."""
    candidate = Path(name)
    if candidate.suffix in (".yaml", ".yml") and candidate.is_file():
        return candidate
    path = ROOT / "conf" / "scenarios" / f"{name}.yaml"
    if not path.is_file():
        raise DemoError(f"validation scenario {name} not found (looked for {path})")
    return path


# ---------------------------------------------------------------- reading gold (Spark)

def collect_gold(spark: SparkSession, settings: Settings, groups: Sequence[str] | None = None) -> GoldRows:
    """The gold rows the summary needs, for ``settings.cluster_name`` (and ``groups`` if given)."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from pipelines.delta_tables import read_table, table_path
    from pipelines.gold.consumer_lag import latest_status
    from schemas.catalog import TABLES

    def rows(name: str, current_only: bool = False) -> list[dict[str, Any]]:
        spec = TABLES[name]
        if not DeltaTable.isDeltaTable(spark, table_path(settings, spec)):
            return []
        frame = read_table(spark, settings, spec).filter(F.col("cluster_name") == settings.cluster_name)
        if groups is not None:
            frame = frame.filter(F.col("group").isin(list(groups)))
        if current_only:
            frame = frame.filter(F.col("valid_to").isNull())
        return [row.asDict(recursive=True) for row in frame.collect()]

    lag: list[dict[str, Any]] = []
    if DeltaTable.isDeltaTable(spark, table_path(settings, TABLES["gold.consumer_lag"])):
        lag = [row for row in latest_status(spark, settings) if groups is None or row["group"] in groups]
    return GoldRows(generations=rows("gold.group_generations"), rebalances=rows("gold.rebalance_events"),
                    members=rows("gold.group_membership", current_only=True),
                    assignments=rows("gold.partition_assignments", current_only=True), lag=lag)


def table_row_counts(spark: SparkSession, settings: Settings) -> dict[str, int]:
    from delta.tables import DeltaTable

    from pipelines.delta_tables import read_table, table_path
    from schemas.catalog import TABLES

    return {name: read_table(spark, settings, spec).count() for name, spec in TABLES.items()
            if DeltaTable.isDeltaTable(spark, table_path(settings, spec))}


# ---------------------------------------------------------------- the summary (pure)

def _sort_time(value: Any) -> tuple[int, Any]:
    return (0, value) if value is not None else (1, 0)


def group_summaries(gold: GoldRows, order: Sequence[str] = ()) -> list[GroupSummary]:
    """One summary per group found in any of the gold rows: the groups in ``order`` first, then by name."""
    by_group: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for kind in ("generations", "rebalances", "members", "assignments", "lag"):
        for row in getattr(gold, kind):
            by_group[row["group"]][kind].append(row)
    names = [g for g in order if g in by_group] + sorted(g for g in by_group if g not in order)
    summaries = []
    for name in names:
        rows = by_group[name]
        summaries.append(GroupSummary(
            group=name,
            generations=sorted(rows["generations"], key=lambda r: (r.get("incarnation") or 0, r["generation"])),
            rebalances=sorted(rows["rebalances"], key=lambda r: (_sort_time(r.get("stable_at")),
                                                                 r.get("to_generation") or 0)),
            members=sorted(rows["members"], key=lambda r: (r.get("client_id") or "", r["member_id"])),
            assignments=sorted(rows["assignments"], key=lambda r: (r["member_id"], r.get("topic") or "",
                                                                   r["partition"])),
            lag=sorted(rows["lag"], key=lambda r: (r.get("topic") or "", r["partition"])),
        ))
    return summaries


def _clock(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.strftime("%H:%M:%S.") + f"{value.microsecond // 1000:03d}"
    return "-" if value is None else str(value)


def _plural(n: int, word: str) -> str:
    """``n`` and ``word``, in the plural unless n is 1 ("batch" -> "batches")."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}{'es' if word.endswith(('ch', 'sh', 's', 'x')) else 's'}"


def _member_label(member_id: str, client_id: str | None, instance_id: str | None) -> str:
    """``client.id`` (static id) and the member id's last 8 characters, which tell restarts apart."""
    label = client_id or member_id
    if instance_id:
        label += f" [static {instance_id}]"
    return f"{label} (member ...{member_id[-8:]})"


def _partitions_text(rows: Sequence[dict[str, Any]]) -> str:
    by_topic: dict[str, list[int]] = defaultdict(list)  # a partition once per topic, whatever the rows
    for row in rows:
        by_topic[row.get("topic") or "?"].append(row["partition"])
    return " ".join(f"{topic}[{','.join(str(p) for p in sorted(set(ps)))}]" for topic, ps in sorted(by_topic.items()))


def format_group(summary: GroupSummary, outcome: ScenarioOutcome | None = None) -> list[str]:
    """The readable block for one group: what the workload did, then what gold shows."""
    first = summary.generations[0] if summary.generations else {}
    kind = first.get("group_type") or ("classic" if summary.generations else None)
    protocol = summary.generations[-1].get("protocol") if summary.generations else None
    header = summary.group + "".join(f"  ({x})" for x in [", ".join(v for v in (kind, protocol) if v)] if x)
    if outcome is not None:
        header += f"  -- {outcome.scenario}"
    lines = [header]
    if outcome is not None:
        lines.append("  what the workload did:")
        lines += [f"    {step}" for step in outcome.steps]

    lines.append("  generations (gold.group_generations):")
    if not summary.generations:
        lines.append("    none recorded for this group")
    for g in summary.generations:
        incarnation = f" (incarnation {g['incarnation']})" if g.get("incarnation") else ""
        ended = f", ended {_clock(g.get('ended_at'))}: {g.get('end_reason') or '?'}" if g.get("ended_at") else \
            ", current"
        lines.append(f"    gen {g['generation']}{incarnation}: {_plural(g.get('member_count') or 0, 'member')}, "
                     f"started {_clock(g.get('started_at'))}{ended}")

    lines.append("  rebalances (gold.rebalance_events, likely causes):")
    if not summary.rebalances:
        lines.append("    none")
    for r in summary.rebalances:
        if r.get("event_type") == "static_member_restart":
            lines.append(f"    gen {r['to_generation']} kept at {_clock(r.get('stable_at'))}: static member restart "
                         f"of {', '.join(r.get('static_restarts') or [])} -- no rebalance")
            continue
        moved = r.get("partitions_moved")
        low, high = r.get("stopped_ms_lower_bound"), r.get("stopped_ms_upper_bound")
        details = [f"{r.get('members_before', '?')} -> {r.get('members_after', '?')} members"]
        if moved is not None:
            details.append(f"{_plural(moved, 'partition')} moved")
        if low is not None and high is not None:
            details.append(f"members stopped >= {low / 1000:.1f}s, <= {high / 1000:.1f}s")
        if r.get("rebalance_protocol"):
            details.append(str(r["rebalance_protocol"]))
        if r.get("is_storm"):
            details.append("STORM")
        lines.append(f"    gen {r['from_generation']} -> {r['to_generation']} at {_clock(r.get('stable_at'))}: "
                     f"{r.get('likely_cause') or '?'} ({', '.join(details)})")

    lines.append("  current members and assignment (gold.group_membership / gold.partition_assignments, "
                 "valid_to null):")
    if not summary.members and not summary.assignments:
        lines.append("    none")
    # KIP-848 rows also carry the target assignment and what is still to be revoked (assignment_kind).
    kinds: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for a in summary.assignments:
        kinds[a["member_id"]][a.get("assignment_kind") or "current"].append(a)

    def holdings(member_id: str) -> str:
        rows = kinds.get(member_id, {})
        text = _partitions_text(rows.get("current", [])) or "nothing"
        if rows.get("pending_revocation"):
            text += f", revoking {_partitions_text(rows['pending_revocation'])}"
        target = _partitions_text(rows.get("target", []))
        if target and target != _partitions_text(rows.get("current", [])):
            text += f", target {target}"
        return text

    for m in summary.members:
        lines.append(f"    {_member_label(m['member_id'], m.get('client_id'), m.get('group_instance_id'))}: "
                     f"{holdings(m['member_id'])}")
    listed = {m["member_id"] for m in summary.members}
    for member_id, rows in kinds.items():
        if member_id not in listed:
            first = next(iter(rows.values()))[0]
            lines.append(f"    {_member_label(member_id, first.get('client_id'), first.get('group_instance_id'))}: "
                         f"{holdings(member_id)}")

    lines.append("  lag at the newest snapshot (gold.consumer_lag):")
    if not summary.lag:
        lines.append("    no lag rows (no commits or no end-offset snapshot)")
    else:
        newest = summary.lag[0]
        total = newest.get("group_lag")
        lines.append(f"    group status {newest.get('group_status')}, total lag "
                     f"{'?' if total is None else _plural(total, 'message')} at {_clock(newest.get('snapshot_time'))}")
        cells = [f"{row.get('topic')}-{row['partition']}: {'-' if row.get('lag') is None else row['lag']} "
                 f"{row.get('partition_status') or '-'}" for row in summary.lag]
        for start in range(0, len(cells), 3):
            lines.append("    " + "   ".join(cells[start:start + 3]))
    return lines


def format_validation(validation: ValidationOutcome) -> list[str]:
    verdict = "PASS (gold matches the reference coordinator)" if validation.ok else \
        f"FAIL ({sum(validation.differences.values())} differences, gold.validation_diffs run_id={validation.run_id})"
    lines = [f"validation of {', '.join(validation.scenarios)} in {validation.warehouse}: {verdict}"]
    lines += [f"  {scenario} {table}: {n} differences"
              for (scenario, table), n in sorted(validation.differences.items())]
    return lines


def query_examples(warehouse: Path) -> list[str]:
    """Copy-pasteable ways to query the tables: ``offsetlake sql`` and plain pyspark with Delta."""
    env = f"OFFSETLAKE_WAREHOUSE={warehouse}"
    return [
        f"Tables are Delta tables under {warehouse}/<layer>/<table> (e.g. {warehouse}/gold/rebalance_events).",
        "Query them with Spark SQL (single quotes: the backticks must reach Spark):",
        f"  {env} .venv/bin/offsetlake sql 'SELECT `group`, from_generation, to_generation, likely_cause, "
        "rebalance_protocol, stable_at FROM gold.rebalance_events ORDER BY `group`, stable_at'",
        f"  {env} .venv/bin/offsetlake sql 'SELECT `group`, client_id, topic, `partition`, generation "
        "FROM gold.partition_assignments WHERE valid_to IS NULL ORDER BY `group`, `partition`'",
        f"  {env} .venv/bin/offsetlake sql 'SELECT `group`, `partition`, lag, partition_status, group_status, "
        "snapshot_time FROM gold.consumer_lag ORDER BY snapshot_time DESC, `group`, `partition`'",
        "or from pyspark (the session needs the Delta jars; build_spark_session adds them):",
        "  .venv/bin/python -c \"from conf.settings import load_settings; "
        "from pipelines.spark_session import build_spark_session; "
        "spark = build_spark_session(load_settings()); "
        f"spark.read.format('delta').load('{warehouse}/gold/group_generations').orderBy('group', "
        "'generation').show(50, False)\"",
    ]


# ---------------------------------------------------------------- the run

@contextlib.contextmanager
def _step(name: str, steps: list[tuple[str, float]], report: Callable[[str], None],
          started: float) -> Iterator[list[str]]:
    """Report ``name`` and, when it ends, its duration and whatever the step appended as detail."""
    report(f"[{time.monotonic() - started:6.1f}s] {name} ...")
    detail: list[str] = []
    began = time.monotonic()
    try:
        yield detail
    except DemoError:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure becomes one line naming the step
        text = str(exc).strip()
        first = text.splitlines()[0] if text else type(exc).__name__
        raise DemoError(f"{name} failed: {first}") from exc
    seconds = time.monotonic() - began
    steps.append((name, seconds))
    report(f"[{time.monotonic() - started:6.1f}s] {name}: done in {seconds:.1f}s"
           + (f" ({'; '.join(detail)})" if detail else ""))


#: The main job's trigger in the demo: freshness is measured with a 2-second trigger.
MAIN_JOB_TRIGGER = "2 seconds"
#: How long the demo lets the main job absorb what the broker wrote; then the rest is drained as ``run --once``
#: does (the continuous query sometimes ran no batch for minutes after an empty first one).
MAIN_JOB_CATCH_UP_SECONDS = 120.0
#: How long the demo waits for each warm-up step to reach gold (the steady group's commits, the warm group's member).
MAIN_JOB_WARM_UP_SECONDS = 240.0


class MainJobThread:
    """``run_main_job`` in a thread of the demo's process, its cycles kept, stopped when gold has read far enough."""

    def __init__(self, spark: SparkSession, settings: Settings, options: MainJobOptions,
                 report: Callable[[str], None]) -> None:
        import threading

        from pipelines.main_job import run_main_job

        self.cycles: list[CycleReport] = []
        self._stop = threading.Event()
        self._failure: list[BaseException] = []

        def cycle(done: CycleReport) -> None:
            self.cycles.append(done)
            report(done.line())

        def main() -> None:
            try:
                run_main_job(spark, settings, options, should_stop=self._stop.is_set, on_batch=lambda batch: None,
                             on_cycle=cycle)
            except BaseException as exc:  # noqa: BLE001 - raised in the demo's thread by stop()
                self._failure.append(exc)

        self._thread = threading.Thread(target=main, name="offsetlake-main-job", daemon=True)
        self._thread.start()

    def wait_until_written(self, table: str, timeout: float, after: int = 0) -> dt.datetime | None:
        """Wait until a cycle after the first ``after`` has committed ``table``; when it did (aware, UTC), or
        None after ``timeout`` or if the job ended."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._thread.is_alive():
            for cycle in list(self.cycles)[after:]:
                if cycle.visibility is not None and cycle.gold_written and table in cycle.gold_written:
                    return cycle.visibility.visible_at(table)
            time.sleep(0.2)
        return None

    def stop_when_level(self, ends: dict[int, int], timeout: float) -> tuple[list[CycleReport], bool]:
        """Wait until a cycle's gold has read every partition up to ``ends`` or ``timeout`` passes, then stop;
        the cycles, and whether gold got there."""
        deadline = time.monotonic() + timeout
        while not self._level(ends) and time.monotonic() < deadline:
            if not self._thread.is_alive():
                break
            time.sleep(0.2)
        self.stop()
        return list(self.cycles), self._level(ends)

    def _level(self, ends: dict[int, int]) -> bool:
        reached = self.cycles[-1].visibility.end_offsets if self.cycles and self.cycles[-1].visibility else {}
        return all(reached.get(partition, 0) >= end for partition, end in ends.items() if end > 0)

    def stop(self) -> None:
        """Stop the job after its current step (idempotent); its failure, if any, as a DemoError."""
        self._stop.set()
        self._thread.join()
        if self._failure:
            failure = self._failure.pop()
            raise DemoError(f"the main job failed: {str(failure).splitlines()[0] if str(failure) else failure!r}")


def format_freshness(freshness: FreshnessOutcome) -> list[str]:
    """The summary's lines on how long records took to reach gold (pure): once the job was warm, then all."""
    lines = [f"Freshness (the main job beside the workload, trigger {freshness.trigger}, "
             f"{freshness.cycles} gold refreshes; target p95 10s):"]
    if freshness.warm_commits is not None and freshness.warm_rebalances is not None:
        lines += ["  records appended once the job was warm (gold had absorbed commits, then a rebalance):",
                  f"    commit record -> gold.committed_offsets:    {freshness.warm_commits.text()}",
                  f"    rebalance's record -> gold.rebalance_events: {freshness.warm_rebalances.text()}",
                  "  every record, the job's start included:"]
    else:
        lines.append("  every record, the job's start included (the job was not warm before the workload):")
    return lines + [f"    commit record -> gold.committed_offsets:    {freshness.commits.text()}",
                    f"    rebalance's record -> gold.rebalance_events: {freshness.rebalances.text()}"]


def format_rebuild(rebuild: dict[str, tuple[int, int]]) -> str:
    """One line: whether gold as the main job left it equals a full rebuild from bronze (silver decoded again from
    bronze's raw records, then gold from that), and where not."""
    differing = {name: pair for name, pair in rebuild.items() if pair != (0, 0)}
    if not differing:
        return f"gold equals a full rebuild from bronze, all {len(rebuild)} tables"
    return "gold DIFFERS from a full rebuild from bronze: " + ", ".join(
        f"{name} ({only_gold} rows only in gold, {only_rebuild} only in the rebuild)"
        for name, (only_gold, only_rebuild) in differing.items())


def run_demo(settings: Settings, options: DemoOptions = DemoOptions(), *, broker_dir: Path | None = None,
             report: Callable[[str], None] = lambda line: None) -> DemoResult:
    """The whole demo (see the module docstring); progress lines go to ``report``."""
    from broker.demo_workload import DemoGroups, DemoWorkload, SteadyCommitter
    from broker.embedded import EmbeddedBroker
    from broker.workload import create_topic, produce_messages
    from pipelines.end_offsets import snapshot_end_offsets
    from pipelines.freshness import Visibility, commit_latency, rebalance_latency
    from pipelines.gold import committed_offsets, rebalance_events
    from pipelines.gold.consumer_lag import refresh_consumer_lag
    from pipelines.gold.refresh import rebuild_differences, refresh_gold_tables
    from pipelines.ingest import IngestOptions, run_ingest
    from pipelines.main_job import MainJobOptions, reached_offsets
    from pipelines.offsets_topic_source import OFFSETS_TOPIC, topic_end_offsets
    from pipelines.silver import tables_from_bronze
    from pipelines.spark_session import build_spark_session
    from pipelines.validation import validate

    started = time.monotonic()
    steps: list[tuple[str, float]] = []

    def step(name: str) -> contextlib.AbstractContextManager[list[str]]:
        return _step(name, steps, report, started)

    scenarios = [scenario_path(name) for name in options.validation_scenarios]
    warehouse = settings.warehouse_path
    prepare_warehouse(warehouse)
    validation_settings = settings.model_copy(update={"warehouse": str(warehouse / VALIDATION_DIR)})
    second_round = max(options.messages // 2, options.partitions)
    with contextlib.ExitStack() as cleanup:
        if broker_dir is None:
            broker_dir = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="offsetlake-demo-broker-")))
        with step("start the embedded Kafka broker") as detail:
            broker = EmbeddedBroker(broker_dir)
            broker.start()
            cleanup.callback(broker.stop)
            detail.append(f"{broker.bootstrap_servers}, data in {broker_dir}")
        kafka = settings.kafka.model_copy(update={"bootstrap_servers": broker.bootstrap_servers})
        settings = settings.model_copy(update={"kafka": kafka})
        validation_settings = validation_settings.model_copy(update={"kafka": kafka})
        client = kafka.librdkafka_config()
        with step(f"create {options.topic} and produce {options.messages} messages") as detail:
            create_topic(client, options.topic, options.partitions)
            produce_messages(client, options.topic, options.messages, options.partitions)
            detail.append(f"{options.partitions} partitions")
        with step("start Spark"):
            spark = build_spark_session(settings)
        with step(f"start the main job (offsetlake run: ingest every {MAIN_JOB_TRIGGER}, gold after each batch)"):
            main_job = MainJobThread(spark, settings, MainJobOptions(
                ingest=IngestOptions(once=False, trigger_interval=MAIN_JOB_TRIGGER), snapshot_every=None),
                report=lambda line: report(f"         {line}"))
            cleanup.callback(main_job.stop)
        groups = DemoGroups("demo")
        workload = cleanup.enter_context(DemoWorkload(client, options.topic, options.partitions, groups))
        with step(f"warm the main job up: {groups.steady} commits every second, then {groups.warm} gets a member, "
                  "each until gold shows it") as detail:
            # A running job has been through both of gold's paths long before; a new one compiles each on first
            # use, and the first incremental refresh of groups takes far longer than a warm one.
            steady = cleanup.enter_context(SteadyCommitter(client, options.topic, options.partitions, groups.steady))
            warm = main_job.wait_until_written(committed_offsets.TABLE.name, MAIN_JOB_WARM_UP_SECONDS)
            if warm is not None:
                seen = len(main_job.cycles)
                workload.warm_up()
                warm = main_job.wait_until_written(rebalance_events.TABLE.name, MAIN_JOB_WARM_UP_SECONDS, after=seen)
            detail.append("gold refreshed" if warm is not None else
                          f"not warm after {MAIN_JOB_WARM_UP_SECONDS:.0f}s: the workload starts anyway")
        with step("scripted workload: 7 consumer groups"):
            outcomes = workload.run(parallel=options.parallel, report=lambda o: report(
                f"         {o.group}: {o.scenario} ({o.seconds:.1f}s)"))
        with step("end-offset snapshot 1"):
            snapshot_end_offsets(spark, settings, [options.topic])
        with step(f"produce {second_round} more; every group but the lagging one catches up") as detail:
            produce_messages(client, options.topic, second_round, options.partitions)
            detail.append(f"caught up in {workload.catch_up():.1f}s")
        with step("end-offset snapshot 2"):
            snapshot_end_offsets(spark, settings, [options.topic])
        with step(f"stop {groups.steady}; the main job absorbs what the broker has written, then stops") as detail:
            detail.append(f"{groups.steady} made {steady.stop()} commits")
            cycles, level = main_job.stop_when_level(topic_end_offsets(settings, OFFSETS_TOPIC),
                                                     MAIN_JOB_CATCH_UP_SECONDS)
            visible = [c.visibility for c in cycles if c.visibility is not None]
            records = sum(b.records for c in cycles for b in c.batches)
            detail.append(f"{records} records in {_plural(sum(len(c.batches) for c in cycles), 'batch')}, "
                          f"gold refreshed {_plural(sum(c.gold_written is not None for c in cycles), 'time')}")
            if not level:  # what it had not read, as `run --once` would: drained to the end, then gold
                drained = run_ingest(spark, settings, IngestOptions(once=True))
                refresh_gold_tables(spark, settings)
                reached = reached_offsets(visible[-1].end_offsets if visible else {}, drained)
                visible.append(Visibility(dt.datetime.now(dt.UTC), OFFSETS_TOPIC, reached))
                detail.append(f"not level after {MAIN_JOB_CATCH_UP_SECONDS:.0f}s: the rest "
                              f"({sum(b.records for b in drained)} records) drained as run --once does")
        with step("how long records took to reach gold") as detail:
            freshness = FreshnessOutcome(
                commit_latency(spark, settings, visible), rebalance_latency(spark, settings, visible), len(visible),
                MAIN_JOB_TRIGGER, *((commit_latency(spark, settings, visible, warm),
                                     rebalance_latency(spark, settings, visible, warm)) if warm else ()))
            if freshness.warm_commits is not None and freshness.warm_rebalances is not None:
                detail.append(f"once warm: commits {freshness.warm_commits.text()}; rebalances "
                              f"{freshness.warm_rebalances.text()}")
            detail.append(f"every record: commits {freshness.commits.text()}; rebalances "
                          f"{freshness.rebalances.text()}")
        with step("compare gold with a full rebuild from bronze") as detail:
            rebuild = rebuild_differences(spark, settings, tables_from_bronze(spark, settings))
            detail.append(format_rebuild(rebuild))
        with step("consumer-lag refresh") as detail:
            lag = refresh_consumer_lag(spark, settings)
            detail.append(f"{lag.rows} rows for {_plural(lag.snapshots, 'snapshot')}")
        validation = None
        if scenarios:
            with step(f"validate {', '.join(p.stem for p in scenarios)} in "
                      f"{validation_settings.warehouse_path}") as detail:
                began = time.monotonic()
                checked = validate(spark, validation_settings, scenarios, topic_prefix="demo-validate")
                validation = ValidationOutcome(
                    warehouse=validation_settings.warehouse_path, scenarios=list(checked.scenarios),
                    ok=checked.ok, differences={k: n for k, n in checked.counts().items() if n},
                    run_id=checked.run_id, seconds=time.monotonic() - began)
                detail.append("PASS" if validation.ok else f"FAIL, {len(checked.diffs)} differences")
        with step("read gold for the summary"):
            gold = collect_gold(spark, settings, [o.group for o in outcomes])
            rows_per_table = table_row_counts(spark, settings)
        with step("close the consumers and stop the broker"):
            cleanup.close()
    return DemoResult(warehouse=warehouse, outcomes=outcomes, rows_per_table=rows_per_table, gold=gold,
                      validation=validation, steps=steps, seconds=time.monotonic() - started, freshness=freshness,
                      rebuild=rebuild)


def summary_lines(result: DemoResult) -> list[str]:
    """Everything the demo prints on stdout at the end (pure)."""
    lines = [f"Delta tables under {result.warehouse}:"]
    lines += [f"  {name:<32} {count:>7,} rows" for name, count in result.rows_per_table.items()]
    outcomes = {o.group: o for o in result.outcomes}
    lines.append("")
    lines.append("Consumer groups, as gold reconstructs them from __consumer_offsets:")
    for summary in group_summaries(result.gold, order=[o.group for o in result.outcomes]):
        lines.append("")
        lines += format_group(summary, outcomes.get(summary.group))
    missing = [o.group for o in result.outcomes if o.group not in {s.group for s in group_summaries(result.gold)}]
    for group in missing:
        lines += ["", f"{group}  -- {outcomes[group].scenario}: not in gold"]
    lines.append("")
    if result.validation is not None:
        lines += format_validation(result.validation)
        lines.append("")
    if result.freshness is not None:
        lines += format_freshness(result.freshness)
    if result.rebuild is not None:
        lines.append(format_rebuild(result.rebuild))
    if result.freshness is not None or result.rebuild is not None:
        lines.append("")
    lines += query_examples(result.warehouse)
    lines.append("")
    lines.append("steps: " + ", ".join(f"{name} {seconds:.1f}s" for name, seconds in result.steps))
    lines.append(f"done in {result.seconds:.1f}s")
    return lines
