"""Validate gold against the reference coordinator (``offsetlake validate``).

For each scenario, the reference coordinator (``coordinator.simulate``) gives the records the broker
would append to ``__consumer_offsets`` and the expected timeline. The records of all scenarios go to
one plain topic (the scenarios' group names are distinct), one ingest reads them into silver, one
gold refresh builds gold, and every gold table listed in ``TABLES`` is compared with the expected
rows per scenario (gold rows restricted to the scenario's groups and the settings' cluster).
Differences are appended to ``gold.validation_diffs``.

The expected rows are derived from the timeline by the rules of
``tests/pipelines/gold/test_refresh.py`` (reimplemented here, minimally), which say what the
records can show:

* a generation is visible only if a GroupMetadata record was written for it (it reached Stable, or
  it has no members); a generation cut short in CompletingRebalance is not, so the visible
  generation before it ends when the next *visible* one starts (the last one at the group's removal);
* record times: the first GroupMetadata record of a generation stands for its
  currentStateTimestamp; any other record (a static member swap) and a tombstone for its append
  time. A departure (``valid_to``) is seen at the first record time at or after it;
* a member's stay starts when the first record lists it: ``max(joined, its first visible
  generation's start)``; members of no visible generation never appear;
* PreparingRebalance is never persisted; Empty/CompletingRebalance only show for the start of a
  visible generation;
* committed offsets: the last commit per partition, minus partitions whose offset was removed
  (expiry, OffsetDelete, group deletion) at or after that commit;
* a generation's ``end_reason`` (gold's likely cause) must stand for the reference's actual cause
  when exactly one rebalance separates it from the next visible generation (``CAUSES``);
* rebalance events: one per visible generation after the first of an
  incarnation. A partition moved when its owner (static id, else member id) in the new generation is
  not its last owner in an earlier visible generation since the group was last Empty -- so a
  cooperative rebalance's revoking round moves nothing and its follow-up moves what was revoked. The
  moments the reference's consumers stopped working for the rebalance (revoked or lost partitions,
  closed, crashed, or stalled into a poll timeout) must lie within gold's ``stopped_at`` bounds, which
  are on the broker's clock: a consumer that commits as it closes stops one network latency before the
  broker stamps that commit, so each stop is taken as the broker would see it, one latency later; and
  when gold names the members that may have triggered a rebalance, the member the coordinator names
  in its reason must be one of them. Static member restarts without a rebalance are not compared.

KIP-848 groups (``group.protocol=consumer``, gold rows with ``group_type`` 'consumer') are compared
with the reference's own KIP-848 tables (``coordinator/consumer_group.py``; the timeline records the
group after each write, and a write's records share one append time, so nothing is hidden from the
records): ``group_generations`` (one row per group epoch: members and preferred server assignor after
the bump, ``stable_at`` the first moment every member was reconciled to it, ``ended_at`` the next
bump, and gold's likely cause must stand for the reference's cause of that bump), ``group_membership``
(one row per member stay **and subscription**: a changed subscription closes the row and opens the
next at the same moment), ``partition_assignments`` ('current' and
'pending_revocation' by member epoch, 'target' by assignment epoch, matched by topic id: the
scenario's topic ids exist on no cluster, so gold cannot name them), ``group_state_history``
(Empty, Assigning, Reconciling, Stable after each write, with group and assignment epochs) and
``rebalance_events`` (one per epoch at which the group settled, Stable or Empty, against the last one:
its times, members joined/left/kept, partitions moved/kept, and a likely cause that must stand for the
reference's cause when every bump in between had the same one; the stop bounds are not compared).
Classic comparisons only look at gold's 'classic' rows.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conf.settings import Settings
from pipelines.gold.committed_offsets import TABLE as COMMITTED_OFFSETS
from pipelines.gold.group_generations import TABLE as GROUP_GENERATIONS
from pipelines.gold.group_membership import TABLE as GROUP_MEMBERSHIP
from pipelines.gold.group_state_history import TABLE as GROUP_STATE_HISTORY
from pipelines.gold.partition_assignments import TABLE as PARTITION_ASSIGNMENTS
from pipelines.gold.rebalance_events import TABLE as REBALANCE_EVENTS
from schemas.validation_diffs import TABLE as DIFFS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from coordinator.simulation import SimulationResult

ROW = "(row)"

# Gold's likely cause (group_generations.end_reason) -> the reference causes it stands for.
CAUSES = {
    "member_joined": {"member_joined"}, "member_left": {"member_left", "sync_timeout"},
    # A static member back after the coordinator removed it (session expiry): to the coordinator a new join.
    "static_member_returned": {"member_joined"},
    # KIP-848: a heartbeat with member epoch -1, a session or a rebalance timeout look the same in the records
    "member_left_or_vanished": {"member_left", "session_timeout", "sync_timeout", "rebalance_timeout"},
    "subscription_changed": {"member_metadata_changed", "static_member_protocol_changed", "subscription_changed"},
    "metadata_changed": {"leader_rejoined"}, "leader_rejoined": {"leader_rejoined"},
    # KIP-429's second round: the leader's rejoin, or a non-leader's whose owned partitions changed.
    "cooperative_follow_up": {"leader_rejoined", "member_metadata_changed"},
    "static_member_rejoined": {"static_member_rejoined", "leader_rejoined", "static_member_protocol_changed"},
    "group_removed": {"group_deleted", "group_expired"},
    "members_joined_and_left": {"member_joined", "member_left", "session_timeout", "sync_timeout"},
}


@dataclass(frozen=True)
class Diff:
    scenario: str
    table: str
    key: str
    field: str
    expected: str | None
    actual: str | None


@dataclass
class ValidationReport:
    run_id: str
    validated_at: dt.datetime
    topic: str
    scenarios: list[str]
    results: dict[str, SimulationResult] = field(repr=False)
    diffs: list[Diff]

    @property
    def ok(self) -> bool:
        return not self.diffs

    def counts(self) -> dict[tuple[str, str], int]:
        """(scenario, table) -> number of differences, for every scenario and compared table."""
        counts = {(s, spec.name): 0 for s in self.scenarios for spec in (c.spec for c in TABLES)}
        for d in self.diffs:
            counts[(d.scenario, d.table)] = counts.get((d.scenario, d.table), 0) + 1
        return counts


# ---------------------------------------------------------------- reference rules (see module docstring)

def _group_metadata(result: SimulationResult) -> Iterable[tuple[Any, Any]]:
    from decoders import decode_record

    for record in result.records:
        decoded = decode_record(record.key, record.value)
        if decoded.type == "group_metadata":
            yield record, decoded


def record_times(result: SimulationResult) -> dict[str, list[int]]:
    """Per group, the time each GroupMetadata record stands for."""
    times: dict[str, list[int]] = defaultdict(list)
    generation: dict[str, int | None] = {}
    for record, decoded in _group_metadata(result):
        group = decoded.key["group"]
        if decoded.value is None:
            times[group].append(record.timestamp)
            generation[group] = None
        elif generation.get(group, -1) != decoded.value["generation"]:
            times[group].append(decoded.value["current_state_timestamp"])
            generation[group] = decoded.value["generation"]
        else:
            times[group].append(record.timestamp)
    return times


def seen_at(times: list[int], moment: int | None) -> int | None:
    """When the records show something that happened at ``moment``: the first record time at or after it."""
    if moment is None:
        return None
    return next((t for t in times if t >= moment), None)


def visible_generations(result: SimulationResult) -> dict[str, list[dict]]:
    """Per group, the reference's generations that a GroupMetadata record was written for."""
    recorded: dict[str, set[int]] = defaultdict(set)
    for _, decoded in _group_metadata(result):
        if decoded.value is not None:
            recorded[decoded.key["group"]].add(decoded.value["generation"])
    return {g["group"]: [gen for gen in g["generations"] if gen["generation"] in recorded[g["group"]]]
            for g in result.timeline["groups"]}


