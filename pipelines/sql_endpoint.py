"""A SQL endpoint that stays up: Spark's Thrift JDBC/ODBC server over the warehouse's tables and views.

Why: ``offsetlake sql`` starts a JVM per question (tens of seconds before the first row), and BI tools
(Superset, Grafana, DBeaver, any JDBC or ODBC client) expect a long-lived server speaking a protocol they
already know. Spark ships one: ``org.apache.spark.sql.hive.thriftserver.HiveThriftServer2`` (module
``spark-hive-thriftserver``, already among pyspark 4.1.1's jars with the Hive JDBC and Thrift jars, so no
download), which speaks HiveServer2's Thrift protocol and runs every statement as Spark SQL. It is started
here inside offsetlake's own SparkSession (``HiveThriftServer2.startWithSparkSession``, through py4j),
after ``pipelines.sql_views.register_catalog`` has put every Delta table (``layer.table``) and every
``dashboards.*`` view into the session catalog.

What the server's clients see, and why:

* **One catalog for every connection.** Each connection gets its own SparkSession
  (``SparkSQLSessionManager.openSession`` calls ``newSession()`` unless
  ``spark.sql.hive.thriftServer.singleSession`` is set), and new sessions share the application's
  ``SharedState``, whose external catalog holds the external Delta tables and the *permanent* views
  ``register_catalog`` creates. So every client sees them; temporary views would not be shared. The
  catalog stays Spark's in-memory one (no ``enableHiveSupport()``, no metastore, no Derby database on
  disk); the server's own execution-side Hive client (``HiveUtils.newClientForExecution``) keeps its
  Derby in memory. Each connection has its own SQL settings (``SET`` in one does not reach another).
* **Live tables.** A catalog table is a Delta table: each query's analysis asks ``DeltaLog.update()``
  for the latest snapshot (``spark.databricks.delta.stalenessLimit`` is 0 by default), so rows the ingest
  or a gold refresh appended since start-up are in the next query, with no re-registration.
* **New tables.** A table created after start-up (the first ``offsetlake lag`` makes
  ``gold.consumer_lag``) is not in the catalog until registered: ``SqlEndpoint.refresh_catalog`` compares
  the tables on disk with the registered ones and registers again (tables and the views that needed them)
  only when they differ; the command calls it every ``sql_endpoint.catalog_refresh_seconds``.

There is no authentication (HiveServer2's ``NONE``: any user name is accepted), hence the loopback
default for ``sql_endpoint.host``.
"""

from __future__ import annotations

import getpass
import os
import socket
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conf.settings import Settings, user_cache_dir
from pipelines.sql_views import CatalogReport, register_catalog
from schemas.catalog import TABLES

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

THRIFT_SERVER_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
LISTEN_TIMEOUT_SECONDS = 60.0


class EndpointError(RuntimeError):
    """The endpoint cannot start; the message is one line naming the setting to change."""


def session_settings(settings: Settings) -> Settings:
    """``settings`` adjusted for a session that serves HiveServer2 clients; apply before the session is built.

    Two things Hive's ``SessionState.close`` does when a client disconnects, measured here, needed changing:

    * It closes every URLClassLoader between the connection's class loader and its own
      (``JavaUtils.closeClassLoadersTo``; HIVE-22989 is the same trap in Hive). That includes Spark's
      ``MutableURLClassLoader``, which holds the jars of ``spark.jars`` (Delta, the Kafka source, the offset
      commit UDF): after the first client disconnected, Spark could no longer read Delta's class files
      (``ClosureCleaner``: "capturingClassReader is null", an INTERNAL_ERROR on the next new snapshot). So
      the same jars go on the driver's class path (``spark.driver.extraClassPath``, read when the JVM
      starts), where the application class loader, which nothing closes, loads them.
    * It builds an embedded Hive metastore client (``unCacheDataNucleusClassLoaders``) over the in-memory
      Derby database Spark configures (``HiveUtils.newTemporaryConfiguration``). With offsetlake's
      ``-Dderby.system.home=<warehouse>/derby`` Derby failed to create that database ("Directory
      <warehouse>/derby/memory:... already exists") and the metastore retried ten times, 2.5 s apart, with
      a JVM stack each time: every disconnect took 25 s. Without it the database is created once (the
      first disconnect pays for it) and later disconnects take milliseconds. ``derby.log`` still goes to the
      warehouse (``derby.stream.error.file``), not to the working directory.
    """
    from pipelines.spark_session import spark_conf

    jars = [jar for jar in spark_conf(settings)["spark.jars"].split(",") if jar]
    extra = dict(settings.spark.extra_conf)
    extra["spark.driver.extraClassPath"] = os.pathsep.join(
        [*filter(None, [extra.get("spark.driver.extraClassPath", "")]), *jars])
    extra.setdefault("spark.driver.extraJavaOptions", " ".join(
        [f"-Dderby.stream.error.file={_local_state(settings) / 'derby.log'}",
         *settings.spark.driver_java_options.split()]))
    return settings.model_copy(update={"spark": settings.spark.model_copy(update={"extra_conf": extra})})


