"""Vectorized decoding of offset-commit records held in Arrow arrays (numpy, no per-row Python).

Offset commits are over 90% of ``__consumer_offsets`` and their layouts are
fixed (``decoders.offset_commit``: key = type:int16 | group:string16 |
topic:string16 | partition:int32; value v0-v4). Decoding them row by row in
Python costs microseconds each; here every field of a whole Arrow batch is
read with numpy gathers over the batch's byte buffer, which is what lets the
Spark path (``pipelines.decode``) keep up with a scan.

The result is only trusted where ``ok`` is true: every length consistent, no
byte left over, strings valid UTF-8, a known (type, version) pair, and for v4
either no tagged field or exactly the topic-id tag. Everything else (and every
non-offset record) is for the table-driven decoder, which also names the
precise error. Tests check this module against ``decoders.decode_record``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

_PAD = 32  # bytes of zero padding so that reads past a short record stay in bounds
_B64URL = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", dtype=np.uint8)


@dataclass(frozen=True)
class OffsetCommitBatch:
    """Decoded columns of one batch; rows where ``ok`` is false hold garbage and must be ignored."""

    ok: np.ndarray  # bool
    record_type: np.ndarray  # int16
    value_version: np.ndarray  # int16 (meaningless where is_tombstone)
    is_tombstone: np.ndarray  # bool
    columns: dict[str, pa.Array]  # group, topic, partition, offset, leader_epoch, metadata,
    # commit_timestamp, expire_timestamp, topic_id (Arrow arrays with nulls where absent)


class _Bytes:
    """A binary Arrow array as (padded data, starts, lengths, valid) numpy views."""

    def __init__(self, array: pa.Array) -> None:
        n = len(array)
        validity, offsets_buf, data_buf = array.buffers()
        offsets = np.frombuffer(offsets_buf, dtype=np.int32, count=n + 1, offset=array.offset * 4)
        data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
        self.data = np.concatenate([data, np.zeros(_PAD, np.uint8)])
        self.starts = offsets[:-1].astype(np.int64)
        self.lengths = (offsets[1:] - offsets[:-1]).astype(np.int64)
        self.valid = np.ones(n, bool) if validity is None else ~np.asarray(array.is_null())
        self.limit = len(self.data) - _PAD

    def _at(self, rel: np.ndarray, width: int) -> np.ndarray:
        pos = self.starts + rel
        return np.clip(pos, 0, max(self.limit, 0))[:, None] + np.arange(width)

    def take(self, rel: np.ndarray | int, width: int) -> np.ndarray:
        """(n, width) bytes at ``starts + rel``; reads past the data land in the zero padding."""
        return self.data[self._at(np.asarray(rel, np.int64) + np.zeros_like(self.starts), width)]

    def u8(self, rel: np.ndarray | int) -> np.ndarray:
        return self.take(rel, 1)[:, 0].astype(np.int64)

    def int_be(self, rel: np.ndarray | int, width: int) -> np.ndarray:
        """Signed big-endian integers of ``width`` bytes at ``starts + rel``."""
        raw = self.take(rel, width)
        dtype = {2: ">i2", 4: ">i4", 8: ">i8"}[width]
        return np.ascontiguousarray(raw).view(dtype).ravel().astype(np.int64)

    def strings(self, rel: np.ndarray, length: np.ndarray, take: np.ndarray) -> tuple[pa.Array, np.ndarray]:
        """UTF-8 strings at ``starts + rel`` of ``length`` bytes where ``take``; (array, utf8_ok)."""
        import pyarrow as pa

        n = len(self.starts)
        length = np.where(take, np.clip(length, 0, None), 0)
        begin = np.clip(self.starts + rel, 0, None)
        ends = np.cumsum(length)
        total = int(ends[-1]) if n else 0
        index = np.repeat(begin - (ends - length), length) + np.arange(total)
        index = np.clip(index, 0, len(self.data) - 1)
        payload = self.data[index].tobytes()
        offsets = np.concatenate([[0], ends]).astype(np.int32)
        validity = pa.array(take).buffers()[1]
        binary = pa.Array.from_buffers(pa.binary(), n, [validity, pa.py_buffer(offsets.tobytes()),
                                                       pa.py_buffer(payload)], null_count=int((~take).sum()))
        try:
            return binary.cast(pa.string()), np.ones(n, bool)
        except pa.ArrowInvalid:
            ok = np.ones(n, bool)
            for i, item in enumerate(binary.to_pylist()):
                if item is not None:
                    try:
                        item.decode("utf-8")
                    except UnicodeDecodeError:
                        ok[i] = False
            cleaned = pa.array([item.decode("utf-8") if item is not None and ok[i] else None
                                for i, item in enumerate(binary.to_pylist())], pa.string())
            return cleaned, ok


def _base64url(raw16: np.ndarray) -> np.ndarray:
    """Kafka's Uuid text for an (n, 16) uint8 array: URL-safe base64 without padding (22 chars)."""
    n = raw16.shape[0]
    padded = np.zeros((n, 18), np.uint8)
    padded[:, :16] = raw16
    triples = padded.reshape(n, 6, 3).astype(np.uint32)
    word = (triples[:, :, 0] << 16) | (triples[:, :, 1] << 8) | triples[:, :, 2]
    sextets = np.stack([(word >> 18) & 63, (word >> 12) & 63, (word >> 6) & 63, word & 63], axis=2).reshape(n, 24)
    return _B64URL[sextets][:, :22]


