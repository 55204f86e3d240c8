"""Every record layout of ``__consumer_offsets``, by type id and by name, and the
Spark-free *type description* derived from them.

:func:`struct_shape` returns a neutral tree of :class:`Shape` nodes — (name, kind,
nullable, children) — for a record type; ``schemas/`` maps it to a Spark ``StructType``
without this package importing pyspark. Kinds:

``struct`` (children = fields), ``array`` (one child: the element), ``string``,
``binary``, ``uuid`` (16 bytes; render as Kafka's base64url text or keep as binary),
``boolean``, ``int8``, ``int16``, ``uint16`` (fits an int32), ``int32``, ``int64``.

Nullability is derived, not declared twice: a value field is nullable when the schema
says so in some version *or* when some valid value version lacks it (a v3 offset commit
has no ``expire_timestamp``). The shape describes :meth:`DecodedRecord` as a whole:

>>> [c.name for c in struct_shape("offset_commit").children]
['type', 'key_version', 'value_version', 'key', 'value']
>>> value = struct_shape("offset_commit").child("value")
>>> [(c.name, c.kind, c.nullable) for c in value.children]  # doctest: +NORMALIZE_WHITESPACE
[('offset', 'int64', False), ('leader_epoch', 'int32', True), ('metadata', 'string', False),
 ('commit_timestamp', 'int64', False), ('expire_timestamp', 'int64', True), ('topic_id', 'uuid', True)]
"""

from __future__ import annotations

from dataclasses import dataclass

from decoders import consumer_group, group_metadata, offset_commit, share_group, streams_group
from decoders.spec import ArrayOf, DerivedField, FieldType, RecordSpec, StructSpec, Versions

RECORD_SPECS: tuple[RecordSpec, ...] = tuple(
    sorted(
        offset_commit.RECORDS
        + group_metadata.RECORDS
        + consumer_group.RECORDS
        + share_group.RECORDS
        + streams_group.RECORDS,
        key=lambda spec: spec.type_id,
    )
)
"""All known record types, ordered by type id (0–17, 19–23; 18 was never released)."""

BY_TYPE_ID: dict[int, RecordSpec] = {spec.type_id: spec for spec in RECORD_SPECS}
BY_NAME: dict[str, RecordSpec] = {spec.name: spec for spec in RECORD_SPECS}
assert len(BY_TYPE_ID) == len(BY_NAME) == len(RECORD_SPECS), "duplicate record type id or name"


def record_spec(record_type: int | str) -> RecordSpec:
    """Look a record type up by id (``1``) or name (``"offset_commit"``)."""
    table: dict[int, RecordSpec] | dict[str, RecordSpec]
    table = BY_NAME if isinstance(record_type, str) else BY_TYPE_ID
    try:
        return table[record_type]  # type: ignore[index]
    except KeyError:
        raise KeyError(f"unknown record type {record_type!r}; known: {sorted(BY_NAME)}") from None


@dataclass(frozen=True)
class Shape:
    """A neutral type tree node. ``note`` carries the field's history line."""

    name: str
    kind: str
    nullable: bool
    children: tuple[Shape, ...] = ()
    note: str = ""

    def child(self, name: str) -> Shape:
        for c in self.children:
            if c.name == name:
                return c
        raise KeyError(name)


_PRIMITIVE_KIND = {"bytes": "binary"}


def struct_shape(record_type: int | str) -> Shape:
    """The shape of a decoded record of this type (see the module docstring)."""
    spec = record_spec(record_type)
    value_versions = spec.value_versions.members(spec.max_value_version)
    return Shape(
        name=spec.name,
        kind="struct",
        nullable=False,
        note=spec.note,
        children=(
            Shape("type", "string", False, note="snake_case record type name"),
            Shape("key_version", "int16", False, note="the key's int16 record type id"),
            Shape("value_version", "int16", True, note="null for a tombstone"),
            Shape("key", "struct", False, _struct_children(spec.key, [0]), note=spec.key.name),
            Shape("value", "struct", True, _struct_children(spec.value, value_versions),
                  note=f"{spec.value.name} v{spec.value_versions}; null for a tombstone"),
        ),
    )


def message_shape(spec: StructSpec, valid: Versions) -> Shape:
    """The shape of a standalone versioned message (consumer protocol blobs)."""
    assert valid.high is not None
    return Shape(spec.name, "struct", False, _struct_children(spec, valid.members(valid.high)))


def _struct_children(spec: StructSpec, present_in: list[int]) -> tuple[Shape, ...]:
    children: list[Shape] = []
    for f in spec.fields:
        present = [v for v in present_in if v in f.versions]
        if not present:
            continue
        nullable = len(present) < len(present_in) or any(v in f.nullable_versions for v in present)
        children.append(_type_shape(f.name, f.type, nullable, present, f.note))
    for d in spec.derived:
        children.append(_derived_shape(d))
    return tuple(children)


def _derived_shape(d: DerivedField) -> Shape:
    if isinstance(d.type, StructSpec):
        assert d.versions.high is not None
        children = _struct_children(d.type, d.versions.members(d.versions.high))
        return Shape(d.name, "struct", d.nullable, children, d.note)
    return Shape(d.name, _PRIMITIVE_KIND.get(d.type, d.type), d.nullable, (), d.note)


def _type_shape(name: str, type_: FieldType, nullable: bool, present: list[int], note: str) -> Shape:
    if isinstance(type_, StructSpec):
        return Shape(name, "struct", nullable, _struct_children(type_, present), note)
    if isinstance(type_, ArrayOf):
        element = _type_shape("element", type_.element, False, present, "")
        return Shape(name, "array", nullable, (element,), note)
    return Shape(name, _PRIMITIVE_KIND.get(type_, type_), nullable, (), note)