def removal_time(result: SimulationResult, group: str) -> int | None:
    """When the reference removed ``group`` (deleted or expired), if it did."""
    for g in result.timeline["groups"]:
        if g["group"] == group and g["removals"]:
            return g["removals"][-1]["at"]
    return None


def expected_group_generations(result: SimulationResult) -> list[dict]:
    rows = []
    for group, generations in visible_generations(result).items():
        for gen, following in zip(generations, [*generations[1:], None], strict=False):
            consecutive = following is None or following["generation"] == gen["generation"] + 1
            rows.append({
                "group": group, "generation": gen["generation"], "protocol_type": gen["protocol_type"],
                "protocol": gen["protocol"], "leader": gen["leader"], "member_count": gen["member_count"],
                "started_at": gen["started_at"],
                "ended_at": following["started_at"] if following else removal_time(result, group),
                # not a gold column: the reference cause, checked against gold's end_reason via CAUSES
                "end_reason": gen["end_reason"] if consecutive else None,
            })
    return rows


def expected_group_membership(result: SimulationResult) -> list[dict]:
    times, visible = record_times(result), visible_generations(result)
    rows = []
    for m in result.tables["group_membership"]:
        if m["first_generation"] is None:
            continue
        seen = [g for g in visible[m["group"]] if m["first_generation"] <= g["generation"] <= m["last_generation"]]
        if not seen:
            continue  # its generations were all cut short: no record lists it
        rows.append({
            "group": m["group"], "member_id": m["member_id"], "group_instance_id": m["group_instance_id"],
            "client_id": m["client_id"], "client_host": m["client_host"],
            "session_timeout_ms": m["session_timeout"], "rebalance_timeout_ms": m["rebalance_timeout"],
            "valid_from": max(m["valid_from"], seen[0]["started_at"]),
            "valid_to": seen_at(times[m["group"]], m["valid_to"]),
            "first_generation": seen[0]["generation"], "last_generation": seen[-1]["generation"],
        })
    return rows


