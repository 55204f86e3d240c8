"""Classic group records: key type 2, ``GroupMetadataKey``/``GroupMetadataValue`` v0–v4.

Authority: ``group-coordinator/src/main/resources/common/message/GroupMetadata{Key,Value}.json``
(Kafka 4.3.1); ``GROUP_METADATA_VALUE_SCHEMA_V0..V3``/``MEMBER_METADATA_V0..V3`` in
``core/.../coordinator/group/GroupMetadataManager.scala`` (2.7) encode v0–v3 identically.
Every broker from 2.3 to 4.3 writes v3; v4 (flexible, KIP-915) is readable since 3.5 but
no released broker writes it.

Each member's ``subscription`` and ``assignment`` are opaque bytes to the coordinator.
For protocol type ``"consumer"`` we decode them (ConsumerProtocolSubscription/Assignment,
see :mod:`decoders.consumer_protocol`), as ``kafka-dump-log --offsets-decoder`` does since
3.8. The member dict therefore carries:

``subscription_raw`` / ``assignment_raw`` (bytes)
    Kafka's ``subscription``/``assignment`` fields, verbatim. Always present.
``subscription`` / ``assignment`` (dict | None)
    The decoded consumer-protocol structs; ``None`` when the protocol type is not
    ``"consumer"``, when the bytes are empty (an empty assignment is normal: the
    coordinator fills members missing from the leader's SyncGroup with empty bytes), or
    when they do not parse.
``undecoded`` (bool) / ``undecoded_reason`` (str | None)
    ``True`` when a non-empty blob was left undecoded — another protocol type
    (``"connect"``, …) or malformed consumer-protocol bytes — with the reason. A
    malformed blob never fails the whole record: the coordinator itself never parses it.

Kafka Streams' classic groups use protocol type ``"consumer"`` with protocol ``"stream"``:
their blobs *are* consumer-protocol blobs and decode, but their ``user_data`` (Streams'
SubscriptionInfo/AssignmentInfo) stays raw bytes.

For encoding, ``subscription_raw``/``assignment_raw`` win when present (so
``encode_record(**decode_record(...))`` is byte-exact even for blobs with trailing bytes or
future versions). Without them, ``subscription``/``assignment`` may be a dict (encoded with
its ``version`` key, default 3) or raw bytes.
"""

from __future__ import annotations

from typing import Any

from decoders.consumer_protocol import (
    ASSIGNMENT,
    SUBSCRIPTION,
    assignment_reader,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
    subscription_reader,
)
from decoders.consumer_protocol import (
    VALID_VERSIONS as CONSUMER_PROTOCOL_VERSIONS,
)
from decoders.errors import DecodeError, EncodeError
from decoders.readers import IRREGULAR
from decoders.spec import ArrayOf, DerivedField, RecordSpec, field, struct, versions

CONSUMER_PROTOCOL_TYPE = "consumer"

MEMBER_METADATA = struct(
    "MemberMetadata",
    field("memberId", "string", "0+"),
    field("groupInstanceId", "string", "3+", nullable="3+", default=None, ignorable=True,
          note="v3: static membership, KIP-345 (KAFKA-7862), Kafka 2.3"),
    field("clientId", "string", "0+"),
    field("clientHost", "string", "0+", note="e.g. '/10.0.0.1'"),
    field("rebalanceTimeout", "int32", "1+", default=-1, ignorable=True,
          note="v1: KIP-62 (KAFKA-3888), Kafka 0.10.1; ms"),
    field("sessionTimeout", "int32", "0+", note="ms"),
    field("subscription", "bytes", "0+", name="subscription_raw",
          note="protocol metadata of the selected protocol, verbatim"),
    field("assignment", "bytes", "0+", name="assignment_raw",
          note="the leader's assignment for this member, verbatim; may be empty"),
    derived=(
        DerivedField("subscription", SUBSCRIPTION, nullable=True, versions=CONSUMER_PROTOCOL_VERSIONS,
                     note="subscription_raw decoded when protocol_type is 'consumer'"),
        DerivedField("assignment", ASSIGNMENT, nullable=True, versions=CONSUMER_PROTOCOL_VERSIONS,
                     note="assignment_raw decoded when protocol_type is 'consumer' and non-empty"),
        DerivedField("undecoded", "boolean", nullable=False,
                     note="true when non-empty subscription/assignment bytes were left undecoded"),
        DerivedField("undecoded_reason", "string", nullable=True, note="why they were left undecoded"),
    ),
)

GROUP_METADATA_KEY = struct("GroupMetadataKey", field("group", "string", "0", note="the group id"))

GROUP_METADATA_VALUE = struct(
    "GroupMetadataValue",
    field("protocolType", "string", "0+", note="'consumer', 'connect', or '' for a new empty group (4.x)"),
    field("generation", "int32", "0+"),
    field("protocol", "string", "0+", nullable="0+", note="the selected assignor / protocol name"),
    field("leader", "string", "0+", nullable="0+", note="leader member id"),
    field("currentStateTimestamp", "int64", "2+", default=-1, ignorable=True,
          note="v2: KIP-211 (KAFKA-4682), Kafka 2.1; -1 = none"),
    field("members", ArrayOf(MEMBER_METADATA), "0+"),
)
"""v0: Kafka 0.9 (KAFKA-2017). v4, first flexible version: KIP-915, Kafka 3.5 (never written)."""


