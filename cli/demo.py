"""``offsetlake demo``: the main job end to end on an embedded broker (what ``make demo`` calls)."""

from __future__ import annotations

import argparse
import sys

from cli import argument_types
from cli.errors import CommandError, reported_as_command_errors
from cli.settings_arg import settings_from

EXIT_VALIDATION_FAILED = 1


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo", help="run offsetlake end to end on an embedded broker with scripted consumer groups",
        description=(
            "Start an embedded Kafka broker and run a scripted workload of real consumer groups "
            "(confluent-kafka): a range group scaling out 1->2->3, a member killed with SIGKILL (noticed at "
            "its session timeout), a graceful leave (LeaveGroup), a static member restarted within its "
            "session timeout (no rebalance), a cooperative-sticky group, a KIP-848 group "
            "(group.protocol=consumer) and a consumer that stops reading while production goes on. Then "
            "take end-offset snapshots around a second round of messages, ingest __consumer_offsets once "
            "into bronze and silver, refresh gold and consumer lag, validate reference scenarios "
            "(conf/scenarios/) in the scratch warehouse <warehouse>/_validation, and print per group what "
            "gold shows (generations, rebalances with likely causes, current members and assignment, lag "
            "and Burrow status) and how to query the tables. Progress goes to stderr, the summary to stdout."
        ),
        epilog=(
            "The demo owns its warehouse: it empties a warehouse an earlier demo wrote (marked by a "
            ".offsetlake-demo file) and refuses any other non-empty directory. Exit status 1 if the "
            "validation finds differences or a step fails (one line naming the step)."
        ),
    )
    parser.add_argument("--messages", type=argument_types.whole_number(1), default=400,
                        help="messages in the first round (default 400); the second round is half as many")
    parser.add_argument("--warehouse", help="the demo's warehouse directory (default: the warehouse setting)")
    parser.add_argument("--validate", nargs="*", metavar="SCENARIO", default=None,
                        help="scenarios to validate, by name in conf/scenarios/ or path (default: "
                             "range-join-leave-crash static-membership-restart); none to skip")
    parser.add_argument("--sequential", action="store_true",
                        help="run the workload's scenarios one after the other instead of side by side")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pipelines.demo import DemoError, DemoOptions, run_demo, summary_lines

    settings = settings_from(args)
    if args.warehouse:
        settings = settings.with_overrides(warehouse=args.warehouse)
    options = DemoOptions(messages=args.messages, parallel=not args.sequential)
    if args.validate is not None:
        options = DemoOptions(messages=args.messages, parallel=not args.sequential,
                              validation_scenarios=tuple(args.validate))

    def report(line: str) -> None:
        print(f"demo: {line}", file=sys.stderr, flush=True)

    try:
        with reported_as_command_errors():
            result = run_demo(settings, options, report=report)
    except DemoError as exc:
        raise CommandError(f"demo: {exc}") from exc
    print()
    print("\n".join(summary_lines(result)))
    if result.validation is not None and not result.validation.ok:
        return EXIT_VALIDATION_FAILED
    return 0