def expected_partition_assignments(result: SimulationResult) -> list[dict]:
    times = record_times(result)
    return [{"group": a["group"], "topic": a["topic"], "partition": a["partition"], "member_id": a["member_id"],
             "client_id": a["client_id"], "generation": a["generation"], "valid_from": a["valid_from"],
             "valid_to": seen_at(times[a["group"]], a["valid_to"])}
            for a in result.tables["partition_assignments"]]


def expected_group_state_history(result: SimulationResult) -> list[dict]:
    rows = []
    for group, generations in visible_generations(result).items():
        starts = {(g["started_at"], "CompletingRebalance" if g["member_count"] else "Empty") for g in generations}
        for s in result.tables["group_state_history"]:
            if s["group"] != group or s["state"] == "PreparingRebalance":
                continue  # never written
            if s["state"] in ("Empty", "CompletingRebalance") and (s["at"], s["state"]) not in starts:
                continue  # a generation without a record
            rows.append({"group": group, "state": s["state"], "at": s["at"]})
    return rows


def expected_committed_offsets(result: SimulationResult) -> list[dict]:
    expected: dict[tuple, dict] = {}
    for c in result.tables["committed_offsets"]:
        expected[(c["group"], c["topic"], c["partition"])] = {
            "group": c["group"], "topic": c["topic"], "partition": c["partition"], "offset": c["offset"],
            "leader_epoch": c["leader_epoch"], "metadata": c["metadata"], "commit_timestamp": c["commit_timestamp"]}
    for g in result.timeline["groups"]:
        for removal in g["offset_removals"]:
            key = (g["group"], removal["topic"], removal["partition"])
            if key in expected and expected[key]["commit_timestamp"] <= removal["at"]:
                del expected[key]
    return list(expected.values())


# Client events at which a reference consumer stops working on partitions it owned.
_STOPPING = ("partitions_revoked", "partitions_lost", "close")
# The member named in the coordinator's reason for a rebalance (GroupMetadataManager's messages:
# "Leader <id> re-joining group during Stable", "Updating metadata for member <id> during Stable", ...).
_TRIGGER = re.compile(r"^(?:Leader|Updating metadata for member|Adding new member) (\S+)")


