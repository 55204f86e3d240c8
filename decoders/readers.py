"""Readers *generated* from the layout tables: one specialised Python function per
(struct, version, flexible) and per record type, compiled once and cached — the franz-go
way of decoding (its ``generate/`` turns the message definitions into straight-line Go),
here turned into straight-line Python.

Why: the table-driven reader (:mod:`decoders.codec`) walks a list of per-field closures
and calls two or three helpers for every length, string and int: some 45,000 Python
calls for a 200-member GroupMetadata record. A generated reader for
``GroupMetadataValue`` v3 is one function whose body reads every field inline: runs of
consecutive fixed-size fields (and the int16/int32 length prefix of the field that
follows them) are one precompiled ``struct.Struct.unpack_from``, nested structs and
array elements are read inline in the loop, dicts are built as literals in declaration
order (tagged fields at their default, then overwritten), strings are ``bytes.decode``
(strict UTF-8). Print one with :func:`reader_source`.

The wire rules are the codec's, as Kafka's ``MessageDataGenerator`` generates them (see
:mod:`decoders.codec`): int16/int32 lengths and counts with -1 = null in non-flexible
versions, unsigned-varint N+1 in flexible ones; a tagged-field section after every
flexible struct (absent tags keep their defaults, unknown tags are skipped by size, a
nullable tagged struct's payload starts with a varint marker, a tagged payload is read
within its declared size and must fill it); an int8 marker before a nullable struct;
nested structs read at the parent's version.

One more thing a generated reader does that the table does not: the members of a group
subscribe to the same topics, so a ``[]string`` field remembers the bytes and the value of
the last list it read; when the next list starts with the very same bytes it is the very
same list (a length-prefixed parse depends only on the bytes it consumes), and it is
copied instead of parsed — one ``bytes.startswith`` instead of twenty string reads.

Errors: a generated reader does not say what went wrong, only *that* something is
irregular. It raises :class:`Irregular` (or lets ``struct.error``, ``IndexError`` or
``UnicodeDecodeError`` escape: fixed-size reads are bounded by the buffer, which never
extends past where the struct may end — tagged payloads are sliced out first) on
anything the table-driven reader might reject or read differently: a truncation, a
negative length, a string over 32,767 bytes, a varint over 5 bytes or 32 bits, invalid
UTF-8, a tagged payload not consumed exactly, bytes left over. :data:`IRREGULAR` catches
them all, and the caller then runs the table-driven path, which raises today's exact
:class:`~decoders.errors.DecodeError`. So a generated reader may hand over input the
reference would accept (it then costs one extra pass), but it never accepts what the
reference rejects and never returns a different value.
"""

from __future__ import annotations

import struct as _struct
from collections.abc import Callable
from functools import cache
from typing import Any

from decoders import spec as spec_module
from decoders.codec import min_size
from decoders.spec import FIXED_SIZE, ArrayOf, FieldSpec, FieldType, RecordSpec, StructSpec
from decoders.wire import MAX_STRING_BYTES, Uuid


class Irregular(Exception):
    """Internal: this input is for the table-driven reader (which says precisely why)."""


IRREGULAR = (Irregular, _struct.error, IndexError, UnicodeDecodeError)
"""Everything a generated reader raises on input it does not accept."""

Reader = Callable[[bytes, int, int], tuple[Any, int]]
"""``read(buf, pos, end) -> (value, new_pos)``; ``end`` must be ``len(buf)``."""

RecordReader = Callable[[bytes, "bytes | None"], Any]
"""``read(key, value) -> record | None``; ``None`` = irregular, use the table-driven path."""

MakeRecord = Callable[[str, int, "int | None", dict[str, Any], "dict[str, Any] | None"], Any]
"""``make(name, record type, value version, key dict, value dict) -> record``."""

# One format character per fixed-size type; a uuid is read as 16 raw bytes.
_FORMAT = {"int8": "b", "int16": "h", "uint16": "H", "int32": "i", "int64": "q", "uuid": "16s"}

_SMALL_ARRAYS = 256
"""Arrays of up to this many fixed-size elements use a precompiled ``Struct`` each."""


