"""``offsetlake coordinator-partition GROUP``: which __consumer_offsets partition holds a group."""

from __future__ import annotations

import argparse

from cli import argument_types


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "coordinator-partition", help="the __consumer_offsets partition (and so the coordinator) of a group",
        description="Compute abs(GROUP.hashCode()) %% PARTITIONS with Java's String.hashCode, as Kafka's "
                    "group coordinator does (offsets.topic.num.partitions, default 50).",
    )
    parser.add_argument("group", metavar="GROUP", help="the consumer group id")
    parser.add_argument("--partitions", type=argument_types.whole_number(1), default=50,
                        help="partitions of __consumer_offsets (offsets.topic.num.partitions; default 50)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from decoders import coordinator_partition

    print(coordinator_partition(args.group, args.partitions))
    return 0