def stop_moments(result: SimulationResult) -> dict[str, list[tuple[int, int]]]:
    """Per member id, (event index, time) of each moment its consumer stopped working on partitions it owned.

    A revocation or loss of at least one partition, a close with partitions, a crash, or the start of a
    stall that ended in a poll timeout (the application stopped polling then, its heartbeats went on).
    Each moment goes to the member id the consumer held then (a restarted consumer has a new one). The
    event index orders moments that share a millisecond (a cooperative member revokes in the same
    millisecond as the generation that took its partitions forms, when the scenario has no latency).
    """
    current: dict[str, str] = {}
    stalled: dict[str, tuple[int, int]] = {}
    moments: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for index, e in enumerate(result.timeline["events"]):
        if not e["source"].startswith("consumer:"):
            continue
        consumer, kind = e["source"], e["kind"]
        if kind == "join_group_response" and e.get("member_id"):
            current[consumer] = e["member_id"]
        member = current.get(consumer)
        if member is None:
            continue
        if (kind in _STOPPING and e.get("partitions")) or kind == "crash":
            moments[member].append((index, e["at"]))
        elif kind == "stall":
            stalled[consumer] = (index, e["at"])
        elif kind == "poll_timeout_expired" and consumer in stalled:
            moments[member].append(stalled.pop(consumer))
    return moments


def _generation_events(result: SimulationResult) -> dict[tuple[str, int, int], int]:
    """(group, generation, started_at) -> index of the coordinator's event that started it."""
    return {(e["group"], e["generation"], e["at"]): index for index, e in enumerate(result.timeline["events"])
            if e["source"] == "coordinator" and e["kind"] == "generation"}


def _owners(generation: dict) -> dict[tuple[str, int], str]:
    """(topic, partition) -> its owner's identity (group.instance.id, else member id) in ``generation``."""
    return {(a["topic"], p): m["group_instance_id"] or m["member_id"]
            for m in generation["members"] for a in (m["assignment"] or []) for p in a["partitions"]}


def expected_rebalance_events(result: SimulationResult) -> list[dict]:
    stops, started = stop_moments(result), _generation_events(result)
    latency = result.timeline.get("network_latency_ms", 0)
    replaced = {e["old_member_id"]: e["at"] for e in result.timeline["events"]
                if e["kind"] == "static_member_replaced"}
    rows = []
    for group, generations in visible_generations(result).items():
        removals = [r["at"] for g in result.timeline["groups"] if g["group"] == group for r in g["removals"]]
        last_owner: dict[tuple[str, int], str] = {}
        for before, after in zip([None, *generations], generations, strict=False):
            owners = _owners(after)
            new_incarnation = before is None or after["generation"] <= before["generation"] or any(
                before["started_at"] <= at <= after["started_at"] for at in removals)
            if new_incarnation:
                last_owner = {}
            else:
                consecutive = after["generation"] == before["generation"] + 1
                window = [started.get((group, g["generation"], g["started_at"]), -1) for g in (before, after)]
                stopped = sorted(at for m in before["members"] for index, at in stops.get(m["member_id"], [])
                                 if window[0] < index < window[1]
                                 # back under a new id without a rebalance: it did not stop for this one
                                 and replaced.get(m["member_id"], after["started_at"] + 1) > after["started_at"])
                trigger = _TRIGGER.match(after["rebalance_reason"] or "") if consecutive else None
                rows.append({
                    "group": group, "from_generation": before["generation"], "to_generation": after["generation"],
                    "join_completed_at": after["started_at"],
                    "partitions_moved": sum(1 for tp, owner in owners.items() if last_owner.get(tp, owner) != owner),
                    # not gold columns: checked against gold's likely_cause, triggered_by and stopped_at bounds
                    "likely_cause": before["end_reason"] if consecutive else None,
                    "triggered_by": trigger.group(1) if trigger else None,
                    # as the broker saw them: a client's act reaches it one network latency later
                    "stopped_at": [stopped[0] + latency, stopped[-1] + latency] if stopped else None,
                })
            if not after["member_count"]:
                last_owner = {}  # nothing moves from before the group went Empty
            last_owner.update(owners)
    return rows


# ---------------------------------------------------------------- KIP-848 groups (see module docstring)

