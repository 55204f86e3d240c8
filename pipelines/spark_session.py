"""Build the one SparkSession offsetlake uses, from ``conf.settings``.

Delta and Spark's Kafka source are put on the class path with ``spark.jars``
from the Maven-resolved cache (jvm/artifacts.py) rather than
``spark.jars.packages``: no network at session start, and no second copy of a
jar pyspark already ships. Any master works by configuration alone
(``spark.master``), since nothing here assumes local mode except defaults.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from conf.settings import Settings, user_cache_dir
from jvm.artifacts import offset_commit_udf_jar, spark_extra_jars
from pipelines.storage import join

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


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
        "spark.driver.extraJavaOptions": " ".join(
            [f"-Dderby.system.home={local_home / 'derby'}", *settings.spark.driver_java_options.split()]),
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
        # each refresh compiled most of them again. bench/gold.py at 200,000 commits (2026-11-28 03:42-03:51,
        # load 2.1-3.8, two runs each way): the full rebuild's jobs 10.8-11.7 s with 2,000 entries against
        # 16.9-18.8 s, the refresh 13.1-13.5 s against 15.9-17.2 s. A class each, in the JVM's metaspace.
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


def build_spark_session(settings: Settings) -> SparkSession:
    """Return a SparkSession for ``settings`` (reusing the active one if any).

    Python UDF workers start ``PYSPARK_PYTHON``; without pointing it at this
    interpreter they start the system python, which lacks our packages.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    if settings.warehouse_is_local:
        settings.warehouse_path.mkdir(parents=True, exist_ok=True)
    builder = SparkSession.builder
    for key, value in spark_conf(settings).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(settings.spark.log_level.upper())
    if settings.spark.log_level.upper() == "WARN":
        _quiet_expected_warnings(spark)
    if not settings.spark.master.startswith("local"):
        # Executors of a real cluster run Python workers that import decoders/schemas/pipelines (the Python
        # decode stage, gold's pandas steps) and need not have offsetlake installed: ship this driver's code.
        if not any(name.endswith(SHIPPED_ZIP) for name in spark.sparkContext.listFiles):  # once per context
            spark.sparkContext.addPyFile(str(shipped_code_zip()))
    from pipelines.decode import register_jvm_udfs

    register_jvm_udfs(spark)
    return spark


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
