"""Java collection orders, checked against java.util.HashMap/HashSet and Kafka's TimelineHashMap."""

from __future__ import annotations

import random

from coordinator.java_collections import JavaHashMap, JavaHashSet, TimelineHashMap, java_string_hash, timeline_slot
from coordinator.topic_partition import TopicPartition
from tests.coordinator.oracle import run_oracle


def test_string_hash_matches_javas_string_hashcode_including_overflow_and_utf16() -> None:
    # Values from shared/kafka-records.md §10, checked there with javac/java.
    assert java_string_hash("my-group") == -1906497762
    assert java_string_hash("polygenelubricants") == -(2**31)
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97


def test_topic_partition_hash_is_31_times_31_plus_partition_plus_topic_hash() -> None:
    assert TopicPartition("a", 0).java_hash_code() == 31 * 31 + 97
    assert TopicPartition("a", 2).java_hash_code() == 31 * 33 + 97


def test_compute_if_absent_puts_a_new_key_at_the_head_of_its_bin() -> None:
    # "t0" and "Ünïcode" share bucket 12 (hashes 3644 and 1055301514): put keeps insertion order,
    # computeIfAbsent reverses it -- the difference that makes sticky user data differ by topic order.
    put, computed = JavaHashMap(), JavaHashMap()
    for key in ("t0", "Ünïcode"):
        put[key] = 1
        computed.compute_if_absent(key, lambda _: 1)
    assert list(put) == ["t0", "Ünïcode"] and list(computed) == ["Ünïcode", "t0"]


def test_a_map_that_never_resized_iterates_by_bucket_then_insertion_order() -> None:
    # "Aa" and "BB" collide (both hash to 2112): same bucket, so insertion order decides.
    m: JavaHashMap[str, int] = JavaHashMap()
    for key in ["BB", "b", "Aa", "a"]:
        m[key] = 0
    # buckets (capacity 16): "a" -> 97 & 15 = 1, "b" -> 2, "BB"/"Aa" -> (2112 ^ 0) & 15 = 0
    assert list(m) == ["BB", "Aa", "a", "b"]


def test_the_table_doubles_when_size_exceeds_three_quarters_of_capacity() -> None:
    m: JavaHashMap[int, int] = JavaHashMap()
    for i in range(12):
        m[i] = i
    assert m.capacity == 16
    m[12] = 12
    assert m.capacity == 32


def _random_ops(rng: random.Random, keys: list, n: int, compute: bool) -> list[tuple[str, object]]:
    """Puts, removes and (for java.util.HashMap) computeIfAbsent, which inserts at the bin's head."""
    ops = []
    for _ in range(n):
        roll = rng.random()
        op = "-" if roll < 0.25 else ("^" if compute and roll < 0.6 else "+")
        ops.append((op, rng.choice(keys)))
    return ops


def _token(key: object) -> str:
    if isinstance(key, int):
        return f"#{key}"
    if isinstance(key, TopicPartition):
        return f"@{key.topic}/{key.partition}"
    return str(key)


def test_iteration_orders_equal_javas_for_random_puts_and_removes(hash_order_oracle: list[str]) -> None:
    rng = random.Random(7)
    strings = [f"member-{rng.getrandbits(32):08x}" for _ in range(80)] + ["Aa", "BB", "AaAa", "BBBB", "AaBB", "BBAa"]
    partitions = [TopicPartition(t, p) for t in ("orders", "t0", "payments", "x") for p in range(12)]
    cases, expected = [], {}
    for i in range(240):
        kind = ["hashmap", "hashmap-copy", "hashset-copy", "timeline"][i % 4]
        keys = [strings, partitions, list(range(-50, 200))][
            rng.randrange(3) if kind != "timeline" else rng.randrange(3)
        ]
        ops = _random_ops(rng, keys, rng.randint(0, 120), compute=kind != "timeline")
        python_map = TimelineHashMap() if kind == "timeline" else JavaHashMap()
        lines = [f"CASE c{i} {kind}"]
        for op, key in ops:
            lines.append(f"{op} {_token(key)}")
            if op == "+":
                python_map[key] = True
            elif op == "^":
                python_map.compute_if_absent(key, lambda _: True)
            else:
                python_map.pop(key, None)
        lines.append("END")
        cases.append("\n".join(lines))
        if kind == "hashmap-copy":
            order = list(JavaHashMap.copy_of(python_map))
        elif kind == "hashset-copy":
            order = list(JavaHashSet(list(python_map), copy=True))
        else:
            order = list(python_map)
        expected[f"c{i}"] = [_token(k) for k in order]
    output = run_oracle(hash_order_oracle, "\n".join(cases) + "\n")
    actual = {line.split(" ")[1]: line.split(" ")[2:] for line in output.splitlines()}
    mismatches = [c for c in expected if expected[c] != actual.get(c)]
    assert not mismatches, (
        f"{len(mismatches)} orders differ, first {mismatches[0]}: "
        f"{expected[mismatches[0]]} vs {actual.get(mismatches[0])}"
    )


def test_timeline_slots_take_the_top_bits_of_a_fibonacci_hash() -> None:
    # With 2 slots, the slot is the top bit of hashCode * -7046029254386353131 (as unsigned 64-bit).
    product = (1 * -7046029254386353131) & (2**64 - 1)
    assert timeline_slot(1, 2) == product >> 63