def decode_offset_commits(keys: pa.Array, values: pa.Array) -> OffsetCommitBatch:
    """Decode a batch of (key, value) binary arrays as offset commits, vectorized."""
    import pyarrow as pa

    k, v = _Bytes(keys), _Bytes(values)
    n = len(k.starts)
    record_type = k.int_be(0, 2)
    g_len = k.int_be(2, 2)
    t_len = k.int_be(4 + np.clip(g_len, 0, None), 2)
    key_ok = (
        k.valid & np.isin(record_type, (0, 1)) & (k.lengths >= 10) & (g_len >= 0) & (t_len >= 0)
        & (k.lengths == 10 + g_len + t_len)
    )
    group, group_ok = k.strings(np.full(n, 4), g_len, key_ok)
    topic, topic_ok = k.strings(6 + g_len, t_len, key_ok)
    partition = k.int_be(6 + np.clip(g_len, 0, None) + np.clip(t_len, 0, None), 4)

    tombstone = ~v.valid
    present = v.valid & (v.lengths >= 2)
    version = np.where(present, v.int_be(0, 2), -1)
    # Metadata: int16 length for v0-v3; v4 has an unsigned varint of (length + 1), 1 or 2 bytes.
    b0, b1 = v.u8(14), v.u8(15)
    varint_len = np.where(b0 < 128, 1, np.where(b1 < 128, 2, 0))
    meta_pos = np.select([version <= 2, version == 3, version == 4], [12, 16, 14 + varint_len], 0)
    meta_len = np.select(
        [version <= 2, version == 3, (version == 4) & (b0 < 128), (version == 4) & (b1 < 128)],
        [v.int_be(10, 2), v.int_be(14, 2), b0 - 1, (b0 - 128) + b1 * 128 - 1], -1,
    )
    ts_pos = meta_pos + np.clip(meta_len, 0, None)
    tag_count = v.u8(ts_pos + 8)
    has_topic_id = (version == 4) & (tag_count == 1) & (v.u8(ts_pos + 9) == 0) & (v.u8(ts_pos + 10) == 16)
    expected_len = np.select(
        [np.isin(version, (0, 2, 3)), version == 1, (version == 4) & (tag_count == 0), has_topic_id],
        [ts_pos + 8, ts_pos + 16, ts_pos + 9, ts_pos + 27], -1,
    )
    value_struct_ok = present & np.isin(version, (0, 1, 2, 3, 4)) & (meta_len >= 0) & (v.lengths == expected_len)
    # Legacy type 0 only ever had value v0 (LegacyOffsetCommitValue.json, Kafka 4.1+).
    value_struct_ok &= (record_type == 1) | (version == 0)
    metadata, metadata_ok = v.strings(meta_pos, meta_len, value_struct_ok)
    value_ok = tombstone | (value_struct_ok & metadata_ok)
    ok = key_ok & group_ok & topic_ok & value_ok

    has_value = ok & ~tombstone
    offset = v.int_be(2, 8)
    leader_epoch = v.int_be(10, 4)
    commit_ts = v.int_be(ts_pos, 8)
    expire_ts = v.int_be(ts_pos + 8, 8)
    topic_id_raw = v.take(ts_pos + 11, 16)
    topic_id_text = _base64url(topic_id_raw)
    # The zero uuid is the tag's default ("no topic id"), as when the tag is absent.
    with_id = has_value & has_topic_id & topic_id_raw.any(axis=1)
    topic_id = pa.array([t.tobytes().decode("ascii") for t in topic_id_text[with_id]], pa.string()) if with_id.any() \
        else pa.array([], pa.string())
    topic_id_full = _scatter_strings(topic_id, with_id)

    def masked(values: np.ndarray, mask: np.ndarray, dtype: pa.DataType) -> pa.Array:
        return pa.array(values, dtype, mask=~mask)

    columns = {
        "group": group, "topic": topic,
        "partition": masked(partition, ok, pa.int32()),
        "offset": masked(offset, has_value, pa.int64()),
        "leader_epoch": masked(leader_epoch, has_value & (version >= 3), pa.int32()),
        "metadata": metadata,
        "commit_timestamp": masked(commit_ts, has_value, pa.int64()),
        "expire_timestamp": masked(expire_ts, has_value & (version == 1), pa.int64()),
        "topic_id": topic_id_full,
    }
    return OffsetCommitBatch(ok=ok, record_type=record_type.astype(np.int16), value_version=version.astype(np.int16),
                             is_tombstone=tombstone, columns=columns)


def _scatter_strings(dense: pa.Array, where: np.ndarray) -> pa.Array:
    """A string array of len(where) with ``dense``'s items at the true positions, null elsewhere."""
    import pyarrow as pa

    if not where.any():
        return pa.nulls(len(where), pa.string())
    index = np.full(len(where), -1, np.int64)
    index[where] = np.arange(int(where.sum()))
    indices = pa.array(index, pa.int64(), mask=~where)
    return dense.take(indices)
