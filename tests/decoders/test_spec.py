"""The layout vocabulary: Kafka's version notation, names, defaults."""

from __future__ import annotations

import pytest

from decoders.spec import ArrayOf, field, snake_case, struct, versions
from decoders.wire import ZERO_UUID


@pytest.mark.parametrize(
    ("text", "members", "inside", "outside"),
    [
        ("0+", [0, 1, 2, 3, 4], 99, -1),
        ("3+", [3, 4], 3, 2),
        ("1", [1], 1, 2),
        ("0-3", [0, 1, 2, 3], 3, 4),
        ("none", [], None, 0),
    ],
)
def test_version_ranges_read_like_kafkas_json(text: str, members: list[int], inside: int | None, outside: int) -> None:
    v = versions(text)
    assert v.members(4) == members
    assert str(v) == text
    if inside is not None:
        assert inside in v
    assert outside not in v


@pytest.mark.parametrize(
    ("kafka", "snake"),
    [("leaderEpoch", "leader_epoch"), ("GroupId", "group_id"), ("RebalanceTimeoutMs", "rebalance_timeout_ms"),
     ("group", "group"), ("SubscribedTopicNames", "subscribed_topic_names"), ("key", "key")],
)
def test_snake_case_names_come_from_kafkas_camel_case(kafka: str, snake: str) -> None:
    assert snake_case(kafka) == snake


def test_implicit_defaults_follow_kafkas_field_spec() -> None:
    assert field("A", "int32", "0+").default == 0
    assert field("A", "string", "0+", nullable="0+").default == ""  # nullable without "default": "null"
    assert field("A", "uuid", "0+").default == ZERO_UUID
    assert field("A", "[]int32", "0+").default == []
    assert field("A", "int32", "0+", default=-1).default == -1


def test_a_tagged_field_without_versions_takes_its_tagged_versions() -> None:
    f = field("LastAssignmentConfigs", ArrayOf("string"), "", nullable="0+", tag=1, tagged="0+", default=None)
    assert str(f.versions) == "0+" and f.is_tagged_in(0)


def test_duplicate_output_names_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        struct("S", field("groupId", "string", "0"), field("GroupId", "string", "0"))
