"""Gold tables against the reference coordinator: every scenario's records go through the real pipeline.

The records of all scenarios in ``conf/scenarios/`` (their group names are distinct) are produced
to one plain topic on the embedded broker in two parts, ingested into silver after each part, and
gold is refreshed after each ingest; a third refresh has nothing new. The expected values come
from the simulator's timeline (``coordinator/timeline.py``), narrowed by rules that say what the
records can show -- each rule is spelled out where it is applied:

* a generation is visible only if a GroupMetadata record was written for it: it reached Stable
  (``stable_at``) or it has no members (Empty); a generation cut short in CompletingRebalance is
  not, so the visible generation before it ends when the next *visible* one starts;
* record times: each record stands for a time (``record_at``): the first record of a generation
  for its currentStateTimestamp, any other record (a static member swap) and a tombstone for
  its append time. A departure is seen at the first record time at or after it;
* a member's stay starts when the first record lists it: ``max(joined, its first visible
  generation's start)``; members of no visible generation never appear;
* PreparingRebalance is never persisted; CompletingRebalance only shows for generations that
  reached Stable.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections import defaultdict
from pathlib import Path

import pytest

from broker.workload import create_topic
from cli.simulate import produce_records
from conf.settings import GoldSettings, KafkaSettings
from coordinator import simulate
from pipelines.delta_tables import read_table
from pipelines.gold.refresh import GOLD, full_rebuild, refresh_gold
from pipelines.ingest import IngestOptions, run_ingest
from pipelines.validation import CAUSES, record_times, removal_time, seen_at, visible_generations

pytestmark = [pytest.mark.broker, pytest.mark.spark]
ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = sorted((ROOT / "conf" / "scenarios").glob("*.yaml"))
FIRST_PART = 0.6  # share of each scenario's records in the first ingest


@pytest.fixture(scope="module")
def run(spark, kafka_broker, base_settings, tmp_path_factory):  # type: ignore[no-untyped-def]
    settings = dataclasses.replace(
        base_settings, warehouse=str(tmp_path_factory.mktemp("gold") / "warehouse"),
        kafka=KafkaSettings(bootstrap_servers=kafka_broker.bootstrap_servers),
        gold=GoldSettings(storm_rebalances=8, storm_window_minutes=10))
    results = [simulate(str(path), kafka_version="4.2") for path in SCENARIOS]
    client = settings.kafka.librdkafka_config()
    topic = f"offsets-{uuid.uuid4().hex[:8]}"
    # retention.ms=-1: the scenarios' timestamps are in the past; time-based retention would delete them.
    create_topic(client, topic, partitions=max(r.timeline["offsets_topic_partitions"] for r in results),
                 config={"retention.ms": "-1"})
    cut = [int(len(r.records) * FIRST_PART) for r in results]
    produce_records(client, topic, [rec for r, n in zip(results, cut, strict=True) for rec in r.records[:n]])
    run_ingest(spark, settings, IngestOptions(topic=topic, once=True))
    first_counts = refresh_gold(spark, settings)
    produce_records(client, topic, [rec for r, n in zip(results, cut, strict=True) for rec in r.records[n:]])
    run_ingest(spark, settings, IngestOptions(topic=topic, once=True))
    counts = refresh_gold(spark, settings)
    versions = {spec.name: _version(spark, settings, spec) for spec in GOLD}
    again = refresh_gold(spark, settings)
    return {
        "settings": settings, "results": results, "first_counts": first_counts, "counts": counts,
        "again": again, "versions": versions,
        "versions_after": {spec.name: _version(spark, settings, spec) for spec in GOLD},
        "gold": {spec.name: _rows(read_table(spark, settings, spec)) for spec in GOLD},
        "full": {name: _rows(frame) for name, frame in full_rebuild(spark, settings).items()},
    }


def _version(spark, settings, spec) -> int:  # type: ignore[no-untyped-def]
    from delta.tables import DeltaTable

    from pipelines.delta_tables import table_path

    return DeltaTable.forPath(spark, str(table_path(settings, spec))).history(1).collect()[0]["version"]


def _rows(frame) -> list[dict]:  # type: ignore[no-untyped-def]
    """Rows as dicts, timestamps as epoch milliseconds (the simulator's unit)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    columns = [F.unix_millis(f.name).alias(f.name) if isinstance(f.dataType, T.TimestampType) else F.col(f.name)
               for f in frame.schema.fields]
    return [row.asDict(recursive=True) for row in frame.select(*columns).collect()]