# --------------------------------------------------------------------------- runtime helpers


def _ulen(buf: bytes, pos: int) -> tuple[int, int]:
    """A multi-byte unsigned varint minus one (a compact length or count), by the rules of
    ``wire.read_uvarint``: at most 5 bytes and 32 bits, else :class:`Irregular`."""
    result = 0
    shift = 0
    while True:
        b = buf[pos]  # IndexError past the end
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift > 28:
            raise Irregular
    if result > 0xFFFFFFFF:
        raise Irregular
    return result - 1, pos


def _uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    value, pos = _ulen(buf, pos)
    return value + 1, pos


TaggedField = tuple[str, Reader, "_struct.Struct | None"]
"""A known tag: the field's key, its payload reader and, for an integer field, its Struct
(a shortcut: the payload must then be exactly that many bytes, read without slicing)."""


def _tagged_section(buf: bytes, pos: int, end: int, out: dict[str, Any], known: dict[int, TaggedField]) -> int:
    """A non-empty tagged-field section, read as ``codec._read_tagged_section`` reads it:
    the count, then (tag, size, payload) entries; known tags overwrite their default in
    ``out``, unknown ones are skipped."""
    count = buf[pos]
    if count < 0x80:
        pos += 1
    else:
        count, pos = _uvarint(buf, pos)
    if count * 2 > end - pos:
        raise Irregular
    for _ in range(count):
        tag = buf[pos]
        size = buf[pos + 1]
        if tag < 0x80 and size < 0x80:
            pos += 2
        else:
            tag, pos = _uvarint(buf, pos)
            size, pos = _uvarint(buf, pos)
        if size > end - pos:
            raise Irregular
        field = known.get(tag)
        if field is not None:
            name, read, fixed = field
            if fixed is not None:
                if size != fixed.size:
                    raise Irregular
                out[name] = fixed.unpack_from(buf, pos)[0]
            else:
                value, after = read(buf[pos : pos + size], 0, size)
                if after != size:
                    raise Irregular
                out[name] = value
        pos += size
    return pos


@cache
def _int_array_structs(code: str) -> tuple[_struct.Struct, ...]:
    return tuple(_struct.Struct(f">{n}{code}") for n in range(_SMALL_ARRAYS))


# --------------------------------------------------------------------------- public


_struct_cache: dict[tuple[StructSpec, int, bool], Reader] = {}
_source_cache: dict[tuple[Any, ...], str] = {}


def struct_reader(spec: StructSpec, version: int, flexible: bool) -> Reader:
    """The generated reader of ``spec`` at ``version``: ``read(buf, pos, len(buf)) ->
    (dict, new_pos)``, raising one of :data:`IRREGULAR` on irregular input. Bytes after the
    struct are left to the caller."""
    key = (spec, version, flexible)
    reader = _struct_cache.get(key)
    if reader is None:
        gen = _Generator()
        name = f"read_{spec.name}_v{version}" + ("_flexible" if flexible else "")
        gen.emit(0, f"def {name}(buf, p, end):")
        result = gen.struct_body(spec, version, flexible, 1)
        gen.emit(1, f"return {result}, p")
        reader = gen.compile(name, ("struct", *key))
        _struct_cache[key] = reader
    return reader


_versioned_cache: dict[tuple[StructSpec, int], Callable[[bytes], dict[str, Any]]] = {}


def versioned_reader(spec: StructSpec, highest: int) -> Callable[[bytes], dict[str, Any]]:
    """The generated reader of blobs framed as the consumer protocol frames them: int16
    version, then ``spec`` (never flexible) at ``min(version, highest)``, trailing bytes
    ignored (as ``ConsumerProtocol.deserialize*`` does); the dict ends with the version as
    written, under ``"version"``. ``read(blob) -> dict``, raising one of
    :data:`IRREGULAR` on irregular input (a negative version included)."""
    key = (spec, highest)
    reader = _versioned_cache.get(key)
    if reader is None:
        gen = _Generator()
        name = f"read_versioned_{spec.name}"
        gen.emit(0, f"def {name}(buf):")
        gen.emit(1, "end = len(buf)")
        gen.emit(1, f"version = {gen.unpacker('h')}(buf, 0)[0]")
        gen.emit(1, "p = 2")
        for v in range(highest, -1, -1):
            condition = f"version >= {v}" if v == highest else f"version == {v}"
            gen.emit(1, f"{'if' if v == highest else 'elif'} {condition}:")
            result = gen.struct_body(spec, v, False, 2, extra=(("version", "version"),))
            gen.emit(2, f"return {result}")
        gen.emit(1, "raise Irregular")
        reader = _versioned_cache[key] = gen.compile(name, ("versioned", *key))
    return reader


