"""The vocabulary in which every record layout is written down — once, as data.

Modelled on Kafka's own message JSON (``FieldSpec``/``StructSpec``/``Versions`` in
``generator/src/main/java/org/apache/kafka/message/``) and on franz-go's
``generate/definitions/misc``: a record is a key struct and a value struct; a struct is an
ordered tuple of fields; a field has a type, the versions it exists in, the versions in
which it may be null, and — in flexible versions — an optional tag. The decoder
(:mod:`decoders.codec`), the encoder (same module) and the Spark type description
(:func:`decoders.layout.struct_shape`) are all *derived* from these objects, so a layout
change is one edit in one table.

The tables themselves live in one module per record family: :mod:`decoders.offset_commit`,
:mod:`decoders.group_metadata`, :mod:`decoders.consumer_group`,
:mod:`decoders.share_group`, :mod:`decoders.streams_group`,
:mod:`decoders.consumer_protocol`, :mod:`decoders.sticky_user_data`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import cache
from typing import Any

from decoders.wire import ZERO_UUID

PRIMITIVES = frozenset({"int8", "int16", "uint16", "int32", "int64", "uuid", "string", "bytes"})
"""The primitive types used by ``__consumer_offsets`` records (Kafka also has bool,
uint32, float64 and records, which none of these schemas use)."""

FIXED_SIZE = {"int8": 1, "int16": 2, "uint16": 2, "int32": 4, "int64": 8, "uuid": 16}


@dataclass(frozen=True)
class Versions:
    """An inclusive version range in Kafka's notation: ``"0+"``, ``"3+"``, ``"1"``,
    ``"0-3"``, ``"none"``. ``high is None`` means open-ended."""

    low: int
    high: int | None

    def __contains__(self, version: object) -> bool:
        if not isinstance(version, int):
            return False
        return version >= self.low and (self.high is None or version <= self.high)

    @property
    def empty(self) -> bool:
        return self.high is not None and self.high < self.low

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.high is None:
            return f"{self.low}+"
        if self.high == self.low:
            return str(self.low)
        return f"{self.low}-{self.high}"

    def members(self, upper: int) -> list[int]:
        """The versions in this range up to ``upper`` (for open-ended ranges)."""
        if self.empty:
            return []
        top = upper if self.high is None else min(self.high, upper)
        return list(range(self.low, top + 1))


@cache
def versions(text: str) -> Versions:
    """Parse Kafka's version notation (``Versions.parse`` in the generator)."""
    text = text.strip()
    if text == "none":
        return Versions(0, -1)
    if text.endswith("+"):
        return Versions(int(text[:-1]), None)
    if "-" in text:
        lo, hi = text.split("-", 1)
        return Versions(int(lo), int(hi))
    return Versions(int(text), int(text))


NONE = versions("none")


@dataclass(frozen=True, eq=False)
class ArrayOf:
    """``[]T`` — an array of a primitive or of a struct."""

    element: FieldType


@dataclass(frozen=True, eq=False)
class StructSpec:
    """A struct: the top-level key/value of a record, or a nested/common struct.

    ``derived`` lists fields that are *not on the wire* but that the decoder adds after
    reading (e.g. the consumer-protocol ``subscription`` decoded out of a group member's
    ``subscription`` bytes); the Spark shape includes them, the codec ignores them.
    """

    name: str
    fields: tuple[FieldSpec, ...]
    derived: tuple[DerivedField, ...] = ()

    def field_named(self, name: str) -> FieldSpec:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)


FieldType = str | ArrayOf | StructSpec


_UNSET: Any = object()


@dataclass(frozen=True, eq=False)
class FieldSpec:
    """One field, as in Kafka's schema JSON.

    Attributes:
        kafka_name: the name in Kafka's schema (``leaderEpoch``, ``GroupId``).
        name: the snake_case key used in decoded dicts (``leader_epoch``, ``group_id``).
        type: a primitive name, :class:`ArrayOf` or :class:`StructSpec`.
        versions: versions in which the field exists.
        nullable_versions: versions in which it may be null.
        tag: tag number when it is a tagged field; ``tagged_versions`` says when.
        default: Kafka's default (explicit in the JSON, or the type's implicit one).
        has_explicit_default: the JSON spells a default.
        ignorable: Kafka's ``ignorable`` flag — may be dropped silently when writing a
            version that lacks the field.
        note: one line on where the field came from (Kafka release, KIP/JIRA).
    """

    kafka_name: str
    name: str
    type: FieldType
    versions: Versions
    nullable_versions: Versions = NONE
    tag: int | None = None
    tagged_versions: Versions = NONE
    default: Any = None
    has_explicit_default: bool = False
    ignorable: bool = False
    note: str = ""

    def is_tagged_in(self, version: int) -> bool:
        return self.tag is not None and version in self.tagged_versions

    def default_value(self) -> Any:
        """A fresh copy of the default (lists must not be shared between records)."""
        return fresh(self.default)


@dataclass(frozen=True, eq=False)
class DerivedField:
    """A field added by decoding bytes found in another field (see :class:`StructSpec`).

    ``type`` is a primitive name or a :class:`StructSpec`; when it is a struct with its
    own versioning (a consumer-protocol message), ``versions`` are that message's valid
    versions, used to decide which of its fields may be absent.
    """

    name: str
    type: str | StructSpec
    nullable: bool
    versions: Versions = dc_field(default_factory=lambda: versions("0"))
    note: str = ""


