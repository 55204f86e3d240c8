"""Build the one SparkSession offsetlake uses, from ``conf.settings``.

Delta and Spark's Kafka source are put on the class path with ``spark.jars``
from the Maven-resolved cache (jvm/artifacts.py) rather than
``spark.jars.packages``: no network at session start, and no second copy of a
jar pyspark already ships. Any master works by configuration alone
(``spark.master``), since nothing here assumes local mode except defaults.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import re
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conf.settings import Settings, user_cache_dir
from jvm.artifacts import offset_commit_udf_jar, spark_extra_jars
from pipelines.storage import join

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Spark's JVM logging (``spark.driver.extraJavaOptions``).
LOG4J2_PROPERTIES = Path(__file__).resolve().parent.parent / "conf" / "log4j2.properties"


def spark_conf(settings: Settings) -> dict[str, str]:
    """Every Spark setting offsetlake applies, as a plain dict (testable without a JVM)."""
    import pyspark

    # The offset-commit UDF (pipelines/decode.py) ships with the session's jars to every executor.
    jars = [*spark_extra_jars(Path(pyspark.__file__).parent / "jars"), offset_commit_udf_jar()]
    # Derby (Spark's Hive metastore, serve-sql) keeps its files on the local disk, whatever the warehouse.
    local_home = settings.warehouse_path if settings.warehouse_is_local else \
        user_cache_dir() / "local-state" / settings.cluster_name
    conf = {
        "spark.master": settings.spark.master,
        "spark.app.name": settings.spark.app_name,
        "spark.jars": ",".join(str(jar) for jar in jars),
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.sql.shuffle.partitions": str(settings.spark.shuffle_partitions),
        "spark.default.parallelism": str(settings.spark.shuffle_partitions),
        "spark.driver.memory": settings.spark.driver_memory,
        "spark.ui.enabled": str(settings.spark.ui_enabled).lower(),
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.warehouse.dir": join(settings.warehouse_uri, "spark-warehouse"),
        # The project's log4j2 configuration (conf/log4j2.properties: Spark's notices of what offsetlake does on
        # purpose kept to their errors), then the settings' options, which may name another.
        "spark.driver.extraJavaOptions": " ".join(
            [f"-Dderby.system.home={local_home / 'derby'}", f"-Dlog4j2.configurationFile={LOG4J2_PROPERTIES}",
             *settings.spark.driver_java_options.split()]),
        # Delta rebuilds a table's state with this many tasks for each new version it reads or writes
        # (every idempotent append checks its txnAppId/txnVersion there); the default (50) made every
        # append take seconds on a small machine. conf/settings.py says why one.
        "spark.databricks.delta.snapshotPartitions": str(settings.spark.snapshot_partitions),
        # Delta's VACUUM lists the table directory with this many tasks (VacuumCommand.gc ->
        # DeltaFileOperations.recursiveListDirs); Spark's default, 10000, is sized for huge clusters and
        # made one VACUUM of a small table take most of a minute on two cores. Scale it like shuffles.
        "spark.sql.sources.parallelPartitionDiscovery.parallelism": str(settings.spark.shuffle_partitions),
        # No deletion vectors unless a table's spec asks for them (schemas/*.py ``properties``: the MERGE
        # targets): delta-rs' pyarrow path refuses such tables (shared/stack.md section 7); offsetlake's
        # own delta-rs reads go through its DataFusion engine, which applies them.
        "spark.databricks.delta.properties.defaults.enableDeletionVectors": "false",
        "spark.sql.session.timeZone": "UTC",
        # The state store of gold.consumer_lag's query (pipelines/gold/consumer_lag.py, the only stateful one):
        # transformWithStateInPandas requires RocksDB's; it keeps the state on local disk, not the JVM heap.
        "spark.sql.streaming.stateStore.providerClass":
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
        # Compiled generated code kept for reuse (Spark's default 100): a gold refresh on generated code runs
        # ~150 jobs, and a long-running `offsetlake run` repeats the same plans every refresh; with 100 entries
        # each refresh compiled most of them again (bench/gold.py; the gain is recorded in CHANGELOG.md). A class
        # each, in the JVM's metaspace.
        "spark.sql.codegen.cache.maxEntries": "2000",
        # Spark's Admin-based Kafka partition discovery skips internal topics such as
        # __consumer_offsets; see pipelines/offsets_topic_source.py.
        "spark.sql.streaming.kafka.useDeprecatedOffsetFetching": "true",
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
    }
    # The warehouse's file system connector options (storage.hadoop), e.g. fs.s3a.endpoint.
    conf.update({f"spark.hadoop.{key}": value for key, value in settings.storage.hadoop.items()})
    conf.update(settings.spark.extra_conf)
    return conf


def build_spark_session(settings: Settings, *, read_only: bool = False) -> SparkSession:
    """Return a SparkSession for ``settings`` (reusing the active one if any).

    Before Spark starts, a local warehouse is made if missing and checked to be a writable directory (only a
    directory with ``read_only``: a command that only reads it); ``WarehouseError`` otherwise. A JVM this call
    starts writes its output to the debug log (``settings.debug_log_path``), not to the terminal; a JVM that
    exits at start, or a session that refuses its settings, is ``SparkStartError`` (one line; an empty warehouse
    directory this call made is removed again).

    Python UDF workers start ``PYSPARK_PYTHON``; without pointing it at this
    interpreter they start the system python, which lacks our packages.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    made = check_local_warehouse(settings, writable=not read_only)
    try:
        spark = _start_session(settings)
    except BaseException:
        if made:
            with contextlib.suppress(OSError):
                settings.warehouse_path.rmdir()  # only if still empty
        raise
    spark.sparkContext.setLogLevel(settings.spark.log_level.upper())
    if settings.spark.log_level.upper() == "WARN":
        _quiet_expected_warnings(spark)
    _log_query_errors(settings.debug_log_path)
    if not settings.spark.master.startswith("local"):
        # Executors of a real cluster run Python workers that import decoders/schemas/pipelines (the Python
        # decode stage, gold's pandas steps) and need not have offsetlake installed: ship this driver's code.
        if not any(name.endswith(SHIPPED_ZIP) for name in spark.sparkContext.listFiles):  # once per context
            spark.sparkContext.addPyFile(str(shipped_code_zip()))
    from pipelines.decode import register_jvm_udfs

    register_jvm_udfs(spark)
    return spark


