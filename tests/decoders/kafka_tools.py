"""Test helpers: read ``__consumer_offsets`` raw with confluent-kafka, and run Kafka's own
record printers from the resolved jars (``jvm.artifacts.kafka_classpath()``) as oracles.

* :func:`read_records` — the raw key/value bytes, keyed by (partition, offset), read with an
  explicit ``assign`` (never a group: a group would write its own records into the topic).
* :func:`console_formatter` — ``org.apache.kafka.tools.consumer.ConsoleConsumer`` with
  ``OffsetsMessageFormatter`` / ``GroupMetadataMessageFormatter``, one partition (assign mode).
  The Java formatters print each record as one JSON object *without* a separator
  (``CoordinatorRecordMessageFormatter.writeTo`` writes no newline), so the output is split
  with :func:`split_json_stream`.
* :func:`dump_log_segments` — ``kafka.tools.DumpLogSegments --offsets-decoder`` over segment
  files: every record type, keyed by (partition, offset), plus the batch attributes
  (transactional, producer id) and the transaction markers.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jvm.artifacts import kafka_classpath

OFFSETS_TOPIC = "__consumer_offsets"
OFFSETS_FORMATTER = "org.apache.kafka.tools.consumer.OffsetsMessageFormatter"
GROUP_METADATA_FORMATTER = "org.apache.kafka.tools.consumer.GroupMetadataMessageFormatter"

# Short-lived tool JVMs: C1 only and the serial collector start faster and burn less CPU on a
# 2-core machine. Output in UTF-8 whatever the locale (JDK 17 reads sun.stdout.encoding, 18+
# stdout.encoding), so group ids with non-ASCII characters survive.
JAVA = [
    "java", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.awt.headless=true",
    "-Dfile.encoding=UTF-8", "-Dsun.stdout.encoding=UTF-8", "-Dstdout.encoding=UTF-8",
]

Position = tuple[int, int]  # (partition, offset)


class ToolError(RuntimeError):
    """A Kafka tool failed; the message carries its command line and stderr."""


def run_kafka_tool(main_class: str, args: list[str], *, timeout: float = 180.0) -> str:
    """Run ``main_class`` from the Kafka jars; return its stdout (UTF-8)."""
    command = [*JAVA, "-cp", kafka_classpath(), main_class, *args]
    try:
        result = subprocess.run(command, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise ToolError(f"{main_class} {' '.join(args)} did not finish in {timeout}s") from exc
    if result.returncode != 0:
        raise ToolError(
            f"{main_class} {' '.join(args)} exited with {result.returncode}:\n"
            f"{result.stderr.decode('utf-8', 'replace')[-4000:]}"
        )
    return result.stdout.decode("utf-8")


def split_json_stream(text: str) -> list[Any]:
    """``{...}{...}{...}`` (optionally with whitespace between) -> the list of objects."""
    decoder = json.JSONDecoder()
    out: list[Any] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos == end:
            return out
        obj, pos = decoder.raw_decode(text, pos)
        out.append(obj)


# -- raw records with confluent-kafka ---------------------------------------------------------


@dataclass(frozen=True)
class RawRecord:
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


def offsets_partitions(bootstrap: str, *, timeout: float = 30.0) -> list[int]:
    """The partitions ``__consumer_offsets`` actually has (from the broker's metadata)."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = admin.list_topics(OFFSETS_TOPIC, timeout=timeout).topics.get(OFFSETS_TOPIC)
    if topic is None or topic.error is not None or not topic.partitions:
        raise RuntimeError(f"{OFFSETS_TOPIC} has no partitions yet: {topic and topic.error}")
    return sorted(topic.partitions)


def stable_end_offsets(bootstrap: str, partitions: list[int], *, timeout: float = 60.0) -> dict[int, int]:
    """High watermarks once every partition's last stable offset has caught up with them
    (no transaction open): the end offsets of a snapshot that both isolation levels agree on.

    librdkafka's ``get_watermark_offsets`` answers with the LSO for a ``read_committed``
    consumer and the high watermark for a ``read_uncommitted`` one. Transaction markers are
    written asynchronously after EndTxn returns, hence the wait.
    """
    from confluent_kafka import Consumer, TopicPartition

    def consumer(isolation: str) -> Any:
        return Consumer({"bootstrap.servers": bootstrap, "group.id": "offsetlake-oracle-unused",
                         "isolation.level": isolation, "enable.auto.commit": False})

    hw_reader, lso_reader = consumer("read_uncommitted"), consumer("read_committed")
    try:
        deadline = time.monotonic() + timeout
        while True:
            high = {p: hw_reader.get_watermark_offsets(TopicPartition(OFFSETS_TOPIC, p), timeout=10)[1]
                    for p in partitions}
            stable = {p: lso_reader.get_watermark_offsets(TopicPartition(OFFSETS_TOPIC, p), timeout=10)[1]
                      for p in partitions}
            if high == stable:
                return high
            if time.monotonic() > deadline:
                raise TimeoutError(f"{OFFSETS_TOPIC}: high watermarks {high} vs last stable offsets {stable}")
            time.sleep(0.2)
    finally:
        hw_reader.close()
        lso_reader.close()


def read_records(bootstrap: str, ends: dict[int, int], isolation: str, *,
                 timeout: float = 60.0) -> dict[Position, RawRecord]:
    """Every record below ``ends[p]`` in each partition, as a consumer with ``isolation``
    sees it (aborted transactional records only with ``read_uncommitted``; never control
    records). Assigned explicitly: no group, no commits, nothing written to the topic."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "offsetlake-oracle-unused",  # librdkafka wants one; assign() never joins it
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "isolation.level": isolation,
        "fetch.max.bytes": 8 * 1024 * 1024,
    })
    records: dict[Position, RawRecord] = {}
    pending = {p for p, end in ends.items() if end > 0}
    try:
        consumer.assign([TopicPartition(OFFSETS_TOPIC, p, OFFSET_BEGINNING) for p in sorted(pending)])
        deadline = time.monotonic() + timeout
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"reading {OFFSETS_TOPIC} ({isolation}): partitions {sorted(pending)} "
                                   f"not read up to {ends} in {timeout}s")
            for message in consumer.consume(num_messages=500, timeout=0.5):
                error = message.error()
                p, o = message.partition(), message.offset()
                assert p is not None and o is not None
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        # End of the partition (the LSO for read_committed): after
                        # stable_end_offsets, at or past the snapshot's end.
                        if o >= ends[p]:
                            pending.discard(p)
                        continue
                    raise KafkaException(error)
                if o < ends[p]:
                    records[(p, o)] = RawRecord(p, o, message.key(), message.value())
                else:
                    pending.discard(p)
    finally:
        consumer.close()
    return records


# -- ConsoleConsumer with Kafka's formatters ----------------------------------------------------


def console_formatter(bootstrap: str, partition: int, formatter: str, *, max_messages: int,
                      isolation: str, timeout_ms: int = 60000) -> list[dict[str, Any]]:
    """The JSON objects ``formatter`` prints for the first ``max_messages`` records of one
    partition. ``--partition`` puts the console consumer in assign mode: without it, it
    would join a group and write that group's records into ``__consumer_offsets``.
    ``--max-messages`` counts every record consumed, printed or not (the formatters skip
    the types they do not handle), so it bounds the read to a known snapshot."""
    out = run_kafka_tool("org.apache.kafka.tools.consumer.ConsoleConsumer", [
        "--bootstrap-server", bootstrap,
        "--topic", OFFSETS_TOPIC,
        "--partition", str(partition),
        "--offset", "earliest",
        "--isolation-level", isolation,
        "--formatter", formatter,
        "--max-messages", str(max_messages),
        "--timeout-ms", str(timeout_ms),
    ])
    return split_json_stream(out)


# -- DumpLogSegments --offsets-decoder --------------------------------------------------------


@dataclass(frozen=True)
class DumpedRecord:
    """One data record as ``DumpLogSegments --offsets-decoder`` printed it.

    ``key``/``payload`` are the parsed JSON (``payload`` is the string ``"<DELETE>"`` for a
    tombstone); ``None`` when the tool printed something else (``text`` has it verbatim),
    e.g. ``Unknown record type ...`` or ``Error at offset ...``."""

    partition: int
    offset: int
    key: dict[str, Any] | None
    payload: dict[str, Any] | str | None
    text: str
    transactional: bool
    producer_id: int


@dataclass(frozen=True)
class DumpedMarker:
    """A transaction marker (control record): ``COMMIT`` or ``ABORT``."""

    partition: int
    offset: int
    kind: str
    producer_id: int


@dataclass
class DumpedLog:
    records: dict[Position, DumpedRecord]
    markers: dict[Position, DumpedMarker]
    stderr_lines: list[str]


_BATCH = re.compile(r"^baseOffset: \d+ lastOffset: \d+ .*?producerId: (-?\d+) .*?"
                    r"isTransactional: (true|false) isControl: (true|false)")
_RECORD = re.compile(r"^\| offset: (\d+) .*? headerKeys: \[[^\]]*\] (.*)$")
_MARKER = re.compile(r"^endTxnMarker: (\w+) ")
_PARTITION_DIR = re.compile(r"^" + re.escape(OFFSETS_TOPIC) + r"-(\d+)$")


def segment_files(log_dirs: Path) -> list[Path]:
    return sorted(log_dirs.glob(f"{OFFSETS_TOPIC}-*/*.log"))


def dump_log_segments(files: list[Path]) -> DumpedLog:
    """Run ``kafka.tools.DumpLogSegments --offsets-decoder`` once over ``files`` and parse it.

    Output per record (Kafka 4.2): ``| offset: N CreateTime: ... headerKeys: [] key:
    {"type":"T","data":{...}} payload: {"version":"V","data":{...}}`` (T and V are JSON
    *strings*), ``payload: <DELETE>`` for a tombstone, and ``endTxnMarker: COMMIT|ABORT
    coordinatorEpoch: E`` for a control record. Each batch is announced by a
    ``baseOffset: ... producerId: P ... isTransactional: B isControl: B`` line.
    """
    out = run_kafka_tool("kafka.tools.DumpLogSegments",
                         ["--offsets-decoder", "--files", ",".join(str(f) for f in files)])
    decoder = json.JSONDecoder()
    log = DumpedLog({}, {}, [])
    partition: int | None = None
    producer_id, transactional, control = -1, False, False
    for line in out.splitlines():
        if line.startswith("Dumping "):
            match = _PARTITION_DIR.match(Path(line[len("Dumping "):].strip()).parent.name)
            if match is None:
                raise ValueError(f"not a {OFFSETS_TOPIC} segment: {line}")
            partition = int(match.group(1))
            continue
        batch = _BATCH.match(line)
        if batch:
            producer_id = int(batch.group(1))
            transactional, control = batch.group(2) == "true", batch.group(3) == "true"
            continue
        record = _RECORD.match(line)
        if not record:
            continue
        assert partition is not None, line
        offset, rest = int(record.group(1)), record.group(2)
        if control:
            marker = _MARKER.match(rest)
            assert marker, line
            log.markers[(partition, offset)] = DumpedMarker(partition, offset, marker.group(1), producer_id)
            continue
        key: dict[str, Any] | None = None
        payload: dict[str, Any] | str | None = None
        if rest.startswith("key: {"):
            key, pos = decoder.raw_decode(rest, len("key: "))
            tail = rest[pos:]
            if tail == " payload: <DELETE>":
                payload = "<DELETE>"
            elif tail.startswith(" payload: {"):
                payload, end = decoder.raw_decode(tail, len(" payload: "))
                assert end == len(tail), line
        log.records[(partition, offset)] = DumpedRecord(partition, offset, key, payload, rest, transactional,
                                                        producer_id)
    return log
