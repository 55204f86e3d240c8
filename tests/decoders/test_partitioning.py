"""coordinator_partition = Utils.abs(groupId.hashCode()) % partitions, checked against values
reasoned out by hand from Java's String.hashCode (h = 31*h + c over UTF-16 code units,
32-bit signed overflow) and Kafka's Utils.abs (Math.abs, but MIN_VALUE -> 0)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoders import coordinator_partition
from decoders.partitioning import java_string_hash, kafka_abs


def _polynomial_hash(text: str) -> int:
    """An independent formulation: sum(c_i * 31**(n-1-i)) mod 2**32, as a signed int."""
    units = text.encode("utf-16-be", "surrogatepass")
    codes = [int.from_bytes(units[i : i + 2], "big") for i in range(0, len(units), 2)]
    n = len(codes)
    h = sum(c * 31 ** (n - 1 - i) for i, c in enumerate(codes)) % 2**32
    return h - 2**32 if h >= 2**31 else h


def test_the_empty_string_hashes_to_zero() -> None:
    assert java_string_hash("") == 0 and coordinator_partition("") == 0


def test_a_single_char_hashes_to_its_code_unit() -> None:
    assert java_string_hash("a") == 97
    assert coordinator_partition("a") == 97 % 50 == 47


def test_two_chars_hash_as_31_times_the_first_plus_the_second() -> None:
    assert java_string_hash("ab") == 97 * 31 + 98 == 3105
    assert coordinator_partition("ab") == 5


def test_a_non_bmp_char_counts_as_its_two_utf16_surrogates() -> None:
    # U+1F600 = 0xD83D 0xDE00 in UTF-16: 55357 * 31 + 56832 = 1772899, and 1772899 % 50 = 49.
    # (Hashing the code point 128512 instead would give 128512 % 50 = 12.)
    assert java_string_hash("\U0001F600") == 1772899
    assert coordinator_partition("\U0001F600") == 49


def test_a_lone_surrogate_is_its_own_code_unit() -> None:
    assert java_string_hash("\ud800") == 0xD800 and coordinator_partition("\ud800") == 55296 % 50 == 46


def test_negative_hashes_use_math_abs_not_a_sign_mask() -> None:
    # "my-group": hash -1906497762 (verified with java in kafka-records.md §10).
    assert java_string_hash("my-group") == -1906497762 == _polynomial_hash("my-group")
    assert coordinator_partition("my-group") == 1906497762 % 50 == 12
    # Utils.toPositive (h & 0x7fffffff) would say 36: the partitioner's function, not the coordinator's.
    assert (-1906497762 & 0x7FFFFFFF) % 50 == 36


def test_integer_min_value_maps_to_partition_zero() -> None:
    assert kafka_abs(-(2**31)) == 0
    assert java_string_hash("polygenelubricants") == -(2**31)  # a well-known MIN_VALUE hash
    assert coordinator_partition("polygenelubricants") == 0


def test_the_partition_count_must_be_positive() -> None:
    with pytest.raises(ValueError):
        coordinator_partition("g", 0)
    assert coordinator_partition("console-consumer-12345", 50) == 6  # kafka-records.md §10 (java-checked)


@settings(max_examples=200, deadline=None)
@given(st.text(), st.integers(1, 1000))
def test_the_loop_agrees_with_the_polynomial_for_any_text(text: str, partitions: int) -> None:
    h = _polynomial_hash(text)
    assert java_string_hash(text) == h
    assert coordinator_partition(text, partitions) == (0 if h == -(2**31) else abs(h)) % partitions