class SparkStartError(RuntimeError):
    """Spark did not start, or refused its settings; the message is one line (the JVM's output is in the debug
    log)."""


class WarehouseError(RuntimeError):
    """The local warehouse is not a directory, cannot be made, or cannot be written; one line naming it and why."""


def check_local_warehouse(settings: Settings, *, writable: bool = True) -> bool:
    """Make a local warehouse's directory if missing and check that it is a directory and, if ``writable``, that a
    file can be written there (a read-only file system, missing permissions, a full disk); ``WarehouseError``
    otherwise. Returns whether it made the directory. Cheap, and before Spark starts: a JVM started for a warehouse
    it cannot write fails later, deep inside a Delta write.

    A warehouse on another file system (``hdfs://``, ``s3a://``...) is not checked here: Hadoop's FileSystem
    reaches it once Spark runs, and its errors are Spark's.
    """
    if not settings.warehouse_is_local:
        return False
    path = settings.warehouse_path
    if path.exists() and not path.is_dir():
        raise WarehouseError(f"warehouse {path} is a file, not a directory: set warehouse (or OFFSETLAKE_WAREHOUSE) "
                             "to a directory")
    made = not path.exists()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WarehouseError(f"cannot make the warehouse directory {path}: {exc.strerror}{_advice(exc)}") from exc
    if writable:
        probe = path / f".offsetlake-write-check-{os.getpid()}"
        refused: OSError | None = None
        try:
            # A few KB, not an empty file: a full disk still takes a new empty file.
            with open(probe, "wb") as out:
                out.write(b"\0" * 4096)
        except OSError as exc:
            refused = exc
        with contextlib.suppress(OSError):
            probe.unlink()
        if refused is not None:
            if made:
                with contextlib.suppress(OSError):
                    path.rmdir()
            raise WarehouseError(f"cannot write to the warehouse {path}: {refused.strerror}{_advice(refused)}") \
                from refused
    return made


