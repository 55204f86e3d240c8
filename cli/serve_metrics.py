"""``offsetlake serve-metrics``: Prometheus metrics of the warehouse's consumer groups, read at each scrape.

Also where ``offsetlake run --metrics-port`` gets its endpoint (``serve_run_metrics``): the same group metrics
over the run's warehouse, and the job's health.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cli.console import say
from cli.errors import CommandError
from cli.settings_arg import settings_from

if TYPE_CHECKING:
    from prometheus_client.registry import CollectorRegistry

    from conf.settings import Settings
    from metrics.run import RunHealth
    from pipelines.main_job import CycleReport

DEFAULT_PORT = 9564


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve-metrics",
        help="serve Prometheus metrics of every consumer group (lag, Burrow status, members, rebalances) from gold",
        description=(
            "Serve the warehouse's consumer groups as Prometheus metrics at http://HOST:PORT/metrics, read from "
            "the gold tables through delta-rs at each scrape (no SparkSession): per group and partition the lag "
            "in messages and in seconds and Burrow's status at the newest end-offset snapshot, the group's "
            "status, members and state, and what only history gives: rebalances by likely cause, when the last "
            "one ended, the time members stood stopped by them, the last rebalance storm. Names and labels "
            "follow kminion's where the meaning is the same (docs/metrics.md lists every metric). One cluster: "
            "the settings' cluster_name, as the 'cluster' label. A gold table not in the warehouse yet is left "
            "out (said once at start) and served once it is there. Runs until Ctrl-C or SIGTERM. "
            "'offsetlake run --metrics-port' serves the same and the job's health."
        ),
        epilog="Example: offsetlake serve-metrics --port 9564; Grafana dashboard: conf/grafana/offsetlake.json; "
               "alerting rules: conf/prometheus/offsetlake-rules.yml",
    )
    parser.add_argument("--host", default="127.0.0.1",
                        help="the address to bind (default 127.0.0.1; no authentication, so loopback unless a "
                             "proxy guards it)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"the port (default {DEFAULT_PORT}; 0: any free one, printed)")
    parser.set_defaults(run=run)


def add_metrics_arguments(parser: argparse.ArgumentParser) -> None:
    """``run``'s --metrics-port and --metrics-host."""
    parser.add_argument("--metrics-port", type=int, metavar="PORT",
                        help="also serve Prometheus metrics at http://HOST:PORT/metrics: the job's health (cycles, "
                             "records, freshness, distance to the topic's end, last success) and every group's, as "
                             "'offsetlake serve-metrics' (docs/metrics.md); 0: any free port, printed")
    parser.add_argument("--metrics-host", default="127.0.0.1", metavar="HOST",
                        help="with --metrics-port: the address to bind (default 127.0.0.1)")


def check_port(command: str, option: str, port: int) -> None:
    if not 0 <= port <= 65535:
        raise CommandError(f"{command}: {option} must be between 0 and 65535, got {port}")


def group_registry(settings: Settings, command: str) -> tuple[CollectorRegistry, Any]:
    """A registry of the warehouse's group metrics; a table that cannot be read is said once on stderr."""
    from prometheus_client.registry import CollectorRegistry

    from metrics.groups import GroupMetrics

    registry = CollectorRegistry()
    collector = GroupMetrics(settings, on_problem=lambda message: say(command, f"{command}: {message}",
                                                                      level=logging.WARNING))
    registry.register(collector)
    return registry, collector


def listen(command: str, host: str, port: int, registry: CollectorRegistry) -> Any:
    """prometheus_client's HTTP server for ``registry`` in a daemon thread; a port in use is one line."""
    from prometheus_client import start_http_server

    try:
        server, _ = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        # The OS's reason says it all: no details for the debug log (``from None``).
        raise CommandError(f"{command}: cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return server


def missing_tables(settings: Settings) -> str | None:
    """What the metrics lack now, as one line's tail (None: every table they read is there)."""
    from metrics.groups import READS
    from pipelines.delta_tables import WarehouseUnreachable, table_exists

    try:
        absent = [spec.name for spec in READS if not table_exists(settings, spec)]
    except WarehouseUnreachable as exc:
        return f"{exc}; serving what it answers once it does"
    if not absent:
        return None
    if len(absent) == len(READS):
        return (f"no gold table in {settings.warehouse_uri} yet ('offsetlake run', or 'gold' and 'lag', make them): "
                "serving the exporter's own metrics; each table's are served once it is there")
    return f"not in the warehouse yet: {', '.join(absent)} (their metrics are served once they are there)"


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    check_port("serve-metrics", "--port", args.port)
    registry, _ = group_registry(settings, "serve-metrics")
    server = listen("serve-metrics", args.host, args.port, registry)
    host, port = server.server_address[:2]

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM (a service manager, kill) stops it as Ctrl-C does

    signal.signal(signal.SIGTERM, stop)
    missing = missing_tables(settings)
    if missing is not None:
        print(f"serve-metrics: {missing}", file=sys.stderr, flush=True)
    print(f"serve-metrics: serving {settings.warehouse_uri} (cluster {settings.cluster_name}) at "
          f"http://{host}:{port}/metrics; Ctrl-C stops", file=sys.stderr, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("serve-metrics: stopped", file=sys.stderr)
    finally:
        server.shutdown()
        server.server_close()
    return 0


@dataclass
class RunMetrics:
    """What ``run --metrics-port`` serves; ``observe`` feeds the job's health each cycle (a no-op without it)."""

    health: RunHealth | None = None
    server: Any = None

    def observe(self, report: CycleReport) -> None:
        if self.health is not None:
            self.health.observe(report)

    @property
    def url(self) -> str | None:
        return None if self.server is None else "http://{}:{}/metrics".format(*self.server.server_address[:2])

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def serve_run_metrics(args: argparse.Namespace, settings: Settings) -> RunMetrics:
    """With --metrics-port: serve the job's health and the warehouse's group metrics (the run's own cluster and
    warehouse); without: nothing to serve."""
    if args.metrics_port is None:
        return RunMetrics()
    from metrics.run import RunHealth
    from pipelines.offsets_topic_source import topic_end_offsets

    check_port("run", "--metrics-port", args.metrics_port)
    registry, _ = group_registry(settings, "run")
    health = RunHealth(settings.cluster_name, args.topic, topic_ends=lambda: topic_end_offsets(settings, args.topic))
    registry.register(health)
    metrics = RunMetrics(health, listen("run", args.metrics_host, args.metrics_port, registry))
    say("run", f"run: metrics at {metrics.url}")
    return metrics
