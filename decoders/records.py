"""Decode and encode whole ``__consumer_offsets`` records: dispatch on the key's int16
record type, then on the value's int16 version.

Policy, copied from Kafka's loader (``CoordinatorRecordSerde`` and
``CoordinatorLoaderImpl``, Kafka 4.3.1): an unknown record *type* is skipped ("could be a
left over from an aborted upgrade") — here it becomes an :class:`UnknownRecord`, never an
exception, so the pipeline can count and quarantine it; an unknown *value version* of a
known type is an error — here a :class:`~decoders.errors.DecodeError`. A null value is a
tombstone (delete) for the key.

Two paths decode the same bytes to the same result. The generated readers
(:mod:`decoders.readers`, one straight-line function per record type) decode every
well-formed record; whatever they find irregular is decoded again by the table-driven
path (:mod:`decoders.codec`), which raises the precise
:class:`~decoders.errors.DecodeError` (or, rarely, accepts what the generated reader was
too cautious to).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from decoders import codec, readers, wire
from decoders.errors import TRUNCATED, UNKNOWN_VERSION, DecodeError, EncodeError
from decoders.layout import BY_NAME, BY_TYPE_ID
from decoders.spec import RecordSpec


@dataclass(frozen=True, slots=True)
class DecodedRecord:
    """A record of a known type.

    Attributes:
        type: snake_case record type name (``"offset_commit"``, ``"group_metadata"`` …).
        key_version: the key's leading int16 — the record type id (``apiKey`` in Kafka
            4.1+ schemas, historically called the key version).
        value_version: the value's int16 version; ``None`` for a tombstone.
        key: the key struct as a dict of snake_case names.
        value: the value struct as a dict (``None`` for a tombstone). Fields absent in
            ``value_version`` are absent; tagged fields not on the wire hold their default.
            Strings are ``str``, bytes are ``bytes``, uuids are :class:`~decoders.wire.Uuid`.
    """

    type: str
    key_version: int
    value_version: int | None
    key: dict[str, Any]
    value: dict[str, Any] | None

    @property
    def is_tombstone(self) -> bool:
        return self.value is None

    def to_json_dict(self) -> dict[str, Any]:
        """JSON-ready form for the CLI: bytes as hex strings, uuids in Kafka's base64url."""
        return {
            "type": self.type,
            "key_version": self.key_version,
            "value_version": self.value_version,
            "key": jsonable(self.key),
            "value": jsonable(self.value),
        }


@dataclass(frozen=True, slots=True)
class UnknownRecord:
    """A record whose type id no layout describes (e.g. 18, or a future type). Kafka's
    loader skips these; we hand them back untouched for counting/quarantine."""

    record_type: int
    key: bytes
    value: bytes | None

    @property
    def is_tombstone(self) -> bool:
        return self.value is None

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "type": "unknown",
            "record_type": self.record_type,
            "key": self.key.hex(),
            "value": None if self.value is None else self.value.hex(),
        }