def _advice(exc: OSError) -> str:
    """What to do about a warehouse ``exc`` refused."""
    if exc.errno == errno.EROFS:
        return ": set warehouse (or OFFSETLAKE_WAREHOUSE) to a directory on a writable file system"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return (": give this user write permission there, or set warehouse (or OFFSETLAKE_WAREHOUSE) to a "
                "directory it may write")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return ": free space there, or set warehouse (or OFFSETLAKE_WAREHOUSE) to a disk with room"
    if exc.errno == errno.ENOTDIR:
        return " (a part of the path is a file): set warehouse (or OFFSETLAKE_WAREHOUSE) to a directory"
    return ": set warehouse (or OFFSETLAKE_WAREHOUSE) to a directory this user may write"


def _start_session(settings: Settings) -> SparkSession:
    """``SparkSession.builder.getOrCreate`` with ``spark_conf``; the JVM started first when there is none yet, its
    output to the debug log (``_launch_jvm``); then the session state built once (``session_state_error``)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    conf = spark_conf(settings)
    if SparkContext._gateway is None:
        _launch_jvm(settings, conf)
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    refused = session_state_error(spark._jsparkSession)
    if refused is not None:
        spark.stop()
        key = re.search(r'"(spark\.[^"]+)"', refused)
        named = " (set in spark.extra_conf)" if key and key.group(1) in settings.spark.extra_conf else ""
        raise SparkStartError(f"Spark refused its settings: {refused}{named}")
    return spark


def _launch_jvm(settings: Settings, conf: dict[str, str]) -> None:
    """Start Spark's JVM (``spark-submit``, as PySpark does) with its stdout and stderr going to the debug log.

    PySpark's own start leaves them on the terminal: a JVM that exits at start (a bad ``spark.master``, a bad JVM
    option) printed its stack there, followed by PySpark's JAVA_GATEWAY_EXITED, and a running one its log4j
    lines. ``launch_gateway``'s ``popen_kwargs`` are PySpark's way to capture them; the gateway it returns is
    the one ``getOrCreate`` then uses. When the debug log cannot be written, the JVM keeps the terminal.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.errors import PySparkRuntimeError
    from pyspark.java_gateway import launch_gateway

    spark_conf_ = SparkConf(loadDefaults=False).setAll(list(conf.items()))
    path = settings.debug_log_path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        log = open(path, "ab")  # noqa: SIM115 - the JVM keeps its own copy of the descriptor
    except OSError:
        SparkContext._ensure_initialized(gateway=launch_gateway(spark_conf_))
        return
    with log:
        log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} pid {os.getpid()}: Spark's JVM "
                  f"(spark.master {settings.spark.master})\n".encode())
        log.flush()
        start = log.tell()
        try:
            gateway = launch_gateway(spark_conf_, popen_kwargs={"stdout": log, "stderr": log})
        except PySparkRuntimeError as exc:
            log.flush()
            with open(path, "rb") as written:
                written.seek(start)
                output = written.read().decode("utf-8", errors="replace")
            raise SparkStartError(f"Spark did not start (spark.master = {settings.spark.master!r}): "
                                  f"{jvm_exit_reason(output)}") from exc
    SparkContext._ensure_initialized(gateway=gateway)


