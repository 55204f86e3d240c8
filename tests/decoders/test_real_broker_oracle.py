"""Our decoders against Kafka's own decoders, on records a REAL broker wrote.

The session broker (Kafka 4.2.1, KRaft) gets real confluent-kafka traffic: classic groups with
the range, roundrobin and cooperative-sticky assignors, a static group (``group.instance.id``),
a KIP-848 group (``group.protocol=consumer``), a transactional producer that commits offsets
and one that aborts, an OffsetDelete (Kafka's ConsumerGroupCommand) and two DeleteGroups (the
roundrobin group and the KIP-848 group). Beyond the issue's list, for coverage: a KIP-848 group
that a classic member joins and that the broker then converts back to a classic group, and a
KIP-848 member with a regex subscription. Then every record of ``__consumer_offsets`` — ours and
those of every other test sharing the broker — is decoded by us and by Kafka, from the jars
the broker runs:

* ``kafka.tools.DumpLogSegments --offsets-decoder`` on the partitions' segment files: every
  record type, aborted transactional records included; compared with a ``read_uncommitted``
  read, record by record at the same (partition, offset).
* ``ConsoleConsumer`` with ``OffsetsMessageFormatter`` and ``GroupMetadataMessageFormatter``,
  ``--isolation-level read_committed``, one run per partition and formatter; compared with a
  ``read_committed`` read, in order (the formatters print no offsets).

Each of our ``DecodedRecord`` s is rendered in Kafka's JSON conventions by :func:`kafka_json`
(driven by the layout tables: camelCase schema names, tagged fields only when not at their
default, bytes in base64, uuids in base64url) and compared field by field. Zero disagreements.
"""

from __future__ import annotations

import base64
import struct
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest

from broker import workload
from broker.embedded import EmbeddedBroker
from decoders import DecodedRecord, DecodeError, UnknownRecord, decode_record
from decoders.consumer_protocol import ASSIGNMENT, HIGHEST_VERSION, SUBSCRIPTION
from decoders.group_metadata import MEMBER_METADATA
from decoders.layout import BY_TYPE_ID
from decoders.spec import ArrayOf, FieldSpec, FieldType, StructSpec
from decoders.wire import Uuid
from tests.decoders import kafka_tools
from tests.decoders.kafka_tools import (
    GROUP_METADATA_FORMATTER,
    OFFSETS_FORMATTER,
    DumpedLog,
    Position,
    RawRecord,
)

pytestmark = pytest.mark.broker

TOPIC_PARTITIONS = 4
MESSAGES = 40

# Record types each console formatter prints: Kafka 4.1+ ``CoordinatorRecordMessageFormatter``
# skips null keys and every type its ``isRecordTypeAllowed`` rejects (OffsetsMessageFormatter:
# OFFSET_COMMIT and LEGACY_OFFSET_COMMIT; GroupMetadataMessageFormatter: GROUP_METADATA).
FORMATTER_TYPES = {OFFSETS_FORMATTER: frozenset({0, 1}), GROUP_METADATA_FORMATTER: frozenset({2})}


# == the workload ===============================================================================


@dataclass(frozen=True)
class Workload:
    topic: str
    groups: dict[str, str]  # role -> group id
    seconds: float

    def role_of(self, group_id: str) -> str | None:
        return next((role for role, g in self.groups.items() if g == group_id), None)


CLASSIC_ROLES = {"range": "range", "roundrobin": "roundrobin", "cooperative-sticky": "cooperative-sticky"}
ROLES = (*CLASSIC_ROLES, "static", "kip848", "txn-commit", "txn-abort", "mixed", "regex")