def jsonable(value: Any) -> Any:
    """Recursively render bytes as hex and :class:`~decoders.wire.Uuid` as base64url."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if isinstance(value, wire.Uuid):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    return value


def _as_bytes(data: Any, part: str) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"{part} must be bytes, got {type(data).__name__}")


def decode_record(key: bytes, value: bytes | None) -> DecodedRecord | UnknownRecord:
    """Decode one ``__consumer_offsets`` record from its raw key and value bytes.

    Returns :class:`UnknownRecord` for an unknown record type and raises
    :class:`~decoders.errors.DecodeError` for anything malformed; nothing else escapes
    for ``bytes`` input (a non-bytes argument is a ``TypeError``, a programming error).

    >>> rec = decode_record(bytes.fromhex("0002000567726f7570"), None)
    >>> (rec.type, rec.key, rec.is_tombstone)
    ('group_metadata', {'group': 'group'}, True)
    """
    if key is None:
        raise DecodeError(0, TRUNCATED, "null key: every __consumer_offsets record has a key", part="key")
    key = _as_bytes(key, "key")
    if value is not None:
        value = _as_bytes(value, "value")
    if len(key) < 2:
        raise DecodeError(0, TRUNCATED, f"the key's int16 record type needs 2 bytes, {len(key)} given", part="key")
    record_type = wire.INT16.unpack_from(key, 0)[0]
    generated = _decode_generated(record_type, key, value)
    if generated is not None:
        return generated
    return _decode_generic(record_type, key, value)


def _decode_generated(record_type: int, key: bytes, value: bytes | None) -> DecodedRecord | UnknownRecord | None:
    """The generated readers (:mod:`decoders.readers`), one per record type; ``None`` hands
    over to the table-driven path, which then gives the same record or the precise
    DecodeError."""
    read = _generated.get(record_type)
    if read is None:
        spec = BY_TYPE_ID.get(record_type)
        if spec is None:
            return UnknownRecord(record_type, key, value)
        read = _generated[record_type] = readers.record_reader(spec, _new_record)
    return read(key, value)  # type: ignore[no-any-return]


_generated: dict[int, readers.RecordReader] = {}

# A frozen dataclass's __init__ sets each field with object.__setattr__; setting the slots
# through their descriptors builds the very same object in half the time, which matters
# for the smallest records (a KIP-848 epoch record decodes in a few microseconds).
_RECORD_SLOTS = tuple(getattr(DecodedRecord, f.name).__set__ for f in fields(DecodedRecord))
assert [f.name for f in fields(DecodedRecord)] == ["type", "key_version", "value_version", "key", "value"]


def _new_record(
    name: str, record_type: int, version: int | None, key: dict[str, Any], value: dict[str, Any] | None
) -> DecodedRecord:
    """``DecodedRecord(name, record_type, version, key, value)``, built faster."""
    record = object.__new__(DecodedRecord)
    set_type, set_key_version, set_value_version, set_key, set_value = _RECORD_SLOTS
    set_type(record, name)
    set_key_version(record, record_type)
    set_value_version(record, version)
    set_key(record, key)
    set_value(record, value)
    return record


def _decode_generic(record_type: int, key: bytes, value: bytes | None) -> DecodedRecord | UnknownRecord:
    """The table-driven path for every type: the reference the generated readers are tested
    against, and the one that says precisely what is wrong with a malformed record."""
    spec = BY_TYPE_ID.get(record_type)
    if spec is None:
        return UnknownRecord(record_type, key, value)
    try:
        key_dict, _ = codec.decode_struct(spec.key, key, 2, len(key), 0, False)
    except DecodeError as exc:
        raise exc.in_context(record_type=record_type, part="key") from None
    if value is None:
        return DecodedRecord(spec.name, record_type, None, key_dict, None)
    version: int | None = None
    try:
        version, _ = wire.read_int16(value, 0, len(value))
        if version not in spec.value_versions:
            detail = f"{spec.value.name} has versions {spec.value_versions}, not {version}"
            raise DecodeError(0, UNKNOWN_VERSION, detail)
        flexible = version in spec.flexible_versions
        value_dict, _ = codec.decode_struct(spec.value, value, 2, len(value), version, flexible)
    except DecodeError as exc:
        raise exc.in_context(record_type=record_type, version=version, part="value") from None
    if spec.after_decode is not None:
        spec.after_decode(value_dict, version)
    return DecodedRecord(spec.name, record_type, version, key_dict, value_dict)


def encode_record(
    record_type: str | int, key: dict[str, Any], value: dict[str, Any] | None, value_version: int | None = None
) -> tuple[bytes, bytes | None]:
    """Encode a record byte-exactly as Kafka's serializer would
    (``MessageUtil.toCoordinatorTypePrefixedBytes`` for the key, ``toVersionPrefixedBytes``
    for the value).

    ``record_type`` is the name (``"offset_commit"``) or the type id. ``value=None``
    encodes a tombstone (``value_version`` is then ignored). ``value_version=None``
    picks what a Kafka 4.3 broker writes: offset commits v4 (v1 when ``expire_timestamp``
    is set), group metadata v3, everything else v0. Missing keys take Kafka's defaults;
    unknown keys raise :class:`~decoders.errors.EncodeError`. Accepts what
    :func:`decode_record` returns::

        rec = decode_record(k, v)
        assert encode_record(rec.type, rec.key, rec.value, rec.value_version) == (k, v)
    """
    spec = _spec_for(record_type)
    out = bytearray(wire.INT16.pack(spec.type_id))
    try:
        codec.encode_struct(spec.key, key, 0, False, out)
    except EncodeError as exc:
        raise EncodeError(f"{spec.name} key: {exc}") from None
    key_bytes = bytes(out)
    if value is None:
        return key_bytes, None
    if not isinstance(value, dict):
        raise EncodeError(f"{spec.name} value: expected a dict or None, got {type(value).__name__}")
    version = _value_version(spec, value, value_version)
    if spec.before_encode is not None:
        value = spec.before_encode(value, version)
    out = bytearray(wire.INT16.pack(version))
    try:
        codec.encode_struct(spec.value, value, version, version in spec.flexible_versions, out)
    except EncodeError as exc:
        raise EncodeError(f"{spec.name} value v{version}: {exc}") from None
    return key_bytes, bytes(out)


def _spec_for(record_type: str | int) -> RecordSpec:
    table: dict[Any, RecordSpec] = BY_NAME if isinstance(record_type, str) else BY_TYPE_ID
    spec = table.get(record_type)
    if spec is None:
        raise EncodeError(f"unknown record type {record_type!r}; known: {sorted(BY_NAME)}")
    return spec


def _value_version(spec: RecordSpec, value: dict[str, Any], requested: int | None) -> int:
    if requested is None:
        return spec.choose_version(value) if spec.choose_version is not None else spec.written_version
    if not isinstance(requested, int) or requested not in spec.value_versions:
        raise EncodeError(f"{spec.value.name} has versions {spec.value_versions}, not {requested!r}")
    return requested

