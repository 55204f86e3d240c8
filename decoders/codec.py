"""The one generic reader and writer, driven by the layout tables in :mod:`decoders.spec`.

For each (struct, version, flexible) the first call *compiles* the field list into a list
of small reader/writer closures (cached), so decoding a record is a straight loop over
closures rather than a re-interpretation of the table each time.

Wire rules implemented here, as Kafka's ``MessageDataGenerator`` (4.3.1) generates them:

* non-flexible versions: int16-length strings, int32-length bytes, int32-count arrays,
  -1 = null;
* flexible versions: unsigned-varint (N+1) strings/bytes/arrays, 0 = null, and after the
  fields of *every* struct a tagged-field section: varint count, then (varint tag, varint
  size, payload) entries; unknown tags are skipped by size;
* a nullable struct that is not tagged has an int8 marker (-1 null, 1 present);
* a tagged field is written only when it differs from its default, in ascending tag order;
  its payload always uses the compact encodings; a *nullable* tagged struct's payload
  starts with an extra varint ``1`` (so its size is struct size + 1); a null in a nullable
  tagged field whose default is not null is written as a 1-byte payload ``00``;
* nested structs are read at the parent's version.

Stricter than Kafka where Kafka is lenient with malformed input (we must never misread):
a tagged payload must be consumed exactly by its field; any negative length other than the
-1 null marker is an error; invalid UTF-8 is an error; an array count is checked against
the *minimum* encoded size of its elements before anything is allocated.
"""

from __future__ import annotations

import struct as _struct
from collections.abc import Callable
from typing import Any

from decoders import spec as spec_module
from decoders import wire
from decoders.errors import OVER_LONG, TRUNCATED, DecodeError, EncodeError
from decoders.spec import FIXED_SIZE, ArrayOf, FieldSpec, FieldType, StructSpec

Reader = Callable[[bytes, int, int], tuple[Any, int]]
Writer = Callable[[bytearray, Any], None]


# --------------------------------------------------------------------------- public


def decode_struct(
    spec: StructSpec, buf: bytes, pos: int, end: int, version: int, flexible: bool, *, exact: bool = True
) -> tuple[dict[str, Any], int]:
    """Read ``spec`` at ``version`` from ``buf[pos:end]``.

    With ``exact`` the struct must end at ``end`` (trailing bytes are ``over-long``);
    without it, trailing bytes are left for the caller (the consumer protocol ignores
    them, as ``ConsumerProtocol.deserialize*`` does).
    """
    value, new_pos = struct_reader(spec, version, flexible)(buf, pos, end)
    if exact and new_pos != end:
        raise DecodeError(new_pos, OVER_LONG, f"{end - new_pos} byte(s) after the end of {spec.name} v{version}")
    return value, new_pos


def encode_struct(
    spec: StructSpec, value: Any, version: int, flexible: bool, out: bytearray | None = None
) -> bytearray:
    """Append ``value`` (a dict keyed by snake_case names) encoded at ``version``."""
    out = bytearray() if out is None else out
    struct_writer(spec, version, flexible)(out, value)
    return out


def min_size(type_: FieldType, version: int, flexible: bool, nullable: bool = False) -> int:
    """The fewest bytes a value of this type can occupy (for the count-vs-remaining check)."""
    if isinstance(type_, ArrayOf) or type_ in ("string", "bytes"):
        if flexible:
            return 1
        return 2 if type_ == "string" else 4
    if isinstance(type_, StructSpec):
        if nullable:
            return 1
        return _struct_min_size(type_, version, flexible)
    return FIXED_SIZE[type_]


# --------------------------------------------------------------------------- readers

# Keyed by the spec object itself (specs hash by identity), which also keeps it alive.
_reader_cache: dict[tuple[StructSpec, int, bool], Reader] = {}
_writer_cache: dict[tuple[StructSpec, int, bool], Writer] = {}
_min_size_cache: dict[tuple[StructSpec, int, bool], int] = {}

_PACKERS = {"int8": wire.INT8, "int16": wire.INT16, "uint16": wire.UINT16, "int32": wire.INT32, "int64": wire.INT64}

_FIXED_READERS: dict[str, Reader] = {
    "int8": wire.read_int8,
    "int16": wire.read_int16,
    "uint16": wire.read_uint16,
    "int32": wire.read_int32,
    "int64": wire.read_int64,
    "uuid": wire.read_uuid,
}


def _struct_min_size(spec: StructSpec, version: int, flexible: bool) -> int:
    key = (spec, version, flexible)
    size = _min_size_cache.get(key)
    if size is None:
        size = 1 if flexible else 0  # the tagged-field count
        for f in spec.fields:
            if version in f.versions and not f.is_tagged_in(version):
                size += min_size(f.type, version, flexible, version in f.nullable_versions)
        _min_size_cache[key] = size
    return size