def _retry(action: Callable[[], None], seconds: float = 30.0) -> None:
    """Group admin calls right after the members left may still meet a non-empty group
    (e.g. a member fenced only at its session timeout): retry until the deadline."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            action()
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _poll_until(consumers: list[Any], done: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {seconds}s")
        for consumer in consumers:
            message = consumer.poll(0.1)
            if message is not None and message.error() is not None and not message.error().retriable():
                raise RuntimeError(f"{what}: {message.error()}")


def _consumer(client: dict[str, str], group_id: str, protocol: str) -> Any:
    from confluent_kafka import Consumer

    conf: dict[str, Any] = {**client, "group.id": group_id, "client.id": f"{group_id}-{protocol}",
                            "auto.offset.reset": "earliest", "enable.auto.commit": False, "group.protocol": protocol}
    if protocol == "classic":
        conf.update({"partition.assignment.strategy": "range", "session.timeout.ms": 6000,
                     "heartbeat.interval.ms": 500})
    return Consumer(conf)


def run_mixed_protocol_group(client: dict[str, str], topic: str, group_id: str) -> None:
    """Beyond the issue's list, for coverage: a KIP-848 group joined by a *classic* member
    (its T=5 record carries the tagged ``ClassicMemberMetadata`` with subscription bytes),
    then the consumer-protocol member leaves and the broker converts the group back to a
    classic one (``group.consumer.migration.policy`` defaults to bidirectional): tombstones
    for the KIP-848 types and a T=2 record whose assignment bytes the *broker* serialized."""
    modern = _consumer(client, group_id, "consumer")
    classic = _consumer(client, group_id, "classic")
    open_ = [modern, classic]
    try:
        modern.subscribe([topic])
        _poll_until([modern], lambda: bool(modern.assignment()), 30, f"{group_id}: KIP-848 member assigned")
        classic.subscribe([topic])
        _poll_until([modern, classic], lambda: bool(classic.assignment()) and
                    len(modern.assignment()) + len(classic.assignment()) == TOPIC_PARTITIONS,
                    30, f"{group_id}: partitions shared with the classic member")
        open_.remove(modern)
        modern.close()
        _poll_until([classic], lambda: len(classic.assignment()) == TOPIC_PARTITIONS, 30,
                    f"{group_id}: classic member owns everything after the downgrade")
    finally:
        for consumer in open_:
            consumer.close()


def run_regex_group(client: dict[str, str], topic: str, group_id: str) -> None:
    """Beyond the issue's list, for coverage: a KIP-848 member subscribed to a regex, which
    the broker resolves (T=16 ``ConsumerGroupRegularExpression``; a tombstone when it leaves)."""
    consumer = _consumer(client, group_id, "consumer")
    try:
        consumer.subscribe([f"^{topic}$"])
        _poll_until([consumer], lambda: len(consumer.assignment()) == TOPIC_PARTITIONS, 30,
                    f"{group_id}: regex resolved and assigned")
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def traffic(kafka_broker: EmbeddedBroker) -> Workload:
    start = time.monotonic()
    suffix = uuid.uuid4().hex[:8]
    client = {"bootstrap.servers": kafka_broker.bootstrap_servers}
    topic = f"oracle-{suffix}"
    groups = {role: f"oracle-{role}-{suffix}" for role in ROLES}
    workload.create_topic(client, topic, TOPIC_PARTITIONS)
    workload.produce_messages(client, topic, MESSAGES, TOPIC_PARTITIONS)

    members: dict[str, dict[str, Any]] = {
        **{role: {"assignor": assignor} for role, assignor in CLASSIC_ROLES.items()},
        "static": {"assignor": "range", "instance_ids": [f"static-{suffix}-a", f"static-{suffix}-b"]},
        "kip848": {"protocol": "consumer"},
    }
    with ThreadPoolExecutor(len(members) + 2) as pool:
        runs: list[Future[Any]] = [
            pool.submit(workload.run_members, client, topic, groups[role], MESSAGES, members=2, **kw)
            for role, kw in members.items()
        ]
        runs.append(pool.submit(run_mixed_protocol_group, client, topic, groups["mixed"]))
        runs.append(pool.submit(run_regex_group, client, topic, groups["regex"]))
        for run in runs:
            run.result()

    # All dynamic members have left (close() sends LeaveGroup / a leave heartbeat), so the
    # range, roundrobin and KIP-848 groups are Empty: deletable, and so are their offsets.
    steps: list[Callable[[], None]] = [
        lambda: workload.commit_offsets_in_transaction(client, groups["txn-commit"], topic, {0: 5, 1: 6},
                                                       transactional_id=f"oracle-commit-{suffix}", abort=False),
        lambda: workload.commit_offsets_in_transaction(client, groups["txn-abort"], topic, {0: 7},
                                                       transactional_id=f"oracle-abort-{suffix}", abort=True),
        lambda: _retry(lambda: workload.delete_offsets(kafka_broker.bootstrap_servers, groups["range"], topic,
                                                       [0, 1])),
        lambda: _retry(lambda: workload.delete_group(client, groups["roundrobin"])),
        lambda: _retry(lambda: workload.delete_group(client, groups["kip848"])),
    ]
    with ThreadPoolExecutor(len(steps)) as pool:
        for future in [pool.submit(step) for step in steps]:
            future.result()
    return Workload(topic, groups, time.monotonic() - start)


# == what the broker wrote, read four ways =======================================================


@dataclass
class Observed:
    ends: dict[int, int]
    uncommitted: dict[Position, RawRecord]  # read_uncommitted: what DumpLogSegments shows
    committed: dict[Position, RawRecord]  # read_committed: what the console consumer shows
    dump: DumpedLog
    console: dict[tuple[str, int], list[dict[str, Any]]]  # (formatter, partition) -> printed objects
    seconds: float


@pytest.fixture(scope="module")
def observed(kafka_broker: EmbeddedBroker, traffic: Workload) -> Observed:
    start = time.monotonic()
    bootstrap = kafka_broker.bootstrap_servers
    # One snapshot for every reader: no transaction open, and nothing past these offsets is
    # looked at (other groups may keep writing, e.g. static members expiring).
    ends = kafka_tools.stable_end_offsets(bootstrap, kafka_tools.offsets_partitions(bootstrap))
    uncommitted = kafka_tools.read_records(bootstrap, ends, "read_uncommitted")
    committed = kafka_tools.read_records(bootstrap, ends, "read_committed")

    files = kafka_tools.segment_files(kafka_broker.log_dirs)
    assert files, f"no __consumer_offsets segments under {kafka_broker.log_dirs}"
    with ThreadPoolExecutor(3) as pool:  # at most 7 JVMs, on a 2-core machine
        dump = pool.submit(kafka_tools.dump_log_segments, files)
        console = {}
        for formatter, types in FORMATTER_TYPES.items():
            for p in sorted(ends):
                in_partition = [raw for (rp, _), raw in committed.items() if rp == p]
                # A partition without a record this formatter prints needs no JVM.
                if any(record_type_and_version(raw)[0] in types for raw in in_partition):
                    console[(formatter, p)] = pool.submit(
                        kafka_tools.console_formatter, bootstrap, p, formatter,
                        max_messages=len(in_partition), isolation="read_committed")
        result = Observed(ends, uncommitted, committed, dump.result(),
                          {k: f.result() for k, f in console.items()}, 0.0)
    # DumpLogSegments read the files after the snapshot: drop what came later.
    result.dump.records = {pos: r for pos, r in result.dump.records.items() if pos[1] < ends[pos[0]]}
    result.dump.markers = {pos: m for pos, m in result.dump.markers.items() if pos[1] < ends[pos[0]]}
    result.seconds = time.monotonic() - start
    return result


# == our records in Kafka's JSON conventions ======================================================

MISSING = "<missing>"


def camel(kafka_name: str) -> str:
    """Kafka's JSON converters name a field ``FieldSpec.camelCaseName()``: the schema name
    with its first letter lower-cased (``GroupId`` -> ``groupId``, ``leaderEpoch`` stays)."""
    return kafka_name[:1].lower() + kafka_name[1:]


def is_default(f: FieldSpec, item: Any) -> bool:
    """``generateNonDefaultValueCheck``: a tagged field is written (to the wire and to JSON)
    only when it differs from its default. A null differs from a non-null default (the
    ``ClassicMemberMetadata`` case: default = an empty struct, so a null is printed)."""
    if f.default is None or item is None:
        return item is None and f.default is None
    return bool(item == f.default)


def kafka_json(spec: StructSpec, value: dict[str, Any], version: int, *, decode_consumer_protocol: bool) -> Any:
    """``<Struct>JsonConverter.write(value, version)`` for one of our decoded dicts.

    ``decode_consumer_protocol``: render GroupMetadataValue members as DumpLogSegments does
    (see :func:`_member_blob_json`); otherwise their blobs stay base64 bytes, as the console
    ``GroupMetadataMessageFormatter`` prints them.
    """
    out: dict[str, Any] = {}
    for f in spec.fields:
        if version not in f.versions:
            continue
        item = value.get(f.name, MISSING)
        if item is not MISSING and f.is_tagged_in(version) and is_default(f, item):
            continue
        if item is MISSING:
            out[camel(f.kafka_name)] = MISSING
        elif spec is MEMBER_METADATA and decode_consumer_protocol and f.name in ("subscription_raw",
                                                                                 "assignment_raw"):
            out[camel(f.kafka_name)] = _member_blob_json(f, value)
        else:
            out[camel(f.kafka_name)] = _json_value(f.type, item, version, decode_consumer_protocol)
    return out


def _json_value(type_: FieldType, item: Any, version: int, decode_consumer_protocol: bool) -> Any:
    if item is None:
        return None
    if isinstance(type_, StructSpec):
        return kafka_json(type_, item, version, decode_consumer_protocol=decode_consumer_protocol)
    if isinstance(type_, ArrayOf):
        return [_json_value(type_.element, x, version, decode_consumer_protocol) for x in item]
    if type_ == "uuid":
        return str(Uuid(item))  # Uuid.toString(): base64url without padding
    if type_ == "bytes":
        return base64.b64encode(item).decode("ascii")  # Jackson's BinaryNode: standard base64
    return item


def _member_blob_json(f: FieldSpec, member: dict[str, Any]) -> Any:
    """``DumpLogSegments``' offsets parser (``prepareGroupMetadataValue`` in the Java port of
    Kafka 4.3; the Scala tool of 4.2.1 prints the same here): when the group's
    ``protocolType`` is ``"consumer"``, each member's ``subscription``/``assignment`` bytes are
    read as ``ConsumerProtocolSubscription``/``Assignment`` at the version in their first two
    bytes and replaced by ``<...>JsonConverter.write(data, thatVersion)``; when reading fails
    (e.g. the empty assignment bytes of a member the leader gave nothing) the exception is
    swallowed and the base64 bytes stay.

    Ours: the decoder fills ``subscription``/``assignment`` under the same protocol-type rule
    and leaves them ``None`` for empty or unparsable bytes; ``version`` and
    ``sticky_user_data`` are our own additions, not fields of those messages.
    """
    name = f.name.removesuffix("_raw")
    decoded = member.get(name)
    if decoded is None:
        return base64.b64encode(member[f.name]).decode("ascii")
    spec = SUBSCRIPTION if name == "subscription" else ASSIGNMENT
    return kafka_json(spec, decoded, min(decoded["version"], HIGHEST_VERSION), decode_consumer_protocol=False)


def ours(key: bytes | None, value: bytes | None, *, decode_consumer_protocol: bool) -> tuple[Any, Any, Any]:
    """(record type, key data, value) of our decoding, in Kafka's JSON conventions; value is
    ``None`` for a tombstone, else (version, data). Failures become a descriptive string."""
    if key is None:
        return "<null key>", None, None
    try:
        record = decode_record(key, value)
    except DecodeError as exc:
        return f"DecodeError: {exc}", None, None
    if isinstance(record, UnknownRecord):
        return f"UnknownRecord type {record.record_type}", None, None
    assert isinstance(record, DecodedRecord)
    spec = BY_TYPE_ID[record.key_version]
    key_json = kafka_json(spec.key, record.key, 0, decode_consumer_protocol=False)
    if record.value is None:
        return record.key_version, key_json, None
    assert record.value_version is not None
    data = kafka_json(spec.value, record.value, record.value_version, decode_consumer_protocol=decode_consumer_protocol)
    return record.key_version, key_json, (record.value_version, data)


def ours_as_dump(raw: RawRecord) -> dict[str, Any]:
    """DumpLogSegments' envelope: ``{"key": {"type": "T", ...}, "payload": {"version": "V",
    ...} | "<DELETE>"}`` — T and V as JSON *strings* (``new TextNode(String.valueOf(..))``)."""
    type_, key_json, value = ours(raw.key, raw.value, decode_consumer_protocol=True)
    if key_json is None:
        return {"error": type_}
    payload: Any = "<DELETE>" if value is None else {"version": str(value[0]), "data": value[1]}
    return {"key": {"type": str(type_), "data": key_json}, "payload": payload}


def ours_as_console(raw: RawRecord) -> dict[str, Any]:
    """The console formatters' envelope: ``{"key": {"type": T, "data": ...}, "value":
    {"version": V, "data": ...} | null}`` with T and V as JSON numbers."""
    type_, key_json, value = ours(raw.key, raw.value, decode_consumer_protocol=False)
    if key_json is None:
        return {"error": type_}
    return {"key": {"type": type_, "data": key_json},
            "value": None if value is None else {"version": value[0], "data": value[1]}}


def diff(mine: Any, theirs: Any, path: str, out: list[tuple[str, Any, Any]]) -> None:
    """Field-by-field differences as (path, ours, Kafka's); types must match too (1 != "1")."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for k in list(mine) + [k for k in theirs if k not in mine]:
            diff(mine.get(k, MISSING), theirs.get(k, MISSING), f"{path}.{k}" if path else k, out)
    elif isinstance(mine, list) and isinstance(theirs, list):
        if len(mine) != len(theirs):
            out.append((f"{path} (length {len(mine)} vs {len(theirs)})", mine, theirs))
        else:
            for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
                diff(a, b, f"{path}[{i}]", out)
    elif type(mine) is not type(theirs) or mine != theirs:
        out.append((path, mine, theirs))


def record_type_and_version(raw: RawRecord) -> tuple[int | None, int | None]:
    """(key int16, value int16 or None for a tombstone), read straight off the bytes."""
    key_type = struct.unpack_from(">h", raw.key)[0] if raw.key is not None and len(raw.key) >= 2 else None
    version = struct.unpack_from(">h", raw.value)[0] if raw.value is not None and len(raw.value) >= 2 else None
    return key_type, version


def _sort_key(pair: tuple[int | None, int | None]) -> tuple[int, int]:
    return (-1 if pair[0] is None else pair[0], -1 if pair[1] is None else pair[1])


def _report(title: str, lines: list[str]) -> str:
    return f"{len(lines)} {title}:\n" + "\n".join(lines)


# == the tests ====================================================================================


def test_every_record_agrees_with_dump_log_segments(observed: Observed) -> None:
    dump = observed.dump
    disagreements: list[str] = []
    for pos in sorted(observed.uncommitted.keys() ^ dump.records.keys()):
        where = "only in the read_uncommitted read" if pos in observed.uncommitted else "only in DumpLogSegments"
        disagreements.append(f"p{pos[0]}@{pos[1]}: {where}")
    for pos in sorted(observed.uncommitted.keys() & dump.records.keys()):
        raw, theirs = observed.uncommitted[pos], dump.records[pos]
        kafka = {"key": theirs.key, "payload": theirs.payload} if theirs.key is not None else {"error": theirs.text}
        found: list[tuple[str, Any, Any]] = []
        diff(ours_as_dump(raw), kafka, "", found)
        disagreements += [f"p{pos[0]}@{pos[1]} {path}: ours={a!r} kafka={b!r}  "
                          f"[key={raw.key.hex() if raw.key else None} "
                          f"value={raw.value.hex() if raw.value is not None else None}]"
                          for path, a, b in found]
    assert observed.uncommitted, "nothing read from __consumer_offsets"
    assert not disagreements, _report("disagreements with DumpLogSegments --offsets-decoder", disagreements)


def test_offset_and_group_records_agree_with_the_console_formatters(observed: Observed) -> None:
    disagreements = [f"p{pos[0]}@{pos[1]}: the read_committed and read_uncommitted reads differ"
                     for pos, raw in sorted(observed.committed.items()) if observed.uncommitted.get(pos) != raw]
    compared = Counter[str]()
    for formatter, types in FORMATTER_TYPES.items():
        name = formatter.rsplit(".", 1)[1]
        for p in sorted(observed.ends):
            expected = [observed.committed[pos] for pos in sorted(observed.committed) if pos[0] == p
                        and record_type_and_version(observed.committed[pos])[0] in types]
            printed = observed.console.get((formatter, p), [])
            if len(printed) != len(expected):
                disagreements.append(f"{name} p{p}: Kafka printed {len(printed)} records, "
                                     f"the read_committed read has {len(expected)} of types {sorted(types)}")
            for raw, theirs in zip(expected, printed, strict=False):
                found: list[tuple[str, Any, Any]] = []
                diff(ours_as_console(raw), theirs, "", found)
                disagreements += [f"{name} p{raw.partition}@{raw.offset} {path}: ours={a!r} kafka={b!r}"
                                  for path, a, b in found]
                compared[name] += 1
    assert compared["OffsetsMessageFormatter"] and compared["GroupMetadataMessageFormatter"], compared
    assert not disagreements, _report("disagreements with the console formatters", disagreements)


def _group_of(raw: RawRecord) -> str | None:
    record = decode_record(raw.key, raw.value) if raw.key is not None else None
    if not isinstance(record, DecodedRecord):
        return None
    return record.key.get("group", record.key.get("group_id"))


def test_the_aborted_commit_is_in_the_log_but_not_in_a_read_committed_read(
    observed: Observed, traffic: Workload
) -> None:
    by_group: dict[str, list[Position]] = {}
    for pos, raw in observed.uncommitted.items():
        by_group.setdefault(_group_of(raw) or "", []).append(pos)
    aborted = sorted(by_group.get(traffic.groups["txn-abort"], []))
    committed_txn = sorted(by_group.get(traffic.groups["txn-commit"], []))
    assert len(aborted) == 1 and len(committed_txn) == 2, (aborted, committed_txn)

    dump = observed.dump
    for positions, outcome in ((aborted, "ABORT"), (committed_txn, "COMMIT")):
        for p, o in positions:
            logged = dump.records[(p, o)]
            assert logged.transactional and logged.producer_id >= 0, logged
            marker = min((m for (mp, mo), m in dump.markers.items()
                          if mp == p and mo > o and m.producer_id == logged.producer_id),
                         key=lambda m: m.offset, default=None)
            assert marker is not None and marker.kind == outcome, (logged, marker)
            assert logged.key is not None and logged.key["type"] == "1"
    # read_committed: the aborted offset commit is filtered out, the committed one is there.
    assert not set(aborted) & observed.committed.keys()
    assert set(committed_txn) <= observed.committed.keys()
    printed_groups = {obj["key"]["data"]["group"] for (formatter, _), objs in observed.console.items()
                      if formatter == OFFSETS_FORMATTER for obj in objs}
    assert traffic.groups["txn-abort"] not in printed_groups
    assert traffic.groups["txn-commit"] in printed_groups


def test_the_workload_s_records_are_all_there(observed: Observed, traffic: Workload) -> None:
    """Checked on Kafka's own reading (DumpLogSegments), so it does not lean on our decoders."""
    seen: dict[str, set[tuple[int, int | None]]] = {}
    group_values: dict[str, list[dict[str, Any]]] = {}
    for record in observed.dump.records.values():
        if record.key is None:
            continue
        data = record.key["data"]
        role = traffic.role_of(data.get("group", data.get("groupId")))
        if role is None:
            continue
        payload = record.payload if isinstance(record.payload, dict) else None  # None: "<DELETE>"
        version = None if payload is None else int(payload["version"])
        seen.setdefault(role, set()).add((int(record.key["type"]), version))
        if record.key["type"] == "2" and payload is not None:
            group_values.setdefault(role, []).append(payload["data"])

    missing = []
    for role in (*CLASSIC_ROLES, "static"):
        if (2, 3) not in seen.get(role, set()) or not {(1, 3), (1, 4)} & seen.get(role, set()):
            missing.append(f"{role}: group metadata v3 and offset commits, saw {sorted(seen.get(role, ()), key=str)}")
    for role, assignor in {**CLASSIC_ROLES, "static": "range"}.items():
        values = [v for v in group_values.get(role, []) if v["members"]]
        if not values or any(v["protocol"] != assignor for v in values):
            missing.append(f"{role}: expected a generation with members and protocol {assignor!r}")
    if not any(m["groupInstanceId"] for v in group_values.get("static", []) for m in v["members"]):
        missing.append("static: no member with a groupInstanceId")
    mixed = [r.payload["data"] for r in observed.dump.records.values() if r.key is not None and r.key["type"] == "5"
             and r.key["data"]["groupId"] == traffic.groups["mixed"] and isinstance(r.payload, dict)]
    if not any(v["classicMemberMetadata"] for v in mixed):
        missing.append("mixed: no consumer-group member record with classicMemberMetadata")
    if not any(v["members"] for v in group_values.get("mixed", [])):
        missing.append("mixed: no classic group record with members after the downgrade")
    wanted: dict[str, set[tuple[int, int | None]]] = {
        "range": {(1, None)},  # OffsetDelete
        "roundrobin": {(1, None), (2, None)},  # DeleteGroups
        # member leave (or fencing) tombstones 8, 7, 5; DeleteGroups: offsets, 6, 4, 3
        "kip848": {(t, 0) for t in (3, 5, 6, 7, 8)} | {(t, None) for t in (1, 3, 5, 6, 7, 8)},
        "txn-commit": {(1, 4)},
        "txn-abort": {(1, 4)},
        "mixed": {(5, 0), (2, 3)} | {(t, None) for t in (3, 5, 6, 7, 8)},
        "regex": {(16, 0), (16, None)},
    }
    for role, pairs in wanted.items():
        if not pairs <= seen.get(role, set()):
            missing.append(f"{role}: missing {sorted(pairs - seen.get(role, set()), key=str)}")
    assert not missing, "\n".join(missing)


def test_record_types_and_versions_seen(observed: Observed, traffic: Workload,
                                        record_property: Callable[[str, object], None]) -> None:
    counts = Counter(record_type_and_version(raw) for raw in observed.uncommitted.values())
    names: dict[int | None, str] = {t: spec.name for t, spec in BY_TYPE_ID.items()}
    table = [f"  type {t:>2} {names.get(t, '?'):<45} value {'tombstone' if v is None else f'v{v}':<9} {n:>5}"
             for (t, v), n in sorted(counts.items(), key=lambda kv: _sort_key(kv[0]))]
    printed = Counter[str]()
    for (formatter, _), objs in observed.console.items():
        printed[formatter.rsplit(".", 1)[1]] += len(objs)
    summary = (f"(type, value version) pairs read from the real broker's __consumer_offsets "
               f"({len(observed.uncommitted)} records below {observed.ends}, "
               f"{len(observed.uncommitted) - len(observed.committed)} of them aborted; compared with "
               f"DumpLogSegments: {len(observed.uncommitted.keys() & observed.dump.records.keys())}, "
               f"with the console formatters: {dict(printed)}; workload {traffic.seconds:.1f}s, "
               f"reads + Kafka tools {observed.seconds:.1f}s):\n" + "\n".join(table))
    print("\n" + summary)
    record_property("type_versions_seen", sorted(counts.items(), key=str))
    pairs = set(counts)
    required = {(2, 3), (3, 0), (5, 0), (6, 0), (7, 0), (8, 0), (1, None), (2, None)}
    assert required <= pairs and {(1, 3), (1, 4)} & pairs, (
        f"missing {sorted(required - pairs, key=str)} / offset commit v3 or v4\n{summary}")


def test_the_spark_decode_agrees_with_the_pure_decoders_on_every_record_the_broker_wrote(
        observed: Observed, spark) -> None:  # type: ignore[no-untyped-def]
    """The Spark path (pipelines/decode.py: Kafka's classes in the JVM, the rest in Python workers)
    decodes every record of the log as the pure decoders do, which the tests above hold to Kafka's
    DumpLogSegments and formatters: so the Spark path agrees with Kafka's own tools on a real broker's
    records (issue 13). Offset commits compare flat; group records through their struct columns."""
    from pipelines.decode import GROUP_RECORD_UDF, decode_raw_records, offset_commits
    from schemas.decoded_records import NEWER_GROUP_RECORD_TYPE_IDS
    from tests.pipelines.test_decode import (
        assert_decoded_as_the_pure_decoder_does,
        expected_offset_commit,
        jvm_decoded,
        raw_frame,
    )

    records = [observed.uncommitted[pos] for pos in sorted(observed.uncommitted)]
    is_commit = [record_type_and_version(raw)[0] in (0, 1) for raw in records]
    assert any(is_commit) and not all(is_commit)
    commits = [(raw.key, raw.value) for raw, flag in zip(records, is_commit, strict=True) if flag]
    groups = [(raw.key, raw.value) for raw, flag in zip(records, is_commit, strict=True) if not flag]

    decoded = decode_raw_records(raw_frame(spark, commits))
    rows = {row["source_offset"]: row.asDict() for row in offset_commits(decoded).collect()}
    assert sorted(rows) == list(range(len(commits)))
    for i, (key, value) in enumerate(commits):
        expected = expected_offset_commit(key, value)
        assert {name: rows[i][name] for name in expected} == expected, i

    assert_decoded_as_the_pure_decoder_does(decode_raw_records(raw_frame(spark, groups)), groups)
    # The JVM (Kafka 4.3.1's classes) decodes every KIP-848 record the broker (4.2.1) wrote.
    newer = [(raw.key, raw.value) for raw in records if record_type_and_version(raw)[0] in NEWER_GROUP_RECORD_TYPE_IDS]
    assert newer and jvm_decoded(spark, GROUP_RECORD_UDF, newer) == [True] * len(newer)
