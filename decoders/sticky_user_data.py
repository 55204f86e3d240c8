"""User data of the sticky assignors, carried in ``ConsumerProtocolSubscription.UserData``.

* ``StickyAssignor`` ("sticky") writes ``StickyAssignorUserData``: v0 is the member's
  previous assignment (``[]{topic string, partitions []int32}``); v1 (KIP-341,
  KAFKA-7026, Kafka 2.3) appends ``generation`` int32. There is **no version prefix**:
  Kafka tries v1 and falls back to v0, and ignores the user data if neither parses
  (``StickyAssignor.deserializeTopicPartitionAssignment``, Kafka 4.3.1).
* ``CooperativeStickyAssignor`` ("cooperative-sticky", KIP-429, Kafka 2.4) writes just
  ``generation`` int32 (``COOPERATIVE_STICKY_ASSIGNOR_USER_DATA_V0``); from subscription
  v2 the generation also travels in ``GenerationId``.

These use the old ``org.apache.kafka.common.protocol.types.Schema`` encodings
(int16-length strings, int32-count arrays), and ``Schema.read`` ignores trailing bytes —
so do we. Source: ``clients/src/main/java/org/apache/kafka/clients/consumer/{StickyAssignor,
CooperativeStickyAssignor,internals/AbstractStickyAssignor}.java``.

The decoded form is one shape for both assignors, :data:`STICKY_USER_DATA`:
``{"previous_assignment": [...] | None, "generation": int | None}`` —
``previous_assignment`` is ``None`` for cooperative-sticky, ``generation`` is ``None``
for sticky v0.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from decoders import codec, readers
from decoders.errors import DecodeError, EncodeError
from decoders.spec import ArrayOf, field, struct

STICKY = "sticky"
COOPERATIVE_STICKY = "cooperative-sticky"
ASSIGNORS = (STICKY, COOPERATIVE_STICKY)

TOPIC_ASSIGNMENT = struct(
    "TopicAssignment",
    field("topic", "string", "0+"),
    field("partitions", "[]int32", "0+"),
)

STICKY_ASSIGNOR_USER_DATA = struct(
    "StickyAssignorUserData",
    field("previous_assignment", ArrayOf(TOPIC_ASSIGNMENT), "0+", note="v0: Kafka 0.11 (KIP-54)"),
    field("generation", "int32", "1+", default=-1, note="v1: KIP-341 (KAFKA-7026), Kafka 2.3"),
)
"""Versions 0–1, never flexible, no version prefix on the wire."""

COOPERATIVE_STICKY_ASSIGNOR_USER_DATA = struct(
    "CooperativeStickyAssignorUserData",
    field("generation", "int32", "0", note="KIP-429, Kafka 2.4"),
)

_COOPERATIVE = COOPERATIVE_STICKY_ASSIGNOR_USER_DATA

STICKY_USER_DATA = struct(
    "StickyUserData",
    field("previous_assignment", ArrayOf(TOPIC_ASSIGNMENT), "0", nullable="0",
          note="sticky only; null for cooperative-sticky"),
    field("generation", "int32", "0", nullable="0", note="null for sticky v0 user data"),
)
"""The decoded view (not a wire layout): the union of the two assignors' user data."""


def decode_sticky_user_data(user_data: bytes | None, assignor: str | None) -> dict[str, Any] | None:
    """Decode a member's subscription user data for the sticky assignors.

    Returns ``None`` when the assignor is not sticky/cooperative-sticky, the user data is
    null or empty, or it parses under neither layout (Kafka then ignores it too). Never
    raises.
    """
    if assignor not in ASSIGNORS or not user_data:
        return None
    buf = bytes(user_data)
    if assignor == COOPERATIVE_STICKY:
        try:
            value, _ = codec.decode_struct(_COOPERATIVE, buf, 0, len(buf), 0, False, exact=False)
        except DecodeError:
            return None
        return {"previous_assignment": None, "generation": value["generation"]}
    for version in (1, 0):
        try:
            value, _ = codec.decode_struct(STICKY_ASSIGNOR_USER_DATA, buf, 0, len(buf), version, False, exact=False)
        except DecodeError:
            continue
        return {"previous_assignment": value["previous_assignment"], "generation": value.get("generation")}
    return None


def sticky_user_data_reader(assignor: str | None) -> Callable[[bytes | None], dict[str, Any] | None]:
    """:func:`decode_sticky_user_data` for one assignor, through the generated readers
    (:mod:`decoders.readers`): the same result, and anything irregular is handed to
    :func:`decode_sticky_user_data` itself. Used by the generated GroupMetadata path."""
    if assignor == COOPERATIVE_STICKY:
        return _read_cooperative
    if assignor == STICKY:
        return _read_sticky
    return _no_sticky_user_data


@cache
def _cooperative_reader() -> readers.Reader:
    return readers.struct_reader(_COOPERATIVE, 0, False)


@cache
def _sticky_v1_reader() -> readers.Reader:
    return readers.struct_reader(STICKY_ASSIGNOR_USER_DATA, 1, False)


def _no_sticky_user_data(user_data: bytes | None) -> None:
    return None


def _read_cooperative(user_data: bytes | None) -> dict[str, Any] | None:
    if not user_data:
        return None
    try:
        value, _ = _cooperative_reader()(user_data, 0, len(user_data))
    except readers.IRREGULAR:
        return decode_sticky_user_data(user_data, COOPERATIVE_STICKY)
    return {"previous_assignment": None, "generation": value["generation"]}


def _read_sticky(user_data: bytes | None) -> dict[str, Any] | None:
    if not user_data:
        return None
    try:  # v1 first, as the table-driven decoder and StickyAssignor try it
        value, _ = _sticky_v1_reader()(user_data, 0, len(user_data))
    except readers.IRREGULAR:
        return decode_sticky_user_data(user_data, STICKY)
    return {"previous_assignment": value["previous_assignment"], "generation": value["generation"]}


def encode_sticky_user_data(data: dict[str, Any]) -> bytes:
    """Encode the decoded view back to what the assignor would send.

    ``previous_assignment`` ``None`` → cooperative-sticky (generation only); otherwise
    sticky, v1 when ``generation`` is set, v0 when it is ``None``.
    """
    if not isinstance(data, dict):
        raise EncodeError(f"sticky_user_data: expected a dict, got {type(data).__name__}")
    unknown = data.keys() - {"previous_assignment", "generation"}
    if unknown:
        raise EncodeError(f"sticky_user_data has no field(s) {sorted(unknown)}")
    previous = data.get("previous_assignment")
    generation = data.get("generation")
    if previous is None:
        if generation is None:
            raise EncodeError("sticky_user_data needs previous_assignment or generation")
        return bytes(codec.encode_struct(_COOPERATIVE, {"generation": generation}, 0, False))
    if generation is None:
        return bytes(codec.encode_struct(STICKY_ASSIGNOR_USER_DATA, {"previous_assignment": previous}, 0, False))
    value = {"previous_assignment": previous, "generation": generation}
    return bytes(codec.encode_struct(STICKY_ASSIGNOR_USER_DATA, value, 1, False))
