"""metrics/groups.py: the consumer groups' metrics are what small gold tables, written with delta-rs, hold."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from conf.settings import Settings
from metrics import catalog as C
from metrics import groups
from metrics.groups import GroupMetrics
from pipelines.delta_tables import table_path
from tests.metrics.gold_tables import (
    LAG,
    MEMBERS,
    REBALANCES,
    STATES,
    at,
    lag_row,
    member_row,
    rebalance_row,
    state_row,
    write,
)

Samples = dict[str, dict[tuple[str, ...], float]]


def samples(collector: GroupMetrics) -> Samples:
    """sample name -> {label values in the catalog's order: value} of one scrape."""
    out: Samples = defaultdict(dict)
    for family in collector.collect():
        for sample in family.samples:
            out[sample.name][tuple(sample.labels.values())] = sample.value
    return out


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(cluster_name="c1", warehouse=str(tmp_path / "warehouse"))


def test_each_partition_s_lag_is_its_row_in_the_cluster_s_newest_snapshot(settings: Settings) -> None:
    yesterday, now = at(-86_400), at(0)
    write(settings, LAG, [lag_row("g1", 0, 500, yesterday), lag_row("g1", 1, 400, yesterday)])
    newest = [lag_row("g1", 0, 42, now, interpolated=12.5, message_timestamp=11.0, group_status="WARN"),
              lag_row("g1", 1, 8, now, status="WARN", group_status="WARN", interpolated=3.0),
              lag_row("g1", 2, None, now, status=None, group_status="WARN"),  # nothing committed there
              lag_row("g2", 0, 0, now, topic="payments", interpolated=0.0, message_timestamp=0.0)]
    write(settings, LAG, newest)

    s = samples(GroupMetrics(settings))

    committed = [r for r in newest if r["lag"] is not None]
    assert s[C.PARTITION_LAG.name] == {("c1", r["group"], r["topic"], str(r["partition"])): r["lag"] for r in committed}
    assert s[C.TOPIC_LAG.name] == {("c1", "g1", "orders"): 42 + 8, ("c1", "g2", "payments"): 0}
    assert s[C.PARTITION_LAG_SECONDS.name] == {
        ("c1", "g1", "orders", "0", "interpolated"): 12.5, ("c1", "g1", "orders", "0", "message_timestamp"): 11.0,
        ("c1", "g1", "orders", "1", "interpolated"): 3.0,
        ("c1", "g2", "payments", "0", "interpolated"): 0.0, ("c1", "g2", "payments", "0", "message_timestamp"): 0.0}
    # Burrow's codes: OK 1, WARN 2; the group's WARN is its worst partition's.
    assert s[C.PARTITION_STATUS.name] == {("c1", "g1", "orders", "0", "OK"): 1, ("c1", "g1", "orders", "1", "WARN"): 2,
                                          ("c1", "g2", "payments", "0", "OK"): 1}
    assert s[C.GROUP_STATUS.name] == {("c1", "g1", "WARN"): 2, ("c1", "g2", "OK"): 1}
    assert s[C.LAG_SNAPSHOT_TIME.name] == {("c1",): now.timestamp()}


def test_each_cluster_is_served_its_own_newest_snapshot_when_others_share_the_warehouse(tmp_path: Path) -> None:
    c1, c2 = (Settings(cluster_name=name, warehouse=str(tmp_path / "warehouse")) for name in ("c1", "c2"))
    write(c1, LAG, [lag_row("g", 0, 5, at(0), cluster="c1")])
    # One file with both clusters' rows (as OPTIMIZE leaves them), c2's newer than c1's newest.
    write(c1, LAG, [lag_row("g", 0, 7, at(60), cluster="c1"), lag_row("g", 0, 9, at(180), cluster="c2")])
    write(c2, LAG, [lag_row("g", 0, 11, at(240), cluster="c2")])
    # The newest file's cluster range holds c1, but it has no row of c1: the first floor tried finds nothing.
    write(c2, LAG, [lag_row("g", 0, 13, at(300), cluster="c0"), lag_row("g", 0, 15, at(360), cluster="c2")])

    assert samples(GroupMetrics(c1))[C.PARTITION_LAG.name] == {("c1", "g", "orders", "0"): 7}
    assert samples(GroupMetrics(c2))[C.PARTITION_LAG.name] == {("c2", "g", "orders", "0"): 15}


def test_members_are_the_open_membership_rows_of_groups_that_were_not_deleted(settings: Settings) -> None:
    write(settings, STATES, [
        state_row("g1", "CompletingRebalance", at(0), at(1)), state_row("g1", "Stable", at(1)),
        state_row("g2", "Stable", at(0), at(50)), state_row("g2", "Empty", at(50)),
        state_row("g3", "Stable", at(0), at(70)), state_row("g3", "Dead", at(70)),
        state_row("k1", "Reconciling", at(5), group_type="consumer"),
    ])
    write(settings, MEMBERS, [
        member_row("g1", "a", at(0)), member_row("g1", "b", at(1)), member_row("g1", "c", at(0), at(1)),
        member_row("g2", "d", at(0), at(50)), member_row("g3", "e", at(0), at(70)), member_row("k1", "f", at(5)),
    ])

    s = samples(GroupMetrics(settings))

    assert s[C.MEMBERS.name] == {("c1", "g1"): 2, ("c1", "g2"): 0, ("c1", "k1"): 1}
    # kminion's info: 1 when Stable; the deleted g3 is not a group any more.
    assert s[C.GROUP_INFO.name] == {("c1", "g1", "Stable", "classic"): 1, ("c1", "g2", "Empty", "classic"): 0,
                                    ("c1", "k1", "Reconciling", "consumer"): 0}


def test_rebalances_are_counted_by_cause_with_their_stop_bounds_and_the_newest_times(settings: Settings) -> None:
    write(settings, STATES, [state_row("g1", "Stable", at(0)), state_row("g3", "Dead", at(0))])
    rebalances = [
        rebalance_row("g1", "member_joined", at(10), stopped_ms=(1_000, 3_000), generation=1),
        rebalance_row("g1", "member_joined", at(20), stopped_ms=(500, 2_500), generation=2, storm=True),
        rebalance_row("g1", None, at(30), stopped_ms=(None, None), generation=3, storm=True),
        rebalance_row("g1", "static_member_restart", at(40), event_type="static_member_restart", generation=3),
        rebalance_row("g3", "member_left", at(15)),  # g3 was deleted since
    ]
    write(settings, REBALANCES, rebalances)

    s = samples(GroupMetrics(settings))

    assert s[C.REBALANCES.name] == {("c1", "g1", "member_joined"): 2, ("c1", "g1", "unknown"): 1}
    # A static restart is no rebalance: the last one ended at 30 s, not 40 s.
    assert s[C.LAST_REBALANCE.name] == {("c1", "g1"): at(30).timestamp()}
    assert s[C.REBALANCING_SECONDS.name] == {("c1", "g1", "lower"): (1_000 + 500) / 1000,
                                             ("c1", "g1", "upper"): (3_000 + 2_500) / 1000}
    assert s[C.LAST_STORM.name] == {("c1", "g1"): at(30).timestamp()}


def test_tables_not_in_the_warehouse_yet_are_left_out_and_served_once_they_are_there(settings: Settings) -> None:
    collector = GroupMetrics(settings)
    first = samples(collector)
    assert first[C.TABLE_UP.name] == {("c1", spec.name): 0 for spec in groups.READS}
    assert C.PARTITION_LAG.name not in first and C.MEMBERS.name not in first

    write(settings, LAG, [lag_row("g1", 0, 3, at(0))])
    second = samples(collector)

    assert second[C.TABLE_UP.name][("c1", LAG.name)] == 1
    assert second[C.PARTITION_LAG.name] == {("c1", "g1", "orders", "0"): 3}


def test_a_table_is_read_again_only_when_it_has_a_new_version(settings: Settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    write(settings, LAG, [lag_row("g1", 0, 3, at(0))])
    write(settings, STATES, [state_row("g1", "Stable", at(0))])
    write(settings, MEMBERS, [member_row("g1", "a", at(0))])
    write(settings, REBALANCES, [rebalance_row("g1", "member_joined", at(0))])
    collector = GroupMetrics(settings)
    samples(collector)
    queries: list[str] = []
    real_query = groups.query

    def counted(delta: object, sql: str) -> list[dict]:
        queries.append(sql)
        return real_query(delta, sql)

    monkeypatch.setattr(groups, "query", counted)

    unchanged = samples(collector)
    assert queries == []
    assert unchanged[C.PARTITION_LAG.name] == {("c1", "g1", "orders", "0"): 3}

    write(settings, LAG, [lag_row("g1", 0, 1, at(60))])
    changed = samples(collector)

    assert queries and all("snapshot" in sql for sql in queries)  # only gold.consumer_lag was read again
    assert changed[C.PARTITION_LAG.name] == {("c1", "g1", "orders", "0"): 1}


def test_an_unreadable_table_is_said_once_and_the_other_tables_are_still_served(settings: Settings) -> None:
    write(settings, LAG, [lag_row("g1", 0, 3, at(0))])
    log = Path(table_path(settings, REBALANCES)) / "_delta_log"
    log.mkdir(parents=True)
    (log / "00000000000000000000.json").write_text("this is not a Delta log\n")
    problems: list[str] = []
    collector = GroupMetrics(settings, on_problem=problems.append)

    samples(collector)
    s = samples(collector)

    assert len(problems) == 1 and problems[0].startswith(f"{REBALANCES.name} could not be read: ")
    assert s[C.TABLE_UP.name][("c1", REBALANCES.name)] == 0
    assert s[C.PARTITION_LAG.name] == {("c1", "g1", "orders", "0"): 3}


def test_every_family_a_scrape_yields_is_in_the_catalog_with_its_labels(settings: Settings) -> None:
    write(settings, LAG, [lag_row("g1", 0, 3, at(0), interpolated=1.0, message_timestamp=1.0)])
    write(settings, STATES, [state_row("g1", "Stable", at(0))])
    write(settings, MEMBERS, [member_row("g1", "a", at(0))])
    write(settings, REBALANCES, [rebalance_row("g1", "member_joined", at(0), stopped_ms=(1, 2), storm=True)])

    yielded = {}
    for family in GroupMetrics(settings).collect():
        for sample in family.samples:
            yielded[sample.name] = tuple(sample.labels)

    assert yielded == {m.name: m.labels for m in C.GROUP_METRICS}
