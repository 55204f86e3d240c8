"""The one exception a decoder raises, and the one an encoder raises.

Why one decode exception: a streaming job must be able to quarantine a bad record with a
single ``except DecodeError`` and keep going (Burrow's lesson: a decoder that can throw
anything eventually kills the pipeline). Every other failure mode of the byte readers —
``struct.error``, ``IndexError``, ``UnicodeDecodeError``, ``MemoryError`` from a huge
declared length — is turned into a ``DecodeError`` at the point where it happens, with the
byte offset, so a quarantined record says *where* it went wrong.

``reason`` is one of the short, stable categories below (tests and the quarantine table
key on them); ``detail`` is the human sentence.
"""

from __future__ import annotations

# Stable reason categories. Kafka's own readers fail with RuntimeException/SchemaException
# texts such as "non-nullable field x was serialized as null" (generated readers, see
# generator/.../MessageDataGenerator.java); we map them onto these categories.
TRUNCATED = "truncated"
"""The input ended before a field (or a declared length/count) could be read."""
OVER_LONG = "over-long"
"""Bytes remain after a complete key struct, or after a value struct at a known version."""
NEGATIVE_LENGTH = "negative length"
"""A length/count below zero, other than the -1 null marker of a nullable field."""
INVALID_UTF8 = "invalid utf-8"
"""A string's bytes are not valid UTF-8 (Java would substitute U+FFFD; we refuse)."""
UNKNOWN_VERSION = "unknown version"
"""A value (or consumer-protocol) version the layout tables do not describe."""
INVALID_VARINT = "invalid varint"
"""An unsigned varint longer than 5 bytes or above 2**32-1 (ByteUtils.readUnsignedVarint)."""
STRING_TOO_LONG = "string too long"
"""A string longer than 0x7fff bytes, which Kafka's generated readers reject."""

REASONS = (
    TRUNCATED,
    OVER_LONG,
    NEGATIVE_LENGTH,
    INVALID_UTF8,
    UNKNOWN_VERSION,
    INVALID_VARINT,
    STRING_TOO_LONG,
)


class DecodeError(Exception):
    """A record (or consumer-protocol blob) that cannot be decoded.

    Attributes:
        record_type: the key's int16 record type, or ``None`` if the key was too short to
            hold one (or the blob is not a record, e.g. ``decode_subscription``).
        version: the value version (or consumer-protocol version) being read, ``None``
            while reading the key or when the version itself could not be read.
        position: byte offset, counted from the first byte of the buffer named by
            ``part`` (so the key's int16 type is at 0 and a value's int16 version is at 0),
            of the element that could not be read: the start of a truncated field or
            length prefix, the first trailing byte of an over-long struct, the first bad
            byte of invalid UTF-8.
        reason: one of :data:`REASONS`.
        part: ``"key"``, ``"value"``, ``"subscription"``, ``"assignment"`` or
            ``"user_data"`` — which buffer ``position`` counts in.
        detail: a human-readable sentence naming the field.

    Example:
        >>> from decoders import decode_record, DecodeError
        >>> try:
        ...     decode_record(b"\\x00\\x01\\x00", None)
        ... except DecodeError as e:
        ...     (e.record_type, e.position, e.reason)
        (1, 2, 'truncated')
    """

    def __init__(
        self,
        position: int,
        reason: str,
        detail: str = "",
        *,
        record_type: int | None = None,
        version: int | None = None,
        part: str | None = None,
    ) -> None:
        self.position = position
        self.reason = reason
        self.detail = detail
        self.record_type = record_type
        self.version = version
        self.part = part
        super().__init__()

    def __str__(self) -> str:
        where = f"{self.part} byte {self.position}" if self.part else f"byte {self.position}"
        ctx = []
        if self.record_type is not None:
            ctx.append(f"record type {self.record_type}")
        if self.version is not None:
            ctx.append(f"version {self.version}")
        prefix = f"[{', '.join(ctx)}] " if ctx else ""
        tail = f": {self.detail}" if self.detail else ""
        return f"{prefix}{self.reason} at {where}{tail}"

    def __repr__(self) -> str:
        return (
            f"DecodeError(record_type={self.record_type!r}, version={self.version!r}, "
            f"part={self.part!r}, position={self.position!r}, reason={self.reason!r}, "
            f"detail={self.detail!r})"
        )

    def in_context(
        self, *, record_type: int | None = None, version: int | None = None, part: str | None = None
    ) -> DecodeError:
        """Fill in context the low-level reader did not know; keeps what is already set."""
        if self.record_type is None:
            self.record_type = record_type
        if self.version is None:
            self.version = version
        if self.part is None:
            self.part = part
        return self


class EncodeError(ValueError):
    """A dict that cannot be encoded at the requested version.

    The message names the field path (``GroupMetadataValue.members[0].clientId: ...``).
    It subclasses ``ValueError`` because it is always the caller's data that is wrong.
    """
