"""Scenario files: the shipped suite loads, and bad files fail with one precise line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from coordinator.scenario import ACTIONS, ScenarioError, load_scenario, parse_scenario

SCENARIOS = sorted((Path(__file__).resolve().parents[2] / "conf" / "scenarios").glob("*.yaml"))

MINIMAL = {
    "name": "m",
    "duration": "1m",
    "topics": [{"name": "t", "partitions": 2}],
    "consumers": [{"name": "c1", "group": "g", "topics": ["t"]}],
    "actions": [{"at": "0s", "action": "join", "consumer": "c1"}],
}


def test_the_suite_has_at_least_eight_scenarios_with_unique_names_and_uses_every_action() -> None:
    scenarios = [load_scenario(p) for p in SCENARIOS]
    assert len(scenarios) >= 8
    assert len({s.name for s in scenarios}) == len(scenarios)
    assert {p.stem for p in SCENARIOS} == {s.name for s in scenarios}
    assert {a.action for s in scenarios for a in s.actions} == set(ACTIONS)


def test_durations_and_start_times_accept_units_and_iso_8601() -> None:
    scenario = parse_scenario({**MINIMAL, "duration": "1.5h", "start": "2026-01-01T00:00:00Z"})
    assert scenario.duration_ms == 5_400_000 and scenario.start_ms == 1_767_225_600_000
    assert parse_scenario({**MINIMAL, "duration": 2500}).duration_ms == 2500


def _error(data: dict, source: str = "s.yaml") -> str:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(data, source)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"actions": [{"at": "0s", "action": "leave", "consumer": "c9"}]},
            "s.yaml: actions[0] (leave): consumer 'c9' is not declared; expected one of c1",
        ),
        (
            {"actions": [{"at": "soon", "action": "join", "consumer": "c1"}]},
            "s.yaml: actions[0] (join): field 'at' = 'soon'; expected a duration like 30s, 5m or 1500 (ms)",
        ),
        (
            {"actions": [{"at": "1s", "action": "stall", "consumer": "c1"}]},
            "s.yaml: actions[0] (stall): field 'duration' is missing",
        ),
        (
            {"actions": [{"at": "1s", "action": "explode"}]},
            "s.yaml: actions[0]: field 'action' = 'explode'; expected one of join, leave, crash, stall, commit, "
            "restart, subscribe, add_partitions, delete_group, delete_offsets",
        ),
        (
            {"actions": [{"at": "1s", "action": "join", "consumer": "c1", "colour": "red"}]},
            "s.yaml: actions[0] (join): unknown field 'colour'; expected one of action, at, consumer",
        ),
        (
            {"actions": [{"at": "2m", "action": "join", "consumer": "c1"}]},
            "s.yaml: actions[0] (join): at 120000 ms is after the scenario's duration 60000 ms",
        ),
        (
            {"consumers": [{"name": "c1", "group": "g", "topics": ["nope"]}]},
            "s.yaml: consumers[0] (c1): topic 'nope' is not declared; expected one of t",
        ),
        (
            {"consumers": [{"name": "c1", "group": "g", "topics": ["t"], "assignors": ["fastest"]}]},
            "s.yaml: consumers[0] (c1): field 'assignors' = ['fastest']; expected a list from range, roundrobin, "
            "sticky, cooperative-sticky",
        ),
        (
            {"topics": [{"name": "t", "partitions": 0}]},
            "s.yaml: topics[0]: field 'partitions' = 0; expected an integer >= 1",
        ),
        (
            {"broker": {"group.max.size": "big"}},
            "s.yaml: broker: group.max.size = 'big'; expected a non-negative integer",
        ),
        (
            {"broker": {"group.max.sise": 3}},
            "s.yaml: broker: unknown field 'group.max.sise'; expected one of group.consumer.heartbeat.interval.ms, "
            "group.consumer.session.timeout.ms, group.initial.rebalance.delay.ms, "
            "group.max.session.timeout.ms, group.max.size, group.min.session.timeout.ms, offset.metadata.max.bytes, "
            "offsets.retention.check.interval.ms, offsets.retention.minutes, offsets.topic.num.partitions",
        ),
        (
            {"actions": [{"at": "1s", "action": "commit"}]},
            "s.yaml: actions[0] (commit): give 'consumer' (commitSync) or 'group' and 'offsets' "
            "(simple consumer commit)",
        ),
    ],
)
def test_an_invalid_scenario_names_the_file_the_place_the_field_and_what_was_expected(
    change: dict, expected: str
) -> None:
    assert _error({**MINIMAL, **change}) == expected


def test_a_missing_file_and_broken_yaml_are_reported_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"^.*missing\.yaml: cannot read scenario: No such file or directory$"):
        load_scenario(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\nactions: [\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(broken)
    assert str(info.value).startswith(f"{broken}: line ") and "invalid YAML" in str(info.value)


def test_a_scenario_can_be_given_as_a_mapping_or_a_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(MINIMAL))
    assert load_scenario(path).actions == load_scenario(MINIMAL).actions