def _gold(run, table: str) -> list[dict]:  # type: ignore[no-untyped-def]
    return run["gold"][f"gold.{table}"]


def test_group_generations_are_the_reference_generations_that_records_show(run) -> None:  # type: ignore[no-untyped-def]
    expected, causes = [], []
    for result in run["results"]:
        for group, generations in visible_generations(result).items():
            for gen, following in zip(generations, [*generations[1:], None], strict=False):
                ended = following["started_at"] if following else removal_time(result, group)
                expected.append((group, gen["generation"], gen["protocol_type"], gen["protocol"], gen["leader"],
                                 gen["member_count"], gen["started_at"], ended))
                consecutive = following is None or following["generation"] == gen["generation"] + 1
                causes.append((group, gen["generation"], gen["end_reason"] if consecutive else None))
    rows = _gold(run, "group_generations")
    actual = [(r["group"], r["generation"], r["protocol_type"], r["protocol"], r["leader"], r["member_count"],
               r["started_at"], r["ended_at"]) for r in rows]
    assert sorted(set(actual) - set(expected), key=repr) == sorted(set(expected) - set(actual), key=repr)
    assert len(actual) == len(expected)
    # The likely cause agrees with the reference's actual cause wherever one rebalance separates them.
    by_key = {(r["group"], r["generation"]): r["end_reason"] for r in rows}
    wrong = [(g, n, by_key[(g, n)], cause) for g, n, cause in causes
             if cause is not None and cause not in CAUSES.get(by_key[(g, n)], set())]
    assert wrong == []


def test_group_membership_has_every_member_of_a_recorded_generation_with_record_times(run) -> None:  # type: ignore[no-untyped-def]
    expected = []
    for result in run["results"]:
        times, visible = record_times(result), visible_generations(result)
        for m in result.tables["group_membership"]:
            if m["first_generation"] is None:
                continue
            seen = [g for g in visible[m["group"]] if m["first_generation"] <= g["generation"] <= m["last_generation"]]
            if not seen:
                continue  # its generations were all cut short: no record lists it
            expected.append((m["group"], m["member_id"], m["group_instance_id"], m["client_id"], m["client_host"],
                             m["session_timeout"], m["rebalance_timeout"], max(m["valid_from"], seen[0]["started_at"]),
                             seen_at(times[m["group"]], m["valid_to"]), seen[0]["generation"],
                             seen[-1]["generation"]))
    actual = [(r["group"], r["member_id"], r["group_instance_id"], r["client_id"], r["client_host"],
               r["session_timeout_ms"], r["rebalance_timeout_ms"], r["valid_from"], r["valid_to"],
               r["first_generation"], r["last_generation"]) for r in _gold(run, "group_membership")]
    assert sorted(actual, key=repr) == sorted(expected, key=repr)


def test_partition_assignments_are_the_stored_assignments_until_the_next_record(run) -> None:  # type: ignore[no-untyped-def]
    expected = []
    for result in run["results"]:
        times = record_times(result)
        for a in result.tables["partition_assignments"]:
            expected.append((a["group"], a["topic"], a["partition"], a["member_id"], a["client_id"],
                             a["generation"], a["valid_from"], seen_at(times[a["group"]], a["valid_to"])))
    actual = [(r["group"], r["topic"], r["partition"], r["member_id"], r["client_id"], r["generation"],
               r["valid_from"], r["valid_to"]) for r in _gold(run, "partition_assignments")]
    assert sorted(actual, key=repr) == sorted(expected, key=repr)