def expected_consumer_group_generations(result: SimulationResult) -> list[dict]:
    return [{"group": g["group"], "generation": g["generation"], "protocol_type": "consumer",
             "protocol": g["protocol"], "leader": None, "member_count": g["member_count"],
             "started_at": g["started_at"], "stable_at": g["stable_at"], "ended_at": g["ended_at"],
             # not compared as is: the reference cause, checked against gold's likely cause via CAUSES
             "end_reason": g["end_reason"]}
            for g in result.tables["consumer_group_generations"]]


def expected_consumer_group_membership(result: SimulationResult) -> list[dict]:
    return [{"group": m["group"], "member_id": m["member_id"], "group_instance_id": m["group_instance_id"],
             "client_id": m["client_id"], "client_host": m["client_host"],
             "session_timeout_ms": None,  # only classic members of a consumer group have one
             "rebalance_timeout_ms": m["rebalance_timeout_ms"], "subscribed_topics": m["subscribed_topics"],
             "subscribed_topic_regex": m["subscribed_topic_regex"], "server_assignor": m["server_assignor"],
             "valid_from": m["valid_from"], "valid_to": m["valid_to"], "first_generation": m["first_generation"],
             "last_generation": m["last_generation"], "first_member_epoch": m["first_member_epoch"],
             "last_member_epoch": m["last_member_epoch"]}
            for m in result.tables["consumer_group_membership"]]


def expected_consumer_group_assignments(result: SimulationResult) -> list[dict]:
    return [{"group": a["group"], "member_id": a["member_id"], "assignment_kind": a["assignment_kind"],
             "topic_id": a["topic_id"], "partition": a["partition"], "valid_from": a["valid_from"],
             "valid_to": a["valid_to"], "generation": a["generation"], "client_id": a["client_id"]}
            for a in result.tables["consumer_group_partition_assignments"]]


def expected_consumer_group_state_history(result: SimulationResult) -> list[dict]:
    return [{"group": s["group"], "state": s["state"], "at": s["at"], "until": s["until"],
             "generation": s["generation"], "assignment_epoch": s["assignment_epoch"]}
            for s in result.tables["consumer_group_state_history"]]


def expected_consumer_group_rebalances(result: SimulationResult) -> list[dict]:
    rows = []
    for r in result.tables["consumer_group_rebalances"]:
        causes = set(r["causes"])
        rows.append({k: r[k] for k in (
            "group", "from_generation", "to_generation", "started_at", "last_stable_at", "join_completed_at",
            "stable_at", "members_before", "members_after", "members_joined", "members_left", "members_kept",
            "partitions_moved", "partitions_kept")}
            # not a gold column: the reference's cause when every bump in between had the same one
            | {"likely_cause": causes.pop() if len(causes) == 1 else None})
    return rows


@dataclass(frozen=True)
class Compared:
    """One compared gold table: its key columns, the expected rows, and which of its rows are compared."""

    spec: Any
    key: tuple[str, ...]
    expected: Callable[[SimulationResult], list[dict]]
    where: str = "true"


CLASSIC = "coalesce(group_type, 'classic') = 'classic'"  # rows written before group_type existed
KIP848 = "group_type = 'consumer'"

# The compared fields are the expected rows' keys other than ``key``.
TABLES: tuple[Compared, ...] = (
    Compared(GROUP_GENERATIONS, ("group", "generation", "started_at"), expected_group_generations,
             where=CLASSIC),
    Compared(GROUP_MEMBERSHIP, ("group", "member_id", "valid_from"), expected_group_membership,
             where=CLASSIC),
    Compared(PARTITION_ASSIGNMENTS, ("group", "topic", "partition", "valid_from"),
             expected_partition_assignments, where=CLASSIC),
    Compared(GROUP_STATE_HISTORY, ("group", "state", "at"), expected_group_state_history,
             where=CLASSIC),
    Compared(COMMITTED_OFFSETS, ("group", "topic", "partition"), expected_committed_offsets),
    Compared(REBALANCE_EVENTS, ("group", "from_generation", "to_generation"),
             expected_rebalance_events, where=f"event_type = 'rebalance' and {CLASSIC}"),
    Compared(GROUP_GENERATIONS, ("group", "generation", "started_at"),
             expected_consumer_group_generations, where=KIP848),
    Compared(GROUP_MEMBERSHIP, ("group", "member_id", "valid_from"), expected_consumer_group_membership,
             where=KIP848),
    Compared(PARTITION_ASSIGNMENTS,
             ("group", "member_id", "assignment_kind", "topic_id", "partition", "valid_from"),
             expected_consumer_group_assignments, where=KIP848),
    Compared(GROUP_STATE_HISTORY, ("group", "state", "at"), expected_consumer_group_state_history,
             where=KIP848),
    Compared(REBALANCE_EVENTS, ("group", "from_generation", "to_generation"),
             expected_consumer_group_rebalances, where=f"event_type = 'rebalance' and {KIP848}"),
)