def struct_reader(spec: StructSpec, version: int, flexible: bool) -> Reader:
    key = (spec, version, flexible)
    reader = _reader_cache.get(key)
    if reader is None:
        reader = _compile_struct_reader(spec, version, flexible)
        _reader_cache[key] = reader
    return reader


def _compile_struct_reader(spec: StructSpec, version: int, flexible: bool) -> Reader:
    # steps: (name, reader or None, default). None = tagged: start from the default so the
    # dict keeps declaration order, then let the tagged section overwrite it.
    steps: list[tuple[str, Reader | None, Any]] = []
    tagged: dict[int, tuple[str, Reader]] = {}
    for f in spec.fields:
        if version not in f.versions:
            continue
        what = f"{spec.name}.{f.kafka_name}"
        if f.is_tagged_in(version):
            assert f.tag is not None
            steps.append((f.name, None, f.default))
            tagged[f.tag] = (f.name, _tagged_payload_reader(f, version, what))
        else:
            nullable = version in f.nullable_versions
            steps.append((f.name, _type_reader(f.type, version, flexible, nullable, what), None))
    mutable_defaults = {name for name, r, d in steps if r is None and isinstance(d, (list, dict))}
    fresh = spec_module.fresh
    struct_name = spec.name

    def read(buf: bytes, pos: int, end: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        for name, reader, default in steps:
            if reader is None:
                out[name] = fresh(default) if name in mutable_defaults else default
            else:
                out[name], pos = reader(buf, pos, end)
        if flexible:
            pos = _read_tagged_section(buf, pos, end, tagged, out, struct_name)
        return out, pos

    return read


def _read_tagged_section(
    buf: bytes, pos: int, end: int, tagged: dict[int, tuple[str, Reader]], out: dict[str, Any], struct_name: str
) -> int:
    start = pos
    count, pos = wire.read_uvarint(buf, pos, end)
    if count * 2 > end - pos:  # each entry is at least a 1-byte tag and a 1-byte size
        raise DecodeError(start, TRUNCATED, f"{struct_name}: {count} tagged fields cannot fit in {end - pos} bytes")
    for _ in range(count):
        entry = pos
        tag, pos = wire.read_uvarint(buf, pos, end)
        size, pos = wire.read_uvarint(buf, pos, end)
        if size > end - pos:
            detail = f"{struct_name}: tagged field {tag} declares {size} bytes, {end - pos} left"
            raise DecodeError(entry, TRUNCATED, detail)
        known = tagged.get(tag)
        if known is not None:
            name, reader = known
            # The payload is read inside its own bounds: a field may neither run past
            # nor stop short of the size its entry declares.
            value, after = reader(buf, pos, pos + size)
            if after != pos + size:
                detail = f"{struct_name}: tagged field {tag} ({name}) leaves {pos + size - after} byte(s) unread"
                raise DecodeError(after, OVER_LONG, detail)
            out[name] = value
        # Unknown tags are skipped, as Kafka's readers do (they keep them as raw bytes).
        pos += size
    return pos


def _tagged_payload_reader(f: FieldSpec, version: int, what: str) -> Reader:
    """Tagged payloads always use the flexible encodings; a nullable tagged struct has a
    leading varint (<= 0 null) — ``generateStructReader(field, ..., tagged=true)``."""
    nullable = version in f.nullable_versions
    if isinstance(f.type, StructSpec) and nullable:
        inner = struct_reader(f.type, version, True)

        def read_nullable_tagged_struct(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            marker, pos = wire.read_uvarint(buf, pos, end)
            if marker == 0:
                return None, pos
            return inner(buf, pos, end)

        return read_nullable_tagged_struct
    return _type_reader(f.type, version, True, nullable, what)


def _type_reader(type_: FieldType, version: int, flexible: bool, nullable: bool, what: str) -> Reader:
    if isinstance(type_, StructSpec):
        inner = struct_reader(type_, version, flexible)
        if not nullable:
            return inner

        def read_nullable_struct(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            marker, new_pos = wire.read_int8(buf, pos, end)
            if marker < 0:
                return None, new_pos
            return inner(buf, new_pos, end)

        return read_nullable_struct
    if isinstance(type_, ArrayOf):
        return _array_reader(type_, version, flexible, nullable, what)
    if type_ == "string":
        return _string_reader(flexible, nullable, what)
    if type_ == "bytes":
        return _bytes_reader(flexible, nullable, what)
    return _FIXED_READERS[type_]


def _string_reader(compact: bool, nullable: bool, what: str) -> Reader:
    read_length = wire.read_length
    read_body = wire.read_string_body

    def read_string(buf: bytes, pos: int, end: int) -> tuple[str | None, int]:
        n, body = read_length(buf, pos, end, compact=compact, wide=False, nullable=nullable, what=what)
        if n < 0:
            return None, body
        return read_body(buf, body, end, n, pos, what)

    return read_string


def _bytes_reader(compact: bool, nullable: bool, what: str) -> Reader:
    read_length = wire.read_length
    read_body = wire.read_bytes_body

    def read_bytes(buf: bytes, pos: int, end: int) -> tuple[bytes | None, int]:
        n, body = read_length(buf, pos, end, compact=compact, wide=True, nullable=nullable, what=what)
        if n < 0:
            return None, body
        return read_body(buf, body, end, n, pos, what)

    return read_bytes


def _array_reader(type_: ArrayOf, version: int, flexible: bool, nullable: bool, what: str) -> Reader:
    element = type_.element
    elem_min = max(1, min_size(element, version, flexible))
    read_length = wire.read_length

    if element == "int32":
        # Partition lists are the bulk of assignment records: one unpack for the lot.
        def read_int32_array(buf: bytes, pos: int, end: int) -> tuple[list[int] | None, int]:
            n, body = read_length(buf, pos, end, compact=flexible, wide=True, nullable=nullable, what=what)
            if n < 0:
                return None, body
            if n * 4 > end - body:
                raise DecodeError(pos, TRUNCATED, f"{what}: {n} int32 elements cannot fit in {end - body} bytes")
            return list(_struct.unpack_from(f">{n}i", buf, body)), body + 4 * n

        return read_int32_array

    read_element = _type_reader(element, version, flexible, False, f"{what}[]")

    def read_array(buf: bytes, pos: int, end: int) -> tuple[list[Any] | None, int]:
        n, p = read_length(buf, pos, end, compact=flexible, wide=True, nullable=nullable, what=what)
        if n < 0:
            return None, p
        if n * elem_min > end - p:
            raise DecodeError(pos, TRUNCATED, f"{what}: {n} elements cannot fit in {end - p} bytes")
        items: list[Any] = []
        append = items.append
        for _ in range(n):
            item, p = read_element(buf, p, end)
            append(item)
        return items, p

    return read_array


# --------------------------------------------------------------------------- writers


def struct_writer(spec: StructSpec, version: int, flexible: bool) -> Writer:
    key = (spec, version, flexible)
    writer = _writer_cache.get(key)
    if writer is None:
        writer = _compile_struct_writer(spec, version, flexible)
        _writer_cache[key] = writer
    return writer


def _compile_struct_writer(spec: StructSpec, version: int, flexible: bool) -> Writer:
    untagged: list[tuple[FieldSpec, Writer]] = []
    tagged: list[tuple[FieldSpec, Writer]] = []
    absent: list[FieldSpec] = []
    for f in spec.fields:
        if version not in f.versions:
            absent.append(f)
        elif f.is_tagged_in(version):
            if not flexible:
                raise AssertionError(f"{spec.name}.{f.kafka_name} is tagged in non-flexible v{version}")
            tagged.append((f, _tagged_payload_writer(f, version)))
        else:
            nullable = version in f.nullable_versions
            untagged.append((f, _type_writer(f.type, version, flexible, nullable)))
    tagged.sort(key=lambda fw: fw[0].tag or 0)  # ascending tags, as the generated writer's TreeMap
    known = {f.name for f in spec.fields} | {d.name for d in spec.derived}
    name = spec.name

    def write(out: bytearray, value: Any) -> None:
        if not isinstance(value, dict):
            raise EncodeError(f"{name}: expected a dict, got {type(value).__name__}")
        unknown = value.keys() - known
        if unknown:
            raise EncodeError(f"{name} has no field(s) {sorted(unknown)} (known: {sorted(known)})")
        for f in absent:
            # Kafka's writer: a non-ignorable field that is absent at this version must
            # hold its default, otherwise UnsupportedVersionException.
            if f.name in value and not f.ignorable and value[f.name] != f.default:
                raise EncodeError(f"{name}.{f.kafka_name} does not exist in v{version} and is not ignorable")
        for f, writer in untagged:
            # A missing key takes Kafka's default, exactly as an unset field of a generated
            # message object does; misspelt keys were rejected above.
            item = value[f.name] if f.name in value else f.default_value()
            try:
                writer(out, item)
            except EncodeError as exc:
                raise EncodeError(f"{name}.{f.kafka_name}: {exc}") from None
            except (_struct.error, TypeError, OverflowError) as exc:
                raise EncodeError(f"{name}.{f.kafka_name}: {exc}") from None
        if flexible:
            present: list[tuple[int, bytes]] = []
            for f, writer in tagged:
                item = value.get(f.name, f.default)
                if item is None and f.default is not None:
                    # null differs from a non-null default: the generated writer emits the
                    # tag with a 1-byte payload holding varint 0 (null).
                    assert f.tag is not None
                    present.append((f.tag, b"\x00"))
                    continue
                if _is_default(item, f.default):
                    continue
                payload = bytearray()
                try:
                    writer(payload, item)
                except EncodeError as exc:
                    raise EncodeError(f"{name}.{f.kafka_name}: {exc}") from None
                except (_struct.error, TypeError, OverflowError) as exc:
                    raise EncodeError(f"{name}.{f.kafka_name}: {exc}") from None
                assert f.tag is not None
                present.append((f.tag, bytes(payload)))
            wire.write_uvarint(out, len(present))
            for tag, tag_payload in present:
                wire.write_uvarint(out, tag)
                wire.write_uvarint(out, len(tag_payload))
                out += tag_payload

    return write


def _is_default(item: Any, default: Any) -> bool:
    """Kafka's ``generateNonDefaultValueCheck``, on dicts: a struct equals its default when
    every field does (keys left out of ``item`` take their defaults)."""
    if default is None:
        return item is None
    if item is None:
        return False
    if isinstance(default, dict):
        return isinstance(item, dict) and all(item.get(k, d) == d for k, d in default.items())
    if isinstance(default, wire.Uuid):  # compare as 16 bytes whatever form was given
        try:
            return wire.as_uuid(item) == default
        except (TypeError, ValueError):
            return False
    return bool(item == default)


def _tagged_payload_writer(f: FieldSpec, version: int) -> Writer:
    nullable = version in f.nullable_versions
    if isinstance(f.type, StructSpec) and nullable:
        inner = struct_writer(f.type, version, True)

        def write_nullable_tagged_struct(out: bytearray, value: Any) -> None:
            out.append(1)  # the generated writer's writeUnsignedVarint(1) before the struct
            inner(out, value)

        return write_nullable_tagged_struct
    return _type_writer(f.type, version, True, nullable)


def _type_writer(type_: FieldType, version: int, flexible: bool, nullable: bool) -> Writer:
    """A writer for one value; errors carry no field name (the struct writer adds the path)."""
    if isinstance(type_, StructSpec):
        inner = struct_writer(type_, version, flexible)
        if not nullable:
            return inner

        def write_nullable_struct(out: bytearray, value: Any) -> None:
            if value is None:
                out += b"\xff"
            else:
                out.append(1)
                inner(out, value)

        return write_nullable_struct
    if isinstance(type_, ArrayOf):
        return _array_writer(type_, version, flexible, nullable)
    if type_ == "string":
        return _string_writer(flexible, nullable)
    if type_ == "bytes":
        return _bytes_writer(flexible, nullable)
    if type_ == "uuid":
        return _write_uuid
    pack = _PACKERS[type_].pack

    def write_fixed(out: bytearray, value: Any) -> None:
        if not isinstance(value, int) or isinstance(value, bool):
            raise EncodeError(f"expected an int for {type_}, got {type(value).__name__}")
        out += pack(value)

    return write_fixed


def _write_uuid(out: bytearray, value: Any) -> None:
    try:
        out += wire.as_uuid(value)
    except (TypeError, ValueError) as exc:
        raise EncodeError(str(exc)) from None


def _null_or_fail(out: bytearray, nullable: bool, compact: bool, wide: bool) -> None:
    if not nullable:
        raise EncodeError("null given, but the field is not nullable")
    wire.write_length(out, -1, compact=compact, wide=wide)


def _string_writer(compact: bool, nullable: bool) -> Writer:
    def write_string(out: bytearray, value: Any) -> None:
        if value is None:
            _null_or_fail(out, nullable, compact, False)
            return
        raw = wire.utf8(value, "string")
        wire.write_length(out, len(raw), compact=compact, wide=False)
        out += raw

    return write_string


def _bytes_writer(compact: bool, nullable: bool) -> Writer:
    def write_bytes(out: bytearray, value: Any) -> None:
        if value is None:
            _null_or_fail(out, nullable, compact, True)
            return
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise EncodeError(f"expected bytes, got {type(value).__name__}")
        raw = bytes(value)
        wire.write_length(out, len(raw), compact=compact, wide=True)
        out += raw

    return write_bytes


def _array_writer(type_: ArrayOf, version: int, flexible: bool, nullable: bool) -> Writer:
    write_element = _type_writer(type_.element, version, flexible, False)

    def write_array(out: bytearray, value: Any) -> None:
        if value is None:
            _null_or_fail(out, nullable, flexible, True)
            return
        if not isinstance(value, (list, tuple)):
            raise EncodeError(f"expected a list, got {type(value).__name__}")
        wire.write_length(out, len(value), compact=flexible, wide=True)
        for i, item in enumerate(value):
            try:
                write_element(out, item)
            except EncodeError as exc:
                raise EncodeError(f"[{i}]: {exc}") from None
            except (_struct.error, TypeError, OverflowError) as exc:
                raise EncodeError(f"[{i}]: {exc}") from None

    return write_array
