"""Benchmark: a KIP-848 group's replay advanced from its state-store tail beside a replay from its first record.

    .venv/bin/python bench/consumer_groups.py                      # 200 groups of 500 group epochs each
    .venv/bin/python bench/consumer_groups.py --groups 50 --epochs 2000

What gold's refresh does per KIP-848 group that gained records (``pipelines/gold/consumer_groups.py``), without
Spark (the per-group work is plain Python; Spark adds the same fixed costs to both ways):

1. builds ``--groups`` groups' records as a KIP-848 coordinator writes them: at each group epoch a member joins
   (member record, group epoch, target assignments, assignment epoch, every member's current assignment) and,
   once ``--members`` are in, the longest-standing member leaves (its tombstones);
2. **state store** (since 2026-11-29): each group's ``ReplayTail`` (pickled, as the state store holds it) after
   every epoch but the last, then one write more, as the state store's processor runs it (``advance_group``):
   the tail loaded, advanced by the new write's records, dumped again, and the group's gold rows made;
3. **baseline, replay of everything** (what each refresh did before, per touched group): ``derive`` of all the
   group's records and its gold rows.

The two give the same rows (compared). Prints records/s for each, the state's size, the peak memory of the
process and the load average, and as its last line ``consumer groups: incremental/full = X.X% at N records``.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipelines.gold.consumer_groups import (  # noqa: E402
    CURRENT_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    TARGET_MEMBER,
    TARGET_METADATA,
    CurrentAssignment,
    GroupRecord,
    MemberInfo,
    _group_rows,
    advance_group,
    advance_replay,
    derive,
)

TOPIC_ID = "aHcoLvlDTvK26y2j6N5kcg"
PARTITIONS = 12


def group_writes(epochs: int, members: int) -> list[list[GroupRecord]]:
    """One group's coordinator writes (the records of one append time each), in log order."""
    writes: list[list[GroupRecord]] = []
    offset = 0
    present: list[str] = []

    def record(at: int, kind: str, **fields: object) -> GroupRecord:
        nonlocal offset
        offset += 1
        return GroupRecord(at, (0, offset), kind, **fields)  # type: ignore[arg-type]

    for epoch in range(1, epochs + 1):
        at = epoch * 10_000
        write: list[GroupRecord] = []
        if len(present) == members:
            leaving = present.pop(0)
            write += [record(at, kind, member_id=leaving, is_tombstone=True)
                      for kind in (CURRENT_ASSIGNMENT, TARGET_MEMBER, MEMBER_METADATA)]
        joining = f"member-{epoch}"
        present.append(joining)
        write.append(record(at, MEMBER_METADATA, member_id=joining, member=MemberInfo(
            client_id=f"client-{epoch}", client_host="/10.0.0.1", subscribed_topics=("orders",),
            rebalance_timeout_ms=300_000, server_assignor="uniform")))
        write.append(record(at, GROUP_METADATA, epoch=epoch, metadata_hash=7))
        share = {m: frozenset((TOPIC_ID, p) for p in range(PARTITIONS) if p % len(present) == i)
                 for i, m in enumerate(present)}
        write += [record(at, TARGET_MEMBER, member_id=m, target=share[m]) for m in present]
        write.append(record(at, TARGET_METADATA, epoch=epoch))
        write += [record(at, CURRENT_ASSIGNMENT, member_id=m, current=CurrentAssignment(epoch, assigned=share[m]))
                  for m in present]
        writes.append(write)
    return writes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=500, help="group epochs (writes) per group")
    parser.add_argument("--members", type=int, default=3, help="members a group holds before one leaves per epoch")
    args = parser.parse_args()

    histories = [group_writes(args.epochs, args.members) for _ in range(args.groups)]
    records = sum(len(write) for writes in histories for write in writes)
    print(f"set-up: {args.groups:,} groups, {args.epochs:,} epochs each, {records:,} records; "
          f"load {os.getloadavg()[0]:.2f}", flush=True)

    # The state each group's replay left after all but its last write (not timed: earlier refreshes built it).
    tails = []
    for writes in histories:
        _, tail = advance_replay(None, [r for write in writes[:-1] for r in write])
        tails.append(tail.dumps())
    state_mb = sum(len(t) for t in tails) / 1e6
    _group_rows("c", "g", derive(histories[0][0]))  # imports pandas before either is timed

    started = time.perf_counter()
    incremental_rows = []
    new_records = 0
    for writes, saved in zip(histories, tails, strict=True):
        rows, _ = advance_group("c", "g", saved, writes[-1])  # what the state store's processor runs per group
        incremental_rows.append(rows)
        new_records += len(writes[-1])
    incremental = time.perf_counter() - started

    started = time.perf_counter()
    full_rows = [_group_rows("c", "g", derive(r for write in writes for r in write)) for writes in histories]
    full = time.perf_counter() - started

    same = all(a.equals(b) for a, b in zip(incremental_rows, full_rows, strict=True))
    print(f"  state store: tail loaded, advanced, dumped   {incremental:7.2f} s  {new_records:>10,} new records  "
          f"{new_records / incremental:>10,.0f} records/s")
    print(f"  baseline: replay of every record             {full:7.2f} s  {records:>10,} records      "
          f"{records / full:>10,.0f} records/s")
    print(f"  rows the same both ways: {'yes' if same else 'NO'}; state {state_mb:,.1f} MB "
          f"({state_mb * 1e6 / args.groups / 1e3:,.0f} kB a group)")
    print(f"peak memory: python {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"consumer groups: incremental/full = {100 * incremental / full:.1f}% at {records:,} records")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