_record_cache: dict[tuple[RecordSpec, Any], RecordReader] = {}


def record_reader(spec: RecordSpec, make: MakeRecord) -> RecordReader:
    """The generated reader of a whole record of type ``spec``: key (from byte 2, exact),
    then — unless the value is null, a tombstone — the value's int16 version and the value
    struct at that version (exact), then the record's after-read hook
    (``spec.after_read``, else ``spec.after_decode``); returns ``make(...)`` or ``None``
    when anything is irregular (an unknown version included)."""
    key = (spec, make)
    reader = _record_cache.get(key)
    if reader is None:
        reader = _record_cache[key] = _record_function(spec, make)
    return reader


def reader_source(spec: StructSpec | RecordSpec, version: int = 0, flexible: bool = False) -> str:
    """The Python source of a generated reader, for reading and debugging: of a struct at
    ``version``, or of a whole record (``spec`` a :class:`RecordSpec`)."""
    if isinstance(spec, RecordSpec):
        source = _record_source(spec)[0]
        return source
    struct_reader(spec, version, flexible)
    return _source_cache[("struct", spec, version, flexible)]


# --------------------------------------------------------------------------- records


def _record_source(spec: RecordSpec) -> tuple[str, _Generator, str]:
    gen = _Generator()
    name = f"read_{spec.name}"
    assert spec.value_versions.high is not None
    versions = spec.value_versions.members(spec.value_versions.high)
    # The version current brokers write first: it is the one nearly every record has.
    versions.sort(key=lambda v: v != spec.written_version)
    gen.emit(0, f"def {name}(key, value):")
    gen.emit(1, "try:")
    gen.emit(2, "buf = key")
    gen.emit(2, "end = len(buf)")
    gen.emit(2, "p = 2")
    key_dict = gen.struct_body(spec.key, 0, False, 2)
    gen.emit(2, "if p != end:")
    gen.emit(3, "return None")
    gen.emit(2, "if value is None:")
    gen.emit(3, f"return _make({spec.name!r}, {spec.type_id}, None, {key_dict}, None)")
    gen.emit(2, "buf = value")
    gen.emit(2, "end = len(buf)")
    gen.emit(2, f"version = {gen.unpacker('h')}(buf, 0)[0]")
    gen.emit(2, "p = 2")
    for i, version in enumerate(versions):
        gen.emit(2, f"{'if' if i == 0 else 'elif'} version == {version}:")
        result = gen.struct_body(spec.value, version, version in spec.flexible_versions, 3)
        gen.emit(3, f"value_dict = {result}")
    gen.emit(2, "else:")
    gen.emit(3, "return None")
    gen.emit(2, "if p != end:")
    gen.emit(3, "return None")
    gen.emit(1, "except _IRREGULAR:")
    gen.emit(2, "return None")
    hook = spec.after_read or spec.after_decode
    if hook is not None:
        gen.namespace["_after_read"] = hook
        gen.emit(1, "_after_read(value_dict, version)")
    gen.emit(1, f"return _make({spec.name!r}, {spec.type_id}, version, {key_dict}, value_dict)")
    return "\n".join(gen.lines) + "\n", gen, name


def _record_function(spec: RecordSpec, make: MakeRecord) -> RecordReader:
    source, gen, name = _record_source(spec)
    gen.namespace["_make"] = make
    reader: RecordReader = gen.compile(name, ("record", spec))
    return reader


