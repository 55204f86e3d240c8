"""The committed-offsets store: nested maps that drop empty levels, iterated in TimelineHashMap order."""

from __future__ import annotations

from coordinator.offsets import OffsetAndMetadata, OffsetStore


def offset(n: int) -> OffsetAndMetadata:
    return OffsetAndMetadata(n, None, "", 0)


def test_removing_the_last_offset_of_a_group_forgets_the_group() -> None:
    store = OffsetStore()
    store.put("g", "t", 0, offset(1))
    store.put("g", "u", 1, offset(2))
    assert store.remove("g", "t", 0) == offset(1)
    assert store.topics_of("g") == ["u"] and store.has_group("g")
    store.remove("g", "u", 1)
    assert not store.has_group("g") and store.get("g", "u", 1) is None


def test_a_later_commit_replaces_the_earlier_one_in_place() -> None:
    store = OffsetStore()
    for partition in (3, 1, 2):
        store.put("g", "t", partition, offset(partition))
    order = [p for _, p, _ in store.group_offsets("g")]
    store.put("g", "t", 1, offset(99))
    assert [p for _, p, _ in store.group_offsets("g")] == order
    assert store.get("g", "t", 1) == offset(99)