def scenario_groups(result: SimulationResult) -> set[str]:
    """Every group of a scenario: classic and KIP-848."""
    return {g["group"] for g in result.timeline["groups"]} | {
        g["group"] for g in result.timeline.get("consumer_groups", [])}


# ---------------------------------------------------------------- comparison

def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, default=str)


def _keyed(rows: list[dict], key: tuple[str, ...]) -> dict[str, dict]:
    """Rows by their key string; a repeated key gets ' #2', ' #3', ... (rows ordered by their content)."""
    out: dict[str, dict] = {}
    for row in sorted(rows, key=repr):
        base = ", ".join(f"{k}={row[k]}" for k in key)
        name, n = base, 1
        while name in out:
            n += 1
            name = f"{base} #{n}"
        out[name] = row
    return out


def compare_table(scenario: str, table: str, key: tuple[str, ...], expected: list[dict],
                  actual: list[dict]) -> list[Diff]:
    """Differences between expected and actual rows, matched on ``key``; fields are the expected rows' columns.

    Three expected fields are the reference's facts, checked against what gold may claim (None: not
    checked): ``end_reason`` and ``likely_cause``, the reference's cause, must be one gold's likely cause
    stands for (``CAUSES``); ``triggered_by``, the member the coordinator named, must be among gold's
    ``triggered_by`` when gold lists any, and is required when gold says ``cooperative_follow_up``;
    ``stopped_at``, the first and last moment a member stopped, must lie within gold's
    ``stopped_at_lower_bound`` .. ``stopped_at_upper_bound``.
    """
    diffs = []
    fields = sorted({f for row in expected for f in row} - set(key))
    exp, act = _keyed(expected, key), _keyed(actual, key)
    for name in sorted(exp.keys() | act.keys()):
        e, a = exp.get(name), act.get(name)
        if a is None or e is None:
            shown = a and {f: a.get(f) for f in [*key, *fields]}
            diffs.append(Diff(scenario, table, name, ROW, _json(e), _json(shown)))
            continue
        for f in fields:
            shown, ok = a.get(f), e[f] == a.get(f)
            if f in ("end_reason", "likely_cause"):
                ok = e[f] is None or e[f] in CAUSES.get(a.get(f), set())
            elif f == "triggered_by":
                named = a.get(f) or []
                ok = e[f] is None or (e[f] in named if named else a.get("likely_cause") != "cooperative_follow_up")
            elif f == "stopped_at":
                shown = [a.get("stopped_at_lower_bound"), a.get("stopped_at_upper_bound")]
                ok = e[f] is None or (None not in shown and shown[0] <= e[f][0] and e[f][1] <= shown[1])
            if not ok:
                diffs.append(Diff(scenario, table, name, f, _json(e[f]), _json(shown)))
    return diffs


def _rows(frame: DataFrame) -> list[dict]:
    """Rows as dicts, timestamps as epoch milliseconds (the simulator's unit)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    columns = [F.unix_millis(f.name).alias(f.name) if isinstance(f.dataType, T.TimestampType) else F.col(f.name)
               for f in frame.schema.fields]
    return [row.asDict(recursive=True) for row in frame.select(*columns).collect()]


def compare(spark: SparkSession, settings: Settings, results: dict[str, SimulationResult]) -> list[Diff]:
    """Compare every table of ``TABLES`` in gold with each scenario's expected rows."""
    from pyspark.sql import functions as F

    from pipelines.delta_tables import read_table

    groups = {name: scenario_groups(r) for name, r in results.items()}
    all_groups = sorted(set().union(*groups.values())) if groups else []
    diffs: list[Diff] = []
    for compared in TABLES:
        spec, key, expected_rows = compared.spec, compared.key, compared.expected
        frame = read_table(spark, settings, spec).where(
            (F.col("cluster_name") == settings.cluster_name) & F.col("group").isin(all_groups)).where(compared.where)
        by_group: dict[str, list[dict]] = defaultdict(list)
        for row in _rows(frame):
            by_group[row["group"]].append(row)
        for name, result in results.items():
            actual = [row for g in sorted(groups[name]) for row in by_group.get(g, [])]
            diffs.extend(compare_table(name, spec.name, key, expected_rows(result), actual))
    return diffs