def _decode_member_blobs(member: dict[str, Any], protocol_type: str, protocol: str | None) -> None:
    sub_raw: bytes = member["subscription_raw"]
    asg_raw: bytes = member["assignment_raw"]
    subscription = assignment = None
    reasons: list[str] = []
    if protocol_type != CONSUMER_PROTOCOL_TYPE:
        if sub_raw or asg_raw:
            reasons.append(f"protocol type {protocol_type!r} is not the consumer protocol")
    else:
        if sub_raw:
            try:
                subscription = decode_subscription(sub_raw, protocol)
            except DecodeError as exc:
                reasons.append(f"subscription: {exc}")
        if asg_raw:
            try:
                assignment = decode_assignment(asg_raw)
            except DecodeError as exc:
                reasons.append(f"assignment: {exc}")
    member["subscription"] = subscription
    member["assignment"] = assignment
    member["undecoded"] = bool(reasons)
    member["undecoded_reason"] = "; ".join(reasons) if reasons else None


def after_decode(value: dict[str, Any], version: int) -> None:
    """Add the decoded consumer-protocol structs to every member (in place)."""
    protocol_type = value["protocol_type"]
    protocol = value["protocol"]
    for member in value["members"]:
        _decode_member_blobs(member, protocol_type, protocol)


def after_read(value: dict[str, Any], version: int) -> None:
    """:func:`after_decode` for the generated readers (:mod:`decoders.readers`): the same
    result, with the consumer-protocol blobs read by generated readers. A member whose
    blobs are irregular goes through :func:`after_decode`'s own path (which then records
    the precise reason), so malformed blobs read exactly as before."""
    protocol_type = value["protocol_type"]
    if protocol_type != CONSUMER_PROTOCOL_TYPE:
        after_decode(value, version)  # nothing is decoded, members are only marked undecoded
        return
    protocol = value["protocol"]
    read_subscription = subscription_reader(protocol)
    read_assignment = assignment_reader()
    for member in value["members"]:
        sub_raw = member["subscription_raw"]
        asg_raw = member["assignment_raw"]
        try:
            subscription = read_subscription(sub_raw) if sub_raw else None
            assignment = read_assignment(asg_raw) if asg_raw else None
        except IRREGULAR:
            _decode_member_blobs(member, protocol_type, protocol)
            continue
        member["subscription"] = subscription
        member["assignment"] = assignment
        member["undecoded"] = False
        member["undecoded_reason"] = None


def _member_blob(member: dict[str, Any], name: str, encode: Any) -> bytes:
    raw = member.get(f"{name}_raw")
    if raw is not None:
        return raw  # type: ignore[no-any-return]
    given = member.get(name)
    if isinstance(given, (bytes, bytearray, memoryview)):
        return bytes(given)
    if isinstance(given, dict):
        return encode(given)  # type: ignore[no-any-return]
    if given is None and name == "assignment":
        return b""  # members without an assignment get empty bytes, as the coordinator writes
    raise EncodeError(f"member {member.get('member_id')!r}: give {name}_raw (bytes) or {name} (dict or bytes)")


_DERIVED_MEMBER_FIELDS = frozenset(d.name for d in MEMBER_METADATA.derived)


def before_encode(value: dict[str, Any], version: int) -> dict[str, Any]:
    """Fill each member's ``subscription_raw``/``assignment_raw`` from its decoded form
    when the raw bytes are not given; returns a new dict (the input is not modified)."""
    members = value.get("members")
    if not isinstance(members, list):
        return value
    out = dict(value)
    new_members = []
    for i, member in enumerate(members):
        if not isinstance(member, dict):
            raise EncodeError(f"GroupMetadataValue.members[{i}]: expected a dict, got {type(member).__name__}")
        m = {k: v for k, v in member.items() if k not in _DERIVED_MEMBER_FIELDS}
        try:
            m["subscription_raw"] = _member_blob(member, "subscription", encode_subscription)
            m["assignment_raw"] = _member_blob(member, "assignment", encode_assignment)
        except EncodeError as exc:
            raise EncodeError(f"GroupMetadataValue.members[{i}]: {exc}") from None
        new_members.append(m)
    out["members"] = new_members
    return out


GROUP_METADATA = RecordSpec(
    type_id=2,
    name="group_metadata",
    key=GROUP_METADATA_KEY,
    value=GROUP_METADATA_VALUE,
    value_versions=versions("0-4"),
    flexible_versions=versions("4+"),
    written_version=3,
    after_decode=after_decode,
    after_read=after_read,
    before_encode=before_encode,
    note="key type 2: classic-protocol groups, Kafka 0.9 onwards",
)

RECORDS = (GROUP_METADATA,)