def jvm_exit_reason(output: str) -> str:
    """The line of a JVM's output that says why it exited at start: spark-submit's uncaught exception (without its
    class), else the first error line of spark-submit or of the JVM itself ("Error: ...", "Unrecognized VM option
    ..."), else the last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:
        thrown = re.match(r'Exception in thread "\w+" (?:[\w.$]+: )?(.+)', line)
        if thrown:
            return thrown.group(1)
    for line in lines:
        if re.match(r"(Error|Invalid|Unrecognized|Could not|JAVA_HOME)\b", line):
            return line
    return lines[-1] if lines else "the JVM exited without a word"


def session_state_error(jsession: Any) -> str | None:
    """The reason Spark cannot build the state of the JVM session ``jsession`` (a SQL conf of the wrong type, such as
    ``spark.sql.shuffle.partitions=banana``), or None.

    Asked through py4j's own call, not PySpark's: PySpark turns every JVM exception into a Python one
    (``pyspark.errors.exceptions.captured``), and its message asks the session's SQLConf whether to show the JVM
    stack, which builds the failing session state again, which fails again, and so on. The first SQL call of
    such a session never returned (``offsetlake gold`` printed nothing until killed).
    """
    from py4j import protocol

    member = jsession.sessionState
    command = protocol.CALL_COMMAND_NAME + member.command_header + protocol.END_COMMAND_PART
    try:
        protocol.get_return_value(member.gateway_client.send_command(command), member.gateway_client,
                                  member.target_id, member.name)
    except protocol.Py4JJavaError as exc:
        cause = exc.java_exception
        while cause.getCause() is not None:
            cause = cause.getCause()
        return re.sub(r"\s*SQLSTATE: \w+$", "", str(cause.getMessage() or cause.toString())).rstrip(".")
    return None


def _log_query_errors(path: Path) -> None:
    """PySpark's loggers of failed queries (``SQLQueryContextLogger``, ``DataFrameQueryContextLogger``: each failed
    query with its JVM stack, as JSON) write to the debug log, not to stderr, where PySpark puts them."""
    import logging

    from pyspark.logger import PySparkLogger

    class DebugLog(logging.FileHandler):
        def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
            pass  # a debug log that cannot be written loses the line, and says nothing on stderr either

    target = str(path.expanduser().absolute())
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logger = PySparkLogger.getLogger(name)
        if any(isinstance(h, logging.FileHandler) and h.baseFilename == target for h in logger.handlers):
            continue
        for handler in list(logger.handlers):
            if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
                logger.removeHandler(handler)
        logger.addHandler(DebugLog(target, delay=True))


#: Loggers whose WARN lines say what offsetlake does on purpose, once per refresh: gold's query starts at every
#: refresh (``Trigger.AvailableNow``) and Spark notes that adaptive execution is off for a streaming plan
#: (``ResolveWriteToStream``); a batch's rows are checkpointed locally and released (``MapPartitionsRDD``: "its
#: lineage has been truncated and cannot be recomputed after unpersisting"). At WARN they are raised to ERROR.
EXPECTED_WARNINGS = ("org.apache.spark.sql.execution.streaming.runtime.ResolveWriteToStream",
                     "org.apache.spark.rdd.MapPartitionsRDD")


def _quiet_expected_warnings(spark: SparkSession) -> None:
    log4j = spark.sparkContext._jvm.org.apache.logging.log4j
    for name in EXPECTED_WARNINGS:
        log4j.core.config.Configurator.setLevel(name, log4j.Level.ERROR)


#: offsetlake's packages (pyproject.toml's list): what a Python worker on an executor may import.
SHIPPED_PACKAGES = ("cli", "conf", "history", "decoders", "schemas", "pipelines", "coordinator", "broker", "jvm",
                    "quality", "dashboard", "metrics")
_SHIPPED_SUFFIXES = (".py", ".sql", ".toml", ".yaml", ".xml")
SHIPPED_ZIP = "offsetlake_code.zip"


def shipped_code_zip() -> Path:
    """This checkout's Python packages as one zip (``SparkContext.addPyFile``, once per context).

    Why at run time and not a wheel built at set-up: the zip is exactly the code the driver runs, edits
    included, so driver and executors never disagree; Spark puts it first on each Python worker's path.
    Package data (SQL views, TOML, YAML) is included; ``__pycache__`` is not.
    """
    root = Path(__file__).resolve().parent.parent
    directory = tempfile.mkdtemp(prefix="offsetlake-code-")
    atexit.register(shutil.rmtree, directory, True)
    target = Path(directory) / SHIPPED_ZIP
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for package in SHIPPED_PACKAGES:
            for path in sorted((root / package).rglob("*")):
                if path.is_file() and path.suffix in _SHIPPED_SUFFIXES and "__pycache__" not in path.parts:
                    archive.write(path, path.relative_to(root).as_posix())
    return target
