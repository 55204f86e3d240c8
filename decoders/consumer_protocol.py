"""The consumer protocol: what a classic group member's ``subscription`` and
``assignment`` bytes hold when the group's protocol type is ``"consumer"``.

Both blobs are an int16 version followed by a non-flexible struct
(``clients/src/main/resources/common/message/ConsumerProtocol{Subscription,Assignment}.json``,
Kafka 4.3.1). ``ConsumerProtocol.deserialize*`` (``clients/.../consumer/internals/
ConsumerProtocol.java``) reads a version *higher* than it knows with its newest layout and
never looks at trailing bytes; a negative version is "Unsupported subscription version".
We do exactly the same, so a blob from a future client still decodes.

Decoded dicts hold the struct's fields present at the (clamped) version, then
``version`` (the int16 as written, possibly above 3), then — subscriptions only —
``sticky_user_data`` (see :mod:`decoders.sticky_user_data`; ``None`` unless ``assignor``
is a sticky one and its user data parses).

>>> blob = encode_subscription({"topics": ["orders"], "user_data": None, "owned_partitions": [],
...                             "generation_id": -1, "rack_id": None})
>>> blob.hex()
'00030000000100066f7264657273ffffffff00000000ffffffffffff'
>>> decode_subscription(blob)["topics"]
['orders']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from decoders import codec, readers, wire
from decoders.errors import UNKNOWN_VERSION, DecodeError, EncodeError
from decoders.spec import ArrayOf, DerivedField, field, struct, versions
from decoders.sticky_user_data import ASSIGNORS as STICKY_ASSIGNORS
from decoders.sticky_user_data import (
    STICKY_USER_DATA,
    decode_sticky_user_data,
    encode_sticky_user_data,
    sticky_user_data_reader,
)

HIGHEST_VERSION = 3
"""Highest ConsumerProtocolSubscription/Assignment version (3 since Kafka 3.5, KIP-881).
Java clients send the highest version they know, so 4.x clients send 3."""

VALID_VERSIONS = versions("0-3")

_SUBSCRIPTION_TOPIC_PARTITION = struct(
    "TopicPartition",
    field("Topic", "string", "1+"),
    field("Partitions", "[]int32", "1+"),
)

SUBSCRIPTION = struct(
    "ConsumerProtocolSubscription",
    field("Topics", "[]string", "0+", note="v0: Kafka 0.9; the Java client sorts them"),
    field("UserData", "bytes", "0+", nullable="0+", default=None, note="assignor-specific"),
    field("OwnedPartitions", ArrayOf(_SUBSCRIPTION_TOPIC_PARTITION), "1+", ignorable=True,
          note="v1: KIP-429, Kafka 2.4"),
    field("GenerationId", "int32", "2+", default=-1, ignorable=True, note="v2: KAFKA-13715, Kafka 3.4"),
    field("RackId", "string", "3+", nullable="3+", default=None, ignorable=True, note="v3: KIP-881, Kafka 3.5"),
    derived=(
        DerivedField("version", "int16", nullable=False, note="the blob's int16 version prefix as written"),
        DerivedField("sticky_user_data", STICKY_USER_DATA, nullable=True,
                     note="UserData decoded for the sticky / cooperative-sticky assignors"),
    ),
)

_ASSIGNMENT_TOPIC_PARTITION = struct(
    "TopicPartition",
    field("Topic", "string", "0+"),
    field("Partitions", "[]int32", "0+"),
)

ASSIGNMENT = struct(
    "ConsumerProtocolAssignment",
    field("AssignedPartitions", ArrayOf(_ASSIGNMENT_TOPIC_PARTITION), "0+", name="partitions",
          note="v0: Kafka 0.9; v1-v3 only keep lockstep with the subscription versions"),
    field("UserData", "bytes", "0+", nullable="0+", default=None),
    derived=(DerivedField("version", "int16", nullable=False, note="the blob's int16 version prefix as written"),),
)


def _decode(spec: Any, data: bytes, part: str) -> tuple[dict[str, Any], int]:
    buf = bytes(data)
    version: int | None = None
    try:
        version, pos = wire.read_int16(buf, 0, len(buf))
        if version < 0:
            raise DecodeError(0, UNKNOWN_VERSION, f"unsupported {spec.name} version {version}")
        value, _ = codec.decode_struct(spec, buf, pos, len(buf), min(version, HIGHEST_VERSION), False, exact=False)
    except DecodeError as exc:
        raise exc.in_context(version=version, part=part) from None
    value["version"] = version
    return value, version


def decode_subscription(data: bytes, assignor: str | None = None) -> dict[str, Any]:
    """Decode ConsumerProtocolSubscription bytes (version prefix included).

    ``assignor`` is the group's selected protocol name (``GroupMetadataValue.protocol``);
    when it is ``"sticky"`` or ``"cooperative-sticky"`` the user data is decoded into
    ``sticky_user_data``. Raises :class:`DecodeError` (``part="subscription"``).
    """
    value, _ = _decode(SUBSCRIPTION, data, "subscription")
    value["sticky_user_data"] = decode_sticky_user_data(value["user_data"], assignor)
    return value


def decode_assignment(data: bytes) -> dict[str, Any]:
    """Decode ConsumerProtocolAssignment bytes. Raises :class:`DecodeError`
    (``part="assignment"``); note that *empty* assignment bytes are normal in a group
    record and are handled by the caller, not here."""
    value, _ = _decode(ASSIGNMENT, data, "assignment")
    return value


def subscription_reader(assignor: str | None) -> Callable[[bytes], dict[str, Any]]:
    """:func:`decode_subscription` through the generated readers (:mod:`decoders.readers`),
    for one assignor: the same dict, sticky user data included; raises one of
    :data:`decoders.readers.IRREGULAR` where :func:`decode_subscription` would raise or
    might differ — call it then for the precise :class:`DecodeError`."""
    kind = assignor if assignor in STICKY_ASSIGNORS else None
    reader = _subscription_readers.get(kind)
    if reader is None:
        read = readers.versioned_reader(SUBSCRIPTION, HIGHEST_VERSION)
        if kind is None:

            def read_subscription(data: bytes) -> dict[str, Any]:
                value = read(data)
                value["sticky_user_data"] = None
                return value

        else:
            read_sticky = sticky_user_data_reader(kind)

            def read_subscription(data: bytes) -> dict[str, Any]:
                value = read(data)
                value["sticky_user_data"] = read_sticky(value["user_data"])
                return value

        reader = _subscription_readers[kind] = read_subscription
    return reader


_subscription_readers: dict[str | None, Callable[[bytes], dict[str, Any]]] = {}


def assignment_reader() -> Callable[[bytes], dict[str, Any]]:
    """:func:`decode_assignment` through the generated readers, as :func:`subscription_reader`."""
    return readers.versioned_reader(ASSIGNMENT, HIGHEST_VERSION)


def _encode_version(value: dict[str, Any], version: int | None) -> int:
    if version is None:
        version = value.get("version", HIGHEST_VERSION)
    if not isinstance(version, int) or version < 0 or version > 0x7FFF:
        raise EncodeError(f"consumer protocol version must be an int in 0..32767, got {version!r}")
    return version


def encode_subscription(value: dict[str, Any], version: int | None = None) -> bytes:
    """Encode a subscription dict (as :func:`decode_subscription` returns, or hand-built).

    The version is ``version``, else the dict's ``version``, else 3 (what 4.x clients
    send). Like ``ConsumerProtocol.serializeSubscription`` a version above 3 is written as
    3. Topics and owned partitions are written in the order given (the Java client sorts
    them before serializing; do so yourself to mimic it). When ``user_data`` is ``None``
    but ``sticky_user_data`` is set, the user data is encoded from it.
    """
    if not isinstance(value, dict):
        raise EncodeError(f"subscription: expected a dict, got {type(value).__name__}")
    version = min(_encode_version(value, version), HIGHEST_VERSION)
    fields = {k: v for k, v in value.items() if k not in ("version", "sticky_user_data")}
    sticky = value.get("sticky_user_data")
    if fields.get("user_data") is None and sticky is not None:
        fields["user_data"] = encode_sticky_user_data(sticky)
    out = bytearray(wire.INT16.pack(version))
    try:
        codec.encode_struct(SUBSCRIPTION, fields, version, False, out)
    except EncodeError as exc:
        raise EncodeError(f"subscription v{version}: {exc}") from None
    return bytes(out)


def encode_assignment(value: dict[str, Any], version: int | None = None) -> bytes:
    """Encode an assignment dict; version as for :func:`encode_subscription`."""
    if not isinstance(value, dict):
        raise EncodeError(f"assignment: expected a dict, got {type(value).__name__}")
    version = min(_encode_version(value, version), HIGHEST_VERSION)
    fields = {k: v for k, v in value.items() if k != "version"}
    out = bytearray(wire.INT16.pack(version))
    try:
        codec.encode_struct(ASSIGNMENT, fields, version, False, out)
    except EncodeError as exc:
        raise EncodeError(f"assignment v{version}: {exc}") from None
    return bytes(out)