def jdbc_url(host: str, port: int) -> str:
    """What DBeaver or any JDBC client (Hive's JDBC driver, org.apache.hive.jdbc.HiveDriver) connects to."""
    return f"jdbc:hive2://{host}:{port}/default"


def sqlalchemy_url(host: str, port: int) -> str:
    """What Superset (or any SQLAlchemy program) connects to, through PyHive's ``hive`` dialect."""
    return f"hive://{host}:{port}/default"


def tables_on_disk(settings: Settings) -> set[str]:
    """The warehouse's tables that exist as Delta tables now (no Spark: a directory with a Delta log)."""
    from pipelines.delta_tables import table_exists

    return {name for name, spec in TABLES.items() if table_exists(settings, spec)}


def _local_state(settings: Settings) -> Path:
    """Where the endpoint's local files (Derby's log) go: the warehouse if local, else the user's cache."""
    return settings.warehouse_path if settings.warehouse_is_local else \
        user_cache_dir() / "local-state" / settings.cluster_name


def check_warehouse(settings: Settings) -> None:
    """Refuse a warehouse that is not there or holds no table, before a JVM is started for nothing."""
    from pipelines.delta_tables import WarehouseUnreachable

    if settings.warehouse_is_local and not settings.warehouse_path.is_dir():
        raise EndpointError(f"warehouse {settings.warehouse_path} does not exist (setting warehouse, or "
                            "OFFSETLAKE_WAREHOUSE)")
    try:
        tables = tables_on_disk(settings)
    except WarehouseUnreachable as exc:
        raise EndpointError(str(exc)) from exc
    if not tables:
        raise EndpointError(f"warehouse {settings.warehouse_uri} holds no offsetlake table yet (setting warehouse, "
                            "or OFFSETLAKE_WAREHOUSE): point it at an ingested warehouse, or run "
                            "`offsetlake run --once`")


def check_port_free(host: str, port: int) -> None:
    """Bind ``host:port`` as the server will, and let go; one line if another process holds it.

    ``SO_REUSEADDR`` as Java's ServerSocket sets it on Linux, so a port left in TIME_WAIT by an earlier run
    counts as free, as it does for the server.
    """
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise EndpointError(f"cannot listen on {host}:{port}: {reason} (setting sql_endpoint.port or "
                            "sql_endpoint.host, or --port/--host)") from None


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def _quiet_per_statement_warnings(spark: SparkSession) -> None:
    """The server cancels each finished statement's job group on close (``SparkExecuteStatementOperation``);
    the DAGScheduler then warns "Failed to cancel job group ... Cannot find active jobs" once per statement.
    """
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
        "org.apache.spark.scheduler.DAGScheduler", jvm.org.apache.logging.log4j.Level.ERROR)


@dataclass
class StartTimes:
    """Seconds spent in each start-up step (the session's own start is the caller's)."""

    catalog: float = 0.0
    warm_up: float = 0.0
    server: float = 0.0


