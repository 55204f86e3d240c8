"""Benchmark: decoding group records (GroupMetadata and the KIP-848 records) per record,
the table-driven path (``decoders.records._decode_generic``, what ``decode_record`` ran
before the generated readers and still runs for malformed records) beside the generated readers
(``decoders.records._decode_generated``, :mod:`decoders.readers`, what ``decode_record``
runs first now).

    .venv/bin/python bench/group_records.py              # about 15 s
    .venv/bin/python bench/group_records.py --seconds 0.5

Cases:

* small: GroupMetadata v3 with 3 members, a few partitions each; one group on the range
  assignor, one on cooperative-sticky (user data = the generation int32, subscription v3
  with owned partitions); the figure is the mean over the two records;
* big: GroupMetadata v3, cooperative-sticky, 200 members subscribed to 20 topics of 50
  partitions, 1,000 partitions assigned (5 per member, also listed as owned);
* kip848: ConsumerGroupMetadata (3), ConsumerGroupMemberMetadata (5),
  ConsumerGroupTargetAssignmentMetadata (6), ConsumerGroupTargetAssignmentMember (7) and
  ConsumerGroupCurrentMemberAssignment (8, with 4.3's AssignmentEpochs); mean over the five.

Each case is timed with the best of several repeats (``timeit``-style, to dampen the noise
of a shared 2-core machine); the output of both paths is checked equal before timing.
Peak memory is tracemalloc's peak while decoding each case once with each path (tracemalloc
is off while timing).

The cases repeat, as a topic's records do: a ``[]string`` field's generated reader
remembers the last list it read (the topics every member of a group subscribes to), so
consecutive members — and in the kip848 case, the same member record read again — reuse
it. Within the big record that is 199 of 200 subscriptions, whatever the repetition.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.results import add_results_argument, start, write_result  # noqa: E402
from decoders import encode_assignment, encode_record, encode_subscription  # noqa: E402
from decoders.records import _decode_generated, _decode_generic  # noqa: E402
from decoders.sticky_user_data import encode_sticky_user_data  # noqa: E402
from decoders.wire import Uuid  # noqa: E402

Record = tuple[bytes, bytes]


def _member(group: str, m: int, topics: list[str], assigned: list[tuple[str, list[int]]], protocol: str,
            generation: int) -> dict[str, Any]:
    owned = [{"topic": t, "partitions": ps} for t, ps in assigned] if protocol == "cooperative-sticky" else []
    user_data = encode_sticky_user_data({"previous_assignment": None, "generation": generation}) \
        if protocol == "cooperative-sticky" else None
    subscription = encode_subscription({"topics": topics, "user_data": user_data, "owned_partitions": owned,
                                        "generation_id": generation, "rack_id": f"rack-{m % 3}"}, 3)
    assignment = encode_assignment({"partitions": [{"topic": t, "partitions": ps} for t, ps in assigned],
                                    "user_data": None}, 3)
    return {
        "member_id": f"consumer-{group}-{m}-2f0c1a7e-5b7d-4a59-9a43-6f1c0b2d{m:04d}",
        "group_instance_id": None, "client_id": f"consumer-{group}-{m}", "client_host": f"/10.0.{m // 250}.{m % 250}",
        "rebalance_timeout": 300_000, "session_timeout": 45_000,
        "subscription_raw": subscription, "assignment_raw": assignment,
    }


def group_metadata(group: str, protocol: str, members: int, topics: int, partitions_per_topic: int,
                   per_member: int) -> Record:
    """A GroupMetadata v3 record; partitions are dealt out ``per_member`` at a time, topic by topic."""
    names = [f"orders.{group}.topic-{t:02d}" for t in range(topics)]
    slots = [(names[t], p) for t in range(topics) for p in range(partitions_per_topic)]
    generation = 17
    member_dicts = []
    for m in range(members):
        mine = slots[m * per_member:(m + 1) * per_member]
        assigned: dict[str, list[int]] = {}
        for topic, p in mine:
            assigned.setdefault(topic, []).append(p)
        member_dicts.append(_member(group, m, names, list(assigned.items()), protocol, generation))
    value = {"protocol_type": "consumer", "generation": generation, "protocol": protocol,
             "leader": member_dicts[0]["member_id"], "current_state_timestamp": 1_700_000_000_000,
             "members": member_dicts}
    key, value_bytes = encode_record("group_metadata", {"group": group}, value, 3)
    assert value_bytes is not None
    return key, value_bytes


def kip848_records() -> list[Record]:
    topic_ids = [Uuid(bytes([t]) * 16) for t in range(1, 4)]
    member = "kip848-member-6b1f7f42-9d1c-4f5e-8f7e-1a2b3c4d5e6f"
    records = [
        encode_record(3, {"group_id": "payments"}, {"epoch": 42, "metadata_hash": 0x1234_5678_9ABC}),
        encode_record(5, {"group_id": "payments", "member_id": member}, {
            "instance_id": None, "rack_id": "rack-1", "client_id": "payments-consumer-1",
            "client_host": "/10.0.0.7", "subscribed_topic_names": ["payments", "refunds", "chargebacks"],
            "subscribed_topic_regex": None, "rebalance_timeout_ms": 300_000, "server_assignor": "uniform",
            "classic_member_metadata": None}),
        encode_record(6, {"group_id": "payments"}, {"assignment_epoch": 42, "assignment_timestamp": 1_700_000_000_123}),
        encode_record(7, {"group_id": "payments", "member_id": member}, {
            "topic_partitions": [{"topic_id": tid, "partitions": list(range(t, 24, 3))}
                                 for t, tid in enumerate(topic_ids)]}),
        encode_record(8, {"group_id": "payments", "member_id": member}, {
            "member_epoch": 42, "previous_member_epoch": 41, "state": 0,
            "assigned_partitions": [{"topic_id": tid, "partitions": list(range(t, 24, 3)),
                                     "assignment_epochs": [42] * 8} for t, tid in enumerate(topic_ids)],
            "partitions_pending_revocation": []}),
    ]
    return [(k, v) for k, v in records if v is not None]


def per_record_seconds(decode: Callable[[int, bytes, bytes], Any], records: list[Record], budget: float) -> float:
    """Best-of-repeats seconds per record, spending about ``budget`` seconds."""
    prepared = [(int.from_bytes(k[:2], "big", signed=True), k, v) for k, v in records]

    def one_pass() -> float:
        started = time.perf_counter()
        for record_type, key, value in prepared:
            decode(record_type, key, value)
        return time.perf_counter() - started

    first = one_pass()
    loops = max(1, int(budget / 5 / max(first, 1e-7)))
    best = first
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(loops):
            one_pass()
        best = min(best, (time.perf_counter() - started) / loops)
    return best / len(records)


def peak_kib(decode: Callable[[int, bytes, bytes], Any], records: list[Record]) -> float:
    tracemalloc.start()
    tracemalloc.reset_peak()
    for key, value in records:
        decode(int.from_bytes(key[:2], "big", signed=True), key, value)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1024


def generated(record_type: int, key: bytes, value: bytes) -> Any:
    record = _decode_generated(record_type, key, value)
    assert record is not None, "the generated path handed over to the table-driven one"
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=1.5, help="time budget per case and path")
    add_results_argument(parser)
    args = parser.parse_args()
    run = start("group_records", args)

    cases = {
        "small": [group_metadata("billing", "range", 3, 2, 6, 4),
                  group_metadata("shipping", "cooperative-sticky", 3, 3, 4, 4)],
        "big": [group_metadata("analytics", "cooperative-sticky", 200, 20, 50, 5)],
        "kip848": kip848_records(),
    }
    print(f"group records benchmark: Python {sys.version.split()[0]}, pid {os.getpid()}, "
          f"load average before {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    speedups: dict[str, float] = {}
    generated_us: dict[str, float] = {}
    table_us: dict[str, float] = {}
    for name, records in cases.items():
        for key, value in records:
            record_type = int.from_bytes(key[:2], "big", signed=True)
            assert generated(record_type, key, value) == _decode_generic(record_type, key, value)
        sizes = ", ".join(f"{len(k) + len(v):,}" for k, v in records)
        table = per_record_seconds(_decode_generic, records, args.seconds)
        fast = per_record_seconds(generated, records, args.seconds)
        speedups[name] = table / fast
        generated_us[name], table_us[name] = round(fast * 1e6, 3), round(table * 1e6, 3)
        print(f"\n{name}: {len(records)} record(s) of {sizes} bytes")
        print(f"  table-driven (_decode_generic)  {table * 1e6:10.1f} µs/record  "
              f"peak {peak_kib(_decode_generic, records):8.1f} KiB")
        print(f"  generated (_decode_generated)   {fast * 1e6:10.1f} µs/record  "
              f"peak {peak_kib(generated, records):8.1f} KiB")
        print(f"  speed-up                        {speedups[name]:10.1f}x")
    load = os.getloadavg()
    print(f"\nprocess peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB; "
          f"load average after {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (2 cores shared with other work)")
    line = (f"group records: generated/table-driven speed-up small {speedups['small']:.1f}x, "
            f"big {speedups['big']:.1f}x, kip848 {speedups['kip848']:.1f}x")
    write_result(run, {"generated_us_per_record": generated_us,
                       "speed_up": {name: round(x, 2) for name, x in speedups.items()}},
                 {"table_driven_us_per_record": table_us}, line)
    print(line)


if __name__ == "__main__":
    main()