def write_diffs(spark: SparkSession, settings: Settings, diffs: Sequence[Diff], run_id: str,
                validated_at: dt.datetime) -> None:
    """Append ``diffs`` to gold.validation_diffs (created if missing); written once per run_id."""
    from pipelines.delta_tables import ensure_table, idempotent_append

    ensure_table(spark, settings, DIFFS)
    if not diffs:
        return
    rows = [(settings.cluster_name, d.scenario, d.table, d.key, d.field, d.expected, d.actual, run_id, validated_at)
            for d in diffs]
    frame = spark.createDataFrame(rows, schema=DIFFS.schema)
    idempotent_append(frame, settings, DIFFS, app_id=f"validate-{run_id}", version=1)


# ---------------------------------------------------------------- the whole run

def scenario_name(path: str | Path) -> str:
    return Path(path).stem


def build_gold(spark: SparkSession, settings: Settings, results: dict[str, SimulationResult], topic: str) -> None:
    """Produce all scenarios' records to a new ``topic``, ingest it once and refresh gold once."""
    from broker.workload import create_topic
    from cli.simulate import produce_records
    from pipelines.gold.refresh import refresh_gold
    from pipelines.ingest import IngestOptions, run_ingest
    from pipelines.kafka_clients import client_config

    # offsetlake's client configuration: librdkafka's log lines go to the debug log, not to stderr.
    client = client_config(settings)
    records = [rec for r in results.values() for rec in r.records]
    partitions = max([r.timeline["offsets_topic_partitions"] for r in results.values()]
                     + [rec.partition + 1 for rec in records] + [1])
    # retention.ms=-1: the scenarios' timestamps are in the past; time-based retention would delete them.
    create_topic(client, topic, partitions=partitions, config={"retention.ms": "-1"})
    produce_records(client, topic, records)
    run_ingest(spark, settings, IngestOptions(topic=topic, once=True))
    refresh_gold(spark, settings)


def check(spark: SparkSession, settings: Settings, results: dict[str, SimulationResult], topic: str = "",
          run_id: str | None = None) -> ValidationReport:
    """Compare gold (already built) with ``results`` and record the differences."""
    run_id = run_id or uuid.uuid4().hex
    validated_at = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    diffs = compare(spark, settings, results)
    write_diffs(spark, settings, diffs, run_id, validated_at)
    return ValidationReport(run_id=run_id, validated_at=validated_at, topic=topic, scenarios=list(results),
                            results=results, diffs=diffs)


def validate(spark: SparkSession, settings: Settings, scenarios: Sequence[str | Path],
             topic_prefix: str = "offsetlake-validate", kafka_version: str = "4.2") -> ValidationReport:
    """Simulate ``scenarios``, build gold from their records through the real pipeline, compare, record.

    The scenarios' group names must be distinct (they share one topic and one gold).
    """
    from coordinator import simulate

    results: dict[str, SimulationResult] = {}
    owner: dict[str, str] = {}
    for path in scenarios:
        name = scenario_name(path)
        if name in results:
            raise ValueError(f"scenario {name} given twice")
        result = simulate(str(path), kafka_version=kafka_version)
        for group in sorted(scenario_groups(result)):
            if group in owner:
                raise ValueError(f"scenarios {owner[group]} and {name} both use group {group}")
            owner[group] = name
        results[name] = result
    run_id = uuid.uuid4().hex
    topic = f"{topic_prefix}-{run_id[:8]}"
    build_gold(spark, settings, results, topic)
    return check(spark, settings, results, topic=topic, run_id=run_id)