@dataclass
class SqlEndpoint:
    """A running Thrift server in ``spark``; ``stop()`` ends it (the session stays the caller's)."""

    spark: SparkSession
    settings: Settings
    host: str
    port: int
    catalog: CatalogReport
    times: StartTimes
    _server: Any = field(repr=False, default=None)

    @property
    def jdbc_url(self) -> str:
        return jdbc_url(self.host, self.port)

    @property
    def sqlalchemy_url(self) -> str:
        return sqlalchemy_url(self.host, self.port)

    def refresh_catalog(self) -> CatalogReport | None:
        """Register again when the tables on disk differ from the registered ones; None when they match."""
        if tables_on_disk(self.settings) == set(self.catalog.tables):
            return None
        self.catalog = register_catalog(self.spark, self.settings)
        return self.catalog

    def stop(self) -> None:
        """Close every client session and the listening socket (HiveServer2.stop)."""
        if self._server is not None:
            self._server.stop()
            self._server = None


def warm_up(spark: SparkSession, views: list[str], rows: int = 100) -> None:
    """Run each view once: the JVM compiles Spark's planning and Delta's log replay on a first query
    (seconds on a small machine), which a client's first dashboard would otherwise wait for."""
    for view in views:
        spark.table(view).limit(rows).collect()


def start_sql_endpoint(spark: SparkSession, settings: Settings, host: str | None = None,
                       port: int | None = None) -> SqlEndpoint:
    """Register the catalog, warm it up and start the Thrift server on ``host:port``; return once it listens.

    ``host``/``port`` default to ``settings.sql_endpoint``. Raises EndpointError (one line) when the port is
    taken or the server does not listen within LISTEN_TIMEOUT_SECONDS.
    """
    from py4j.protocol import Py4JJavaError

    host = settings.sql_endpoint.host if host is None else host
    port = settings.sql_endpoint.port if port is None else port
    times = StartTimes()
    started = time.monotonic()
    catalog = register_catalog(spark, settings)
    times.catalog = time.monotonic() - started
    if settings.sql_endpoint.warm_up:
        started = time.monotonic()
        warm_up(spark, catalog.views)
        times.warm_up = time.monotonic() - started

    started = time.monotonic()
    check_port_free(host, port)  # again: the catalog and the warm-up took a while
    # Each closing client session lists its "pipeout" files in Hive's local scratch directory
    # (HiveSessionImpl.cleanupPipeoutFile), by default /tmp/<user>, which nothing creates: on a machine
    # where it is missing every disconnect logged "ERROR HiveSessionImpl: Unable to access pipeout files".
    # One directory per user, kept: sessions still close (and list it) while the JVM shuts down.
    scratch_dir = os.path.join(tempfile.gettempdir(), f"offsetlake-serve-sql-{getpass.getuser()}")
    os.makedirs(scratch_dir, exist_ok=True)
    # HiveServer2 reads its settings from a HiveConf built from the session's Hadoop conf, which carries
    # the session's SQL conf (SessionState.newHadoopConf), so these reach it.
    for key, value in {
        "hive.server2.thrift.bind.host": host,
        "hive.server2.thrift.port": str(port),
        "hive.server2.transport.mode": "binary",
        # One log file per statement under /tmp/<user>/operation_logs, for clients that fetch logs: none
        # of ours does, and nothing else cleans them.
        "hive.server2.logging.operation.enabled": "false",
        "hive.exec.local.scratchdir": scratch_dir,
    }.items():
        spark.conf.set(key, value)
    _quiet_per_statement_warnings(spark)
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    thrift_server = jvm.org.apache.spark.sql.hive.thriftserver.HiveThriftServer2
    try:
        # exitOnError=False: a failure must reach us as an exception, not as System.exit of our JVM.
        server = thrift_server.startWithSparkSession(spark._jsparkSession, False)
    except Py4JJavaError as exc:
        reason = str(exc.java_exception.toString()).splitlines()[0]  # the JVM's exception, not py4j's wrapper
        raise EndpointError(f"the Thrift server did not start on {host}:{port}: {reason} "
                            "(setting sql_endpoint.port, sql_endpoint.host)") from None
    deadline = time.monotonic() + LISTEN_TIMEOUT_SECONDS
    while not _listening(host, port):
        if time.monotonic() > deadline:
            server.stop()
            raise EndpointError(f"the Thrift server did not listen on {host}:{port} within "
                                f"{LISTEN_TIMEOUT_SECONDS:.0f} s (setting sql_endpoint.port, sql_endpoint.host)")
        time.sleep(0.1)
    times.server = time.monotonic() - started
    return SqlEndpoint(spark=spark, settings=settings, host=host, port=port, catalog=catalog, times=times,
                       _server=server)