@dataclass(frozen=True, eq=False)
class RecordSpec:
    """One record type of ``__consumer_offsets``: the key's int16 type id, its key struct
    and its value struct.

    Attributes:
        type_id: the int16 at the start of the key (``apiKey`` since Kafka 4.1,
            historically "key version").
        name: snake_case record name (Kafka's ``CoordinatorRecordType`` in lower case).
        key: the key struct; always non-flexible, always read at version 0.
        value: the value struct.
        value_versions: versions a reader accepts (``validVersions``).
        flexible_versions: value versions using compact encodings and tagged fields.
        written_version: what a Kafka 4.3 broker writes (the encoder's default).
        note: where the record comes from / which layout era the table describes.
        after_decode / before_encode: hooks for the record families that carry nested
            encodings (GroupMetadataValue's consumer-protocol bytes).
        choose_version: picks the default value version from a value dict (offset commit:
            v1 when an expire timestamp is set, as ``offsetCommitValueVersion`` does).
        after_read: ``after_decode`` for the generated readers (:mod:`decoders.readers`),
            which must give the very same result, faster; ``None`` = use ``after_decode``.
    """

    type_id: int
    name: str
    key: StructSpec
    value: StructSpec
    value_versions: Versions
    flexible_versions: Versions
    written_version: int
    note: str = ""
    after_decode: Callable[[dict[str, Any], int], None] | None = None
    before_encode: Callable[[dict[str, Any], int], dict[str, Any]] | None = None
    choose_version: Callable[[dict[str, Any]], int] | None = None
    after_read: Callable[[dict[str, Any], int], None] | None = None

    @property
    def max_value_version(self) -> int:
        assert self.value_versions.high is not None
        return self.value_versions.high


# --------------------------------------------------------------------------- builders

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(kafka_name: str) -> str:
    """``leaderEpoch`` -> ``leader_epoch``, ``GroupId`` -> ``group_id``,
    ``RebalanceTimeoutMs`` -> ``rebalance_timeout_ms``."""
    return _CAMEL_BOUNDARY.sub("_", kafka_name).lower()


def _parse_type(type_: str | FieldType) -> FieldType:
    if isinstance(type_, str):
        if type_.startswith("[]"):
            element = type_[2:]
            if element not in PRIMITIVES:
                raise ValueError(f"unknown array element type {element!r}; pass ArrayOf(struct)")
            return ArrayOf(element)
        if type_ not in PRIMITIVES:
            raise ValueError(f"unknown type {type_!r}")
    return type_


def implicit_default(type_: FieldType, nullable: bool) -> Any:
    """Kafka's default when the JSON gives none (``FieldSpec.fieldDefault``)."""
    if isinstance(type_, ArrayOf):
        return []
    if isinstance(type_, StructSpec):
        # Kafka instantiates the struct unless the JSON says "default": "null".
        return {f.name: f.default_value() for f in type_.fields}
    return {"string": "", "bytes": b"", "uuid": ZERO_UUID}.get(type_, 0)


def field(
    kafka_name: str,
    type_: str | FieldType,
    versions_: str,
    *,
    name: str | None = None,
    nullable: str = "none",
    tag: int | None = None,
    tagged: str | None = None,
    default: Any = _UNSET,
    ignorable: bool = False,
    note: str = "",
) -> FieldSpec:
    """Build a :class:`FieldSpec` with the JSON's own notation:
    ``field("leaderEpoch", "int32", "3+", default=-1, ignorable=True, note="KIP-320, 2.1")``.

    ``versions_`` may be ``""`` for a tagged field without ``versions``, which then takes
    its ``taggedVersions`` (``FieldSpec.java``).
    """
    if not versions_:
        if tagged is None:
            raise ValueError(f"{kafka_name}: a field needs versions or taggedVersions")
        versions_ = tagged
    ftype = _parse_type(type_)
    nullable_v = versions(nullable)
    is_nullable = not nullable_v.empty
    explicit = default is not _UNSET
    if not explicit:
        default = implicit_default(ftype, is_nullable)
    return FieldSpec(
        kafka_name=kafka_name,
        name=name if name is not None else snake_case(kafka_name),
        type=ftype,
        versions=versions(versions_),
        nullable_versions=nullable_v,
        tag=tag,
        tagged_versions=versions(tagged) if tagged is not None else NONE,
        default=default,
        has_explicit_default=explicit,
        ignorable=ignorable,
        note=note,
    )


def struct(name: str, *fields: FieldSpec, derived: tuple[DerivedField, ...] = ()) -> StructSpec:
    names = [f.name for f in fields] + [d.name for d in derived]
    if len(set(names)) != len(names):
        raise ValueError(f"{name}: duplicate field names {names}")
    return StructSpec(name=name, fields=tuple(fields), derived=derived)


def fresh(value: Any) -> Any:
    """A deep copy of a default made of lists/dicts (defaults must never be shared)."""
    if isinstance(value, list):
        return [fresh(v) for v in value]
    if isinstance(value, dict):
        return {k: fresh(v) for k, v in value.items()}
    return value


def group_id_key(name: str, *extra: FieldSpec) -> StructSpec:
    """The key of every KIP-848/share/streams record: ``GroupId`` (+ ``MemberId`` etc.),
    int16-length strings — keys are never flexible."""
    return struct(name, field("GroupId", "string", "0", note="the group id"), *extra)


MEMBER_ID = field("MemberId", "string", "0", note="the member id")


def group_record(
    type_id: int, name: str, key_name: str, value: StructSpec, *key_extra: FieldSpec, note: str
) -> RecordSpec:
    """A KIP-848/share/streams record: key ``GroupId`` (+ ``key_extra``), value v0 only,
    flexible from v0 — true of every record type from 3 to 23."""
    return RecordSpec(
        type_id=type_id,
        name=name,
        key=group_id_key(key_name, *key_extra),
        value=value,
        value_versions=versions("0"),
        flexible_versions=versions("0+"),
        written_version=0,
        note=note,
    )
