"""Hypothesis strategies generated from the layout tables themselves, so a new field or
record type is covered by the round-trip tests without touching them."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from decoders.consumer_protocol import ASSIGNMENT, SUBSCRIPTION
from decoders.layout import RECORD_SPECS
from decoders.spec import ArrayOf, FieldSpec, FieldType, RecordSpec, StructSpec
from decoders.sticky_user_data import TOPIC_ASSIGNMENT
from decoders.wire import Uuid

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}

# Short text with non-ASCII and non-BMP characters: UTF-8 lengths of 1–4 bytes per char.
TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
BINARY = st.binary(max_size=24)
UUIDS = st.binary(min_size=16, max_size=16).map(Uuid)


def type_strategy(type_: FieldType, version: int) -> st.SearchStrategy[Any]:
    if isinstance(type_, StructSpec):
        return struct_strategy(type_, version)
    if isinstance(type_, ArrayOf):
        return st.lists(type_strategy(type_.element, version), max_size=3)
    if type_ == "string":
        return TEXT
    if type_ == "bytes":
        return BINARY
    if type_ == "uuid":
        return UUIDS
    lo, hi = _INT_RANGES[type_]
    return st.integers(lo, hi)


def field_strategy(f: FieldSpec, version: int) -> st.SearchStrategy[Any]:
    strategy = type_strategy(f.type, version)
    if version in f.nullable_versions:
        strategy = st.none() | strategy
    if f.is_tagged_in(version):
        strategy = st.builds(f.default_value) | strategy  # tagged fields are often at their default
    return strategy


def struct_strategy(spec: StructSpec, version: int) -> st.SearchStrategy[dict[str, Any]]:
    """A dict with exactly the wire fields of ``spec`` present at ``version``."""
    return st.fixed_dictionaries({f.name: field_strategy(f, version) for f in spec.fields if version in f.versions})


def record_cases() -> list[tuple[RecordSpec, int]]:
    """Every (record type, value version) pair the tables describe."""
    return [(spec, v) for spec in RECORD_SPECS for v in spec.value_versions.members(spec.max_value_version)]


def strip_derived(spec: StructSpec, value: Any) -> Any:
    """Drop the fields the decoder adds (``DerivedField``), recursively."""
    if value is None:
        return None
    derived = {d.name for d in spec.derived}
    out = {}
    for k, v in value.items():
        if k in derived:
            continue
        f = spec.field_named(k)
        t = f.type
        if isinstance(t, StructSpec):
            v = strip_derived(t, v)
        elif isinstance(t, ArrayOf) and isinstance(t.element, StructSpec) and v is not None:
            v = [strip_derived(t.element, item) for item in v]
        out[k] = v
    return out


def subscription_strategy(version: int) -> st.SearchStrategy[dict[str, Any]]:
    return struct_strategy(SUBSCRIPTION, version)


def assignment_strategy(version: int) -> st.SearchStrategy[dict[str, Any]]:
    return struct_strategy(ASSIGNMENT, version)


TOPIC_ASSIGNMENTS = st.lists(struct_strategy(TOPIC_ASSIGNMENT, 0), max_size=3)


def mutated(data: st.DataObject, blob: bytes) -> bytes:
    """``blob`` truncated, with one byte flipped, or with 1-4 bytes inserted or appended."""
    buf = bytearray(blob)
    mutation = data.draw(st.sampled_from(["truncate", "flip", "insert", "append"]))
    at = data.draw(st.integers(0, len(buf)))
    if mutation == "truncate":
        del buf[at:]
    elif mutation == "flip" and at < len(buf):
        buf[at] ^= data.draw(st.integers(1, 255))
    elif mutation == "insert":
        buf[at:at] = data.draw(st.binary(min_size=1, max_size=4))
    else:
        buf += data.draw(st.binary(min_size=1, max_size=4))
    return bytes(buf)
