"""Which ``__consumer_offsets`` partition holds a group's records.

``GroupCoordinatorService.partitionFor`` (Kafka 4.3.1; ``GroupMetadataManager.partitionFor``
in 2.x/3.x) is ``Utils.abs(groupId.hashCode()) % numPartitions`` where

* ``String.hashCode`` is ``h = 31*h + c`` over the string's **UTF-16 code units** with
  32-bit signed overflow — a character outside the BMP contributes its two surrogates;
* ``Utils.abs(n)`` is ``n == Integer.MIN_VALUE ? 0 : Math.abs(n)``
  (``clients/.../common/utils/Utils.java``). Note: *not* ``n & 0x7fffffff`` — that is
  ``Utils.toPositive``, the producer partitioner's function, and gives different
  partitions for negative hashes (``"my-group"``: 12 with ``abs``, 36 with ``toPositive``);
* ``numPartitions`` is the topic's actual partition count (default 50,
  ``offsets.topic.num.partitions``) — never add partitions to this topic.
"""

from __future__ import annotations

_MASK = 0xFFFFFFFF


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` as a signed 32-bit int.

    >>> java_string_hash(""), java_string_hash("a"), java_string_hash("ab")
    (0, 97, 3105)
    """
    h = 0
    for ch in text:
        c = ord(ch)
        if c > 0xFFFF:  # a supplementary character is two UTF-16 code units
            c -= 0x10000
            h = (31 * h + (0xD800 | (c >> 10))) & _MASK
            h = (31 * h + (0xDC00 | (c & 0x3FF))) & _MASK
        else:
            h = (31 * h + c) & _MASK
    return h - 0x100000000 if h & 0x80000000 else h


def kafka_abs(n: int) -> int:
    """``Utils.abs``: ``Math.abs`` except that ``Integer.MIN_VALUE`` maps to 0."""
    return 0 if n == -0x80000000 else abs(n)


def coordinator_partition(group_id: str, partitions: int = 50) -> int:
    """The ``__consumer_offsets`` partition (and so the coordinator) of ``group_id``.

    >>> coordinator_partition("my-group")
    12
    """
    if not isinstance(group_id, str):
        raise TypeError(f"group_id must be str, got {type(group_id).__name__}")
    if not isinstance(partitions, int) or partitions <= 0:
        raise ValueError(f"partitions must be a positive int (the topic's partition count), got {partitions!r}")
    return kafka_abs(java_string_hash(group_id)) % partitions
