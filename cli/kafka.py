"""``offsetlake kafka start|stop|status``: the embedded single-node KRaft broker."""

from __future__ import annotations

import argparse
from pathlib import Path

from cli import argument_types
from cli.errors import reported_as_command_errors

DEFAULT_DATA_DIR = ".offsetlake/kafka"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "kafka", help="start, stop or inspect the embedded Kafka broker",
        description="A real single-node Kafka 4.x broker (KRaft, broker+controller) on 127.0.0.1, "
                    "run from the Maven jars in .jvm/. Ports are chosen free at start.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, func, help_text in (
        ("start", run_start, "start the broker in the background; prints its bootstrap address once ready"),
        ("stop", run_stop, "stop the broker (SIGTERM, then SIGKILL after --timeout seconds)"),
        ("status", run_status, "say whether the broker is running and where"),
    ):
        action = actions.add_parser(name, help=help_text, description=help_text)
        action.add_argument("--data-dir", default=DEFAULT_DATA_DIR,
                            help=f"broker data, config and logs (default: {DEFAULT_DATA_DIR})")
        if name == "stop":
            action.add_argument("--timeout", type=argument_types.seconds(allow_zero=False), default=30.0,
                                help="seconds to wait for a clean stop")
        action.set_defaults(run=func)


def run_start(args: argparse.Namespace) -> int:
    from broker.embedded import EmbeddedBroker

    with reported_as_command_errors():
        broker = EmbeddedBroker(args.data_dir, attached=False).start()
    print(broker.bootstrap_servers)
    return 0


def run_stop(args: argparse.Namespace) -> int:
    from broker.embedded import EmbeddedBroker, read_state

    state = read_state(args.data_dir)
    if state is None:
        print(f"no broker is recorded in {Path(args.data_dir).resolve()}")
        return 0
    with reported_as_command_errors():
        EmbeddedBroker(args.data_dir).stop(timeout=args.timeout)
    print(f"stopped broker pid {state.pid} ({state.bootstrap_servers})")
    return 0


def run_status(args: argparse.Namespace) -> int:
    from broker.embedded import pid_alive, read_state

    state = read_state(args.data_dir)
    if state is None or not pid_alive(state.pid):
        print("stopped")
        return 3  # like an init script's "program is not running"
    print(f"running pid={state.pid} bootstrap={state.bootstrap_servers} log={state.log_file}")
    return 0