def _tagged_field(f: FieldSpec, version: int) -> TaggedField:
    """A tagged field's payload reader: always the flexible encodings; a nullable tagged
    struct starts with a varint (0 = null) — ``generateStructReader(..., tagged=true)``."""
    nullable = version in f.nullable_versions
    if isinstance(f.type, StructSpec) and nullable:
        inner = struct_reader(f.type, version, True)

        def read_nullable_tagged_struct(buf: bytes, pos: int, end: int) -> tuple[Any, int]:
            marker, pos = _uvarint(buf, pos)
            if marker == 0:
                return None, pos
            return inner(buf, pos, end)

        return f.name, read_nullable_tagged_struct, None
    gen = _Generator()
    name = f"read_{f.kafka_name}_payload_v{version}"
    gen.emit(0, f"def {name}(buf, p, end):")
    result = gen.value(f.type, version, True, nullable, 1, "v")
    gen.flush(1)
    gen.emit(1, f"return {result}, p")
    fixed = None
    if isinstance(f.type, str) and f.type in FIXED_SIZE and f.type != "uuid":
        fixed = _struct.Struct(">" + _FORMAT[f.type])
    return f.name, gen.compile(name, ("payload", f, version)), fixed


# --------------------------------------------------------------------------- the generator


class _Generator:
    """Emits the source of one reader function; nested structs are emitted inline."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.namespace: dict[str, Any] = {
            "Irregular": Irregular,
            "_IRREGULAR": IRREGULAR,
            "_ulen": _ulen,
            "_tagged_section": _tagged_section,
            "_new_bytes": bytes.__new__,
            "_Uuid": Uuid,
            "_fresh": spec_module.fresh,
            "_struct_unpack_from": _struct.unpack_from,
        }
        self._names: dict[str, int] = {}
        self._consts: dict[tuple[str, Any], str] = {}
        # fixed-size items waiting to be read with one unpack_from: (format, variable, kind)
        self._run: list[tuple[str, str, str]] = []

    # -- bookkeeping

    def compile(self, name: str, cache_key: tuple[Any, ...]) -> Any:
        source = "\n".join(self.lines) + "\n"
        _source_cache[cache_key] = source
        exec(compile(source, f"<generated {name}>", "exec"), self.namespace)  # noqa: S102
        return self.namespace[name]

    def var(self, hint: str) -> str:
        n = self._names.get(hint, 0)
        self._names[hint] = n + 1
        return f"{hint}{n}" if n else hint

    def const(self, value: Any, hint: str, key: Any = None) -> str:
        """A name for ``value`` in the function's namespace; one per ``key`` (default: the object)."""
        cache_key = (hint, id(value) if key is None else key)
        name = self._consts.get(cache_key)
        if name is None:
            name = self.var(f"_{hint}")
            self.namespace[name] = value
            self._consts[cache_key] = name
        return name

    def unpacker(self, fmt: str) -> str:
        """The bound ``unpack_from`` of a precompiled Struct (one attribute lookup less per read)."""
        return self.const(_struct.Struct(">" + fmt).unpack_from, "unpack_" + fmt.replace("16s", "u"), key=fmt)

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    # -- fixed-size runs

    def flush(self, indent: int) -> None:
        """Read the pending run of fixed-size items with one unpack_from."""
        run, self._run = self._run, []
        if not run:
            return
        fmt = "".join(code for code, _, _ in run)
        unpack = self.unpacker(fmt)
        targets = [target for _, target, _ in run]
        if len(targets) == 1:
            self.emit(indent, f"{targets[0]} = {unpack}(buf, p)[0]")
        else:
            self.emit(indent, f"{', '.join(targets)} = {unpack}(buf, p)")
        self.emit(indent, f"p += {_struct.calcsize('>' + fmt)}")
        for _, target, kind in run:
            if kind == "uuid":
                self.emit(indent, f"{target} = _new_bytes(_Uuid, {target})")

    # -- structs

    def struct_body(
        self, spec: StructSpec, version: int, flexible: bool, indent: int, extra: tuple[tuple[str, str], ...] = ()
    ) -> str:
        """Emit the reading of ``spec`` inline; return the name of the variable holding its
        dict. ``extra`` are (key, expression) items appended to the dict."""
        items: list[tuple[str, str]] = []
        tagged: dict[int, TaggedField] = {}
        for f in spec.fields:
            if version not in f.versions:
                continue
            if f.is_tagged_in(version):
                assert f.tag is not None
                items.append((f.name, self.default_expr(f)))
                tagged[f.tag] = _tagged_field(f, version)
            else:
                nullable = version in f.nullable_versions
                items.append((f.name, self.value(f.type, version, flexible, nullable, indent, "f_" + _ident(f.name))))
        self.flush(indent)
        result = self.var("d_" + _ident(spec.name))
        body = ", ".join(f"{name!r}: {expr}" for name, expr in (*items, *extra))
        self.emit(indent, f"{result} = {{{body}}}")
        if flexible:
            known = self.const(tagged, "tags")
            self.emit(indent, "if buf[p]:")
            self.emit(indent + 1, f"p = _tagged_section(buf, p, end, {result}, {known})")
            self.emit(indent, "else:")
            self.emit(indent + 1, "p += 1")
        return result

    def default_expr(self, f: FieldSpec) -> str:
        """A tagged field's default, fresh for lists and dicts (never shared between records)."""
        default = f.default
        if isinstance(default, list) and not default:
            return "[]"
        if isinstance(default, (list, dict)):
            return f"_fresh({self.const(default, 'default')})"
        if default is None or (isinstance(default, (int, str)) and not isinstance(default, bool)):
            return repr(default)
        return self.const(default, "default")

    # -- values

    def value(self, type_: FieldType, version: int, flexible: bool, nullable: bool, indent: int, hint: str) -> str:
        """Emit the reading of one value; return the variable that will hold it.

        A fixed-size value only joins the pending run (its variable is assigned when the
        run is flushed); anything else flushes the run first — a non-flexible length
        prefix joins the run before the flush."""
        if isinstance(type_, str) and type_ in FIXED_SIZE:
            target = self.var(hint)
            self._run.append((_FORMAT[type_], target, type_))
            return target
        if isinstance(type_, StructSpec):
            return self.nested_struct(type_, version, flexible, nullable, indent, hint)
        if isinstance(type_, ArrayOf):
            if type_.element == "string" and not nullable:
                return self.remembered_string_array(type_, version, flexible, indent, hint)
            return self.array(type_, version, flexible, nullable, indent, hint)
        if type_ == "string":
            return self.blob(True, flexible, nullable, indent, hint)
        if type_ == "bytes":
            return self.blob(False, flexible, nullable, indent, hint)
        raise AssertionError(f"no generated reader for type {type_!r}")

    def length(self, flexible: bool, wide: bool, indent: int, hint: str, string: bool = False) -> str:
        """Emit the reading of a length or count (-1 = null, as ``wire.read_length``)."""
        n = self.var(f"n_{hint}")
        if flexible:
            self.flush(indent)
            self.emit(indent, f"{n} = buf[p] - 1")
            self.emit(indent, f"if {n} < 127:")
            self.emit(indent + 1, "p += 1")
            self.emit(indent, "else:")
            self.emit(indent + 1, f"{n}, p = _ulen(buf, p)")
            if string:
                self.emit(indent + 1, f"if {n} > {MAX_STRING_BYTES}:")
                self.emit(indent + 2, "raise Irregular")
        else:
            self._run.append(("i" if wide else "h", n, "length"))
            self.flush(indent)
        return n

    def null_check(self, n: str, nullable: bool, target: str, indent: int) -> int:
        """Emit the null / negative-length check; return the indent of the non-null branch."""
        self.emit(indent, f"if {n} < 0:")
        if not nullable:
            self.emit(indent + 1, "raise Irregular")
            return indent
        self.emit(indent + 1, f"if {n} != -1:")
        self.emit(indent + 2, "raise Irregular")
        self.emit(indent + 1, f"{target} = None")
        self.emit(indent, "else:")
        return indent + 1

    def blob(self, string: bool, flexible: bool, nullable: bool, indent: int, hint: str) -> str:
        n = self.length(flexible, wide=not string, indent=indent, hint=hint, string=string)
        target = self.var(hint)
        q = self.var("q")
        if nullable:
            inner = self.null_check(n, nullable, target, indent)
            self.emit(inner, f"{q} = p + {n}")
            self.emit(inner, f"if {q} > end:")
        else:  # the negative-length test folded into the bounds test
            inner = indent
            self.emit(inner, f"{q} = p + {n}")
            self.emit(inner, f"if {q} > end or {n} < 0:")
        self.emit(inner + 1, "raise Irregular")
        self.emit(inner, f"{target} = buf[p:{q}]" + (".decode()" if string else ""))
        self.emit(inner, f"p = {q}")
        return target

    def nested_struct(
        self, spec: StructSpec, version: int, flexible: bool, nullable: bool, indent: int, hint: str
    ) -> str:
        if not nullable:
            self.flush(indent)
            return self.struct_body(spec, version, flexible, indent)
        target = self.var(hint)
        marker = self.var(f"m_{hint}")
        self._run.append(("b", marker, "marker"))
        self.flush(indent)
        self.emit(indent, f"if {marker} < 0:")
        self.emit(indent + 1, f"{target} = None")
        self.emit(indent, "else:")
        inner = self.struct_body(spec, version, flexible, indent + 1)
        self.emit(indent + 1, f"{target} = {inner}")
        return target

    def array(self, type_: ArrayOf, version: int, flexible: bool, nullable: bool, indent: int, hint: str) -> str:
        element = type_.element
        n = self.length(flexible, wide=True, indent=indent, hint=hint)
        target = self.var(hint)
        inner = self.null_check(n, nullable, target, indent)
        if isinstance(element, str) and element in FIXED_SIZE and element != "uuid":
            # Partition lists are the bulk of assignments: one unpack for the lot.
            code = _FORMAT[element]
            size = FIXED_SIZE[element]
            small = self.const(_int_array_structs(code), f"S_{code}s", key=code)
            self.emit(inner, f"if {n} * {size} > end - p:")
            self.emit(inner + 1, "raise Irregular")
            self.emit(inner, f"if {n} < {_SMALL_ARRAYS}:")
            self.emit(inner + 1, f"{target} = list({small}[{n}].unpack_from(buf, p))")
            self.emit(inner, "else:")
            self.emit(inner + 1, f"{target} = list(_struct_unpack_from('>%d{code}' % {n}, buf, p))")
            self.emit(inner, f"p += {n} * {size}")
            return target
        # As codec._array_reader: the count must fit before anything is allocated.
        elem_min = max(1, min_size(element, version, flexible))
        self.emit(inner, f"if {n} * {elem_min} > end - p:")
        self.emit(inner + 1, "raise Irregular")
        self.emit(inner, f"{target} = []")
        append = self.var(f"append_{hint}")
        self.emit(inner, f"{append} = {target}.append")
        self.emit(inner, f"for _ in range({n}):")
        item = self.value(element, version, flexible, False, inner + 1, f"{hint}_item")
        self.flush(inner + 1)
        self.emit(inner + 1, f"{append}({item})")
        return target

    def remembered_string_array(self, type_: ArrayOf, version: int, flexible: bool, indent: int, hint: str) -> str:
        """A non-nullable ``[]string`` that remembers (bytes, value) of the last list read
        here: the same bytes again are the same list (see the module docstring). The
        memory starts as the empty list's encoding, which reads as the empty list."""
        self.flush(indent)
        empty = b"\x01" if flexible else b"\x00\x00\x00\x00"
        memory = self.const([(empty, ())], f"last_{hint}")
        last = self.var(f"last_{hint}")
        target = self.var(hint)
        start = self.var(f"start_{hint}")
        self.emit(indent, f"{last} = {memory}[0]")
        self.emit(indent, f"if buf.startswith({last}[0], p):")
        self.emit(indent + 1, f"{target} = list({last}[1])")
        self.emit(indent + 1, f"p += len({last}[0])")
        self.emit(indent, "else:")
        self.emit(indent + 1, f"{start} = p")
        parsed = self.array(type_, version, flexible, False, indent + 1, hint)
        self.emit(indent + 1, f"{target} = {parsed}")
        self.emit(indent + 1, f"{memory}[0] = (buf[{start}:p], tuple({parsed}))")
        return target


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)
