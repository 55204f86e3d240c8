"""Pure-Python decoders and encoders for the records of Kafka's ``__consumer_offsets``.

No Spark, no Kafka client: standard library only, pure functions. Every layout is
described once, as data (:mod:`decoders.layout` and the per-family tables); the decoder,
the encoder and the Spark type description all derive from it.

>>> from decoders import decode_record, encode_record
>>> k, v = encode_record("offset_commit", {"group": "g", "topic": "t", "partition": 0},
...                      {"offset": 42, "leader_epoch": -1, "metadata": "", "commit_timestamp": 0})
>>> rec = decode_record(k, v)
>>> rec.type, rec.value_version, rec.value["offset"]
('offset_commit', 4, 42)
"""

from decoders.consumer_protocol import decode_assignment, decode_subscription, encode_assignment, encode_subscription
from decoders.errors import DecodeError, EncodeError
from decoders.layout import struct_shape
from decoders.partitioning import coordinator_partition
from decoders.records import DecodedRecord, UnknownRecord, decode_record, encode_record
from decoders.wire import Uuid

__all__ = [
    "DecodeError",
    "DecodedRecord",
    "EncodeError",
    "UnknownRecord",
    "Uuid",
    "coordinator_partition",
    "decode_assignment",
    "decode_record",
    "decode_subscription",
    "encode_assignment",
    "encode_record",
    "encode_subscription",
    "struct_shape",
]