def test_group_state_history_is_the_reference_sequence_without_unpersisted_states(run) -> None:  # type: ignore[no-untyped-def]
    order = {"Empty": 0, "CompletingRebalance": 1, "Stable": 2, "Dead": 3}
    expected = []
    for result in run["results"]:
        for group, generations in visible_generations(result).items():
            starts = {(g["started_at"], "CompletingRebalance" if g["member_count"] else "Empty") for g in generations}
            for s in result.tables["group_state_history"]:
                if s["group"] != group or s["state"] == "PreparingRebalance":
                    continue  # never written
                if s["state"] in ("Empty", "CompletingRebalance") and (s["at"], s["state"]) not in starts:
                    continue  # a generation without a record (cut short; a simple consumer's group)
                expected.append((group, s["state"], s["at"]))
    rows = _gold(run, "group_state_history")
    actual = [(r["group"], r["state"], r["at"]) for r in rows]
    assert sorted(actual, key=lambda r: (r[0], r[2], order[r[1]])) == \
        sorted(expected, key=lambda r: (r[0], r[2], order[r[1]]))
    assert all(r["until"] is None or r["until"] >= r["at"] for r in rows)


def test_committed_offsets_are_the_last_commit_per_partition_with_tombstones_applied(run) -> None:  # type: ignore[no-untyped-def]
    expected = {}
    for result in run["results"]:
        for c in result.tables["committed_offsets"]:
            expected[(c["group"], c["topic"], c["partition"])] = (c["offset"], c["leader_epoch"], c["metadata"],
                                                                  c["commit_timestamp"])
        for g in result.timeline["groups"]:
            for removal in g["offset_removals"]:
                key = (g["group"], removal["topic"], removal["partition"])
                if key in expected and expected[key][3] <= removal["at"]:
                    del expected[key]
    actual = {(r["group"], r["topic"], r["partition"]): (r["offset"], r["leader_epoch"], r["metadata"],
                                                         r["commit_timestamp"])
              for r in _gold(run, "committed_offsets")}
    assert actual == expected


def test_offset_commit_rate_counts_each_groups_commit_records_per_minute(run) -> None:  # type: ignore[no-untyped-def]
    expected: dict[tuple, int] = defaultdict(int)
    for result in run["results"]:
        for c in result.tables["committed_offsets"]:
            expected[(c["group"], c["commit_timestamp"] // 60_000 * 60_000)] += 1
    actual = {(r["group"], r["minute"]): r["commit_records"] for r in _gold(run, "offset_commit_rate")}
    assert actual == dict(expected)


def test_rebalance_events_have_one_row_per_new_generation_and_flag_storms(run) -> None:  # type: ignore[no-untyped-def]
    rows = _gold(run, "rebalance_events")
    rebalances = [r for r in rows if r["event_type"] == "rebalance"]
    expected = sorted((group, gen["generation"]) for result in run["results"]
                      for group, gens in visible_generations(result).items() for gen in gens[1:])
    assert sorted((r["group"], r["to_generation"]) for r in rebalances) == expected
    assert all(r["duration_upper_bound_ms"] >= 0 for r in rebalances)
    storms = {r["group"] for r in rebalances if r["is_storm"]}
    assert "workers" in storms and "billing" not in storms
    # The static members' restarts that kept generation 1 (static-membership-restart): edge-b, then edge-a.
    restarts = sorted((r["group"], r["to_generation"], tuple(r["static_restarts"]))
                      for r in rows if r["event_type"] == "static_member_restart")
    assert ("sessions", 1, ("edge-b",)) in restarts and ("sessions", 1, ("edge-a",)) in restarts


def test_refreshing_incrementally_gives_the_same_tables_as_a_full_rebuild(run) -> None:  # type: ignore[no-untyped-def]
    for spec in GOLD:
        assert sorted(run["gold"][spec.name], key=repr) == sorted(run["full"][spec.name], key=repr), spec.name


def test_a_refresh_with_no_new_silver_data_writes_nothing(run) -> None:  # type: ignore[no-untyped-def]
    assert run["again"] == run["counts"]
    assert run["versions_after"] == run["versions"]
    assert all(n > 0 for n in run["counts"].values())
