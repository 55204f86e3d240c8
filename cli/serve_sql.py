"""``offsetlake serve-sql``: the warehouse as a HiveServer2 (Thrift) endpoint for JDBC/ODBC/PyHive clients."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from cli import argument_types
from cli.errors import CommandError, reported_as_command_errors
from cli.ingest import stop_requested_by_signals
from cli.settings_arg import settings_from

if TYPE_CHECKING:
    from pipelines.sql_views import CatalogReport


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve-sql", help="serve the warehouse's tables and dashboards views over JDBC/ODBC (Spark Thrift Server)",
        description=(
            "Start Spark's Thrift JDBC/ODBC server (HiveServer2 protocol) in one long-running Spark application, "
            "with every Delta table of the warehouse registered as layer.table and the dashboard questions as "
            "dashboards.* views, as in `offsetlake sql`. Superset (SQLAlchemy hive:// through PyHive), DBeaver "
            "or any Hive JDBC client (jdbc:hive2://HOST:PORT/default) and Grafana (through a HiveServer2 data "
            "source plugin) can then query the tables live: each query reads the latest Delta version, and "
            "tables created after start-up are registered within sql_endpoint.catalog_refresh_seconds. "
            "There is no authentication (any user name is accepted), so it listens on 127.0.0.1 unless told "
            "otherwise. When ready it prints the JDBC and SQLAlchemy URLs and how long start-up took; it runs "
            "until Ctrl-C or SIGTERM, then closes every client session and exits 0."
        ),
        epilog=(
            "Settings: [sql_endpoint] host, port (default 127.0.0.1:10000), catalog_refresh_seconds (30; 0 never), "
            "warm_up (true: run each view once before saying ready); OFFSETLAKE_SQL_ENDPOINT__PORT=10001 etc. "
            "Example: offsetlake serve-sql --port 10001, then "
            "python -c \"from pyhive import hive; c = hive.connect('127.0.0.1', 10001).cursor(); "
            "c.execute('SELECT * FROM dashboards.consumer_status_now'); print(c.fetchall())\""
        ),
    )
    parser.add_argument("--host", help="address to listen on (default: sql_endpoint.host, 127.0.0.1)")
    parser.add_argument("--port", type=argument_types.whole_number(1, 65535),
                        help="TCP port to listen on (default: sql_endpoint.port, 10000)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from conf.settings import check_sql_endpoint
    from pipelines import spark_session
    from pipelines.sql_endpoint import (
        EndpointError,
        check_port_free,
        check_warehouse,
        session_settings,
        start_sql_endpoint,
    )
    from pipelines.sql_views import error_line

    started = time.monotonic()
    settings = settings_from(args)
    overrides = {key: value for key, value in (("host", args.host), ("port", args.port)) if value is not None}
    if overrides:
        # Through the settings' own checks, so --port 70000 reads like a bad sql_endpoint.port.
        endpoint_settings = settings.sql_endpoint.model_copy(update=overrides)
        check_sql_endpoint(endpoint_settings, lambda key: f"--{key}" if key in overrides else "settings")
        settings = settings.model_copy(update={"sql_endpoint": endpoint_settings})
    host, port = settings.sql_endpoint.host, settings.sql_endpoint.port
    refresh = settings.sql_endpoint.catalog_refresh_seconds

    with stop_requested_by_signals("serve-sql: stopping (again to abort) ...") as stop:
        try:
            check_warehouse(settings)  # both before the JVM: a typo fails in a second, not after a minute
            check_port_free(host, port)
            with reported_as_command_errors():
                spark = spark_session.build_spark_session(session_settings(settings))
                session_seconds = time.monotonic() - started
                endpoint = start_sql_endpoint(spark, settings)
        except EndpointError as exc:
            raise CommandError(f"serve-sql: {exc}") from None
        try:
            total = time.monotonic() - started
            catalog = endpoint.catalog
            times = endpoint.times
            views = ", ".join(view.removeprefix("dashboards.") for view in catalog.views)
            print(f"serve-sql: ready in {total:.1f} s (Spark session {session_seconds:.1f} s, catalog "
                  f"{times.catalog:.1f} s, warm-up {times.warm_up:.1f} s, Thrift server {times.server:.1f} s): "
                  f"{len(catalog.tables)} tables and {len(catalog.views)} views of {settings.warehouse_uri}",
                  flush=True)
            print(f"  JDBC (DBeaver, beeline, any Hive JDBC driver): {endpoint.jdbc_url}")
            print(f"  SQLAlchemy (Superset, PyHive):                  {endpoint.sqlalchemy_url}")
            print(f"  views: {views}")
            print("  stop with Ctrl-C or SIGTERM", flush=True)
            _report_gaps(catalog)
            while not stop.wait(refresh or 1.0):
                try:
                    changed = endpoint.refresh_catalog() if refresh else None
                except Exception as exc:  # noqa: BLE001 - a failed refresh must not take the endpoint down
                    print(f"serve-sql: registering new tables failed, will retry: {error_line(exc)}",
                          file=sys.stderr, flush=True)
                    continue
                if changed is not None:
                    print(f"serve-sql: catalog registered again: {len(changed.tables)} tables and "
                          f"{len(changed.views)} views", file=sys.stderr, flush=True)
                    _report_gaps(changed)
        finally:
            endpoint.stop()
            spark.stop()
    print("serve-sql: stopped", file=sys.stderr, flush=True)
    return 0


def _report_gaps(catalog: CatalogReport) -> None:
    if catalog.missing_tables:
        print(f"serve-sql: not in this warehouse yet: {', '.join(catalog.missing_tables)}", file=sys.stderr)
    for name, reason in catalog.skipped_views.items():
        print(f"serve-sql: view {name} left out: {reason}", file=sys.stderr)
    sys.stderr.flush()
