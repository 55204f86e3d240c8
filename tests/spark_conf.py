"""Spark settings for the tests' tiny tables, shared by the session JVM and every CLI JVM a test starts.

Measured with Java Flight Recorder on the driver while ``tests/pipelines/gold/test_refresh.py`` and
``test_validate.py`` ran (2026-11-25): about a fifth of the JVM's samples were Spark generating Java
source for projections and compiling it with Janino (``GenerateUnsafeProjection`` inside tasks, where
Delta's log replay and every write build projections over wide schemas; ``CodeFormatter``'s regexes;
class look-ups across ~300 jars). On tables of a few hundred rows the generated code never pays for
itself. With interpreted expressions and no whole-stage codegen, ``tests/pipelines/test_maintenance.py``
went from 160 s to 125 s on the same machine. These are test settings: Spark's interpreted and
generated paths are meant to give the same results (Spark's own suites run both), and production keeps
Spark's defaults, which win on real volumes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from jvm.artifacts import offset_commit_udf_jar

#: Spark conf for every SparkSession the tests build (tests/conftest.py) or start in a CLI subprocess.
TEST_SPARK_CONF: dict[str, str] = {
    # Interpreted projections instead of generated ones (CodeGeneratorWithInterpretedFallback).
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.codegen.wholeStage": "false",
    # No adaptive query execution: on tables of a few hundred rows it re-plans every stage to coalesce
    # shuffle partitions that one shuffle partition (tests/conftest.py) already makes single. With it off
    # and the serial collector below, tests/pipelines/gold/test_refresh.py with test_maintenance.py took
    # 258 s against 283 s (2026-11-25 18:00-18:06, load ~2, one run each; AQE off alone 271 s).
    "spark.sql.adaptive.enabled": "false",
    # Hadoop's local file system without a child process per chmod and per readlink (jvm/offset-commit-udf,
    # offsetlake/fs/RawLocalFileSystemWithoutForks.java says why): the session's JVM started 10,015 of them in
    # one run of the suite (Java Flight Recorder, 2026-11-27), ~8 ms of CPU each on this machine. Through
    # FileSystem (Parquet, listings) and through FileContext (Delta's log, streaming checkpoints). On the driver's
    # own class path: spark-submit reads file: paths (spark.jars) before it loads spark.jars.
    "spark.driver.extraClassPath": str(offset_commit_udf_jar()),
    "spark.hadoop.fs.file.impl": "offsetlake.fs.LocalFileSystemWithoutForks",
    "spark.hadoop.fs.AbstractFileSystem.file.impl": "offsetlake.fs.LocalFsWithoutForks",
}

#: JVM options of the session's own JVM (tests/conftest.py): the serial collector, no concurrent GC
#: threads competing with Spark's two task threads on a 2-core machine (alone: 271 s against 283 s, above).
SESSION_DRIVER_JAVA_OPTIONS = "-XX:+UseSerialGC"

#: The session JVM's heap. With the default 1g, at the end of a whole run (2026-11-26 22:58, jstat -gcutil): 59
#: full collections, 52 s of stop-the-world pauses (69 s with the young ones), the old generation 88 % full, the
#: JVM's GC thread second only to the compilers in CPU. The session lives ten minutes and keeps 0.9-1.5 GB live
#: late in a run (plans: Catalyst trees' pattern bitsets were most of a heap histogram; what holds them is not
#: found yet). GC pauses over a whole run (young + full): 3g 29 s (12.5 s in 19 full ones), pytest 584 s against
#: 601-635 s with 1g (23:00); 6g 29 s too (more in young collections). Tried and dropped: Delta's log cache at 64
#: tables (spark.databricks.delta.delta.log.cacheSize): 25 s of pauses, but pytest 625-678 s in three runs, the
#: evicted tables' snapshots being rebuilt when read again.
SESSION_DRIVER_MEMORY = "3g"


#: JVM options of every CLI subprocess's driver (``spark.driver_java_options``), not of the session's JVM.
#: A CLI JVM lives a minute; C2 compiles code it never gets back: with C1 only, ``offsetlake check``
#: on a small warehouse took 46-51 s instead of 77-81 s (2026-11-25, load ~3.3, two runs each). The
#: session's JVM runs the whole suite, where C2 pays off, and keeps the default: with C1 only, pytest
#: took 31 min 27 s against 25 min 33 s with C2 an hour later (2026-11-25, load ~2-3), test_maintenance's
#: setup 212 s against 130 s, though a 5-minute pipeline run had looked even. With C1 only the JVM reserves
#: 48 MB for compiled code (not 240 MB): ``offsetlake run``'s first gold refresh filled it ("CodeCache is full.
#: Compiler has been disabled.", 2026-11-27) and the rest of the run was interpreted, hence the larger cache.
CLI_DRIVER_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"


class ClassArchive:
    """A CDS archive of the classes a CLI JVM loads (JEP 350, Java 13+), made once per run, used by later CLI JVMs.

    A new CLI JVM spends its first seconds loading and verifying some 20,000 classes from Spark's jars. Dumped
    from one ``offsetlake sql "SELECT 1"`` (``-XX:ArchiveClassesAtExit``) and mapped by the next ones
    (``-XX:SharedArchiveFile``), that same command took 4.3 s instead of 7.5 s (2026-11-26, load ~1.9, two runs
    each). The suite starts about eight CLI JVMs (the ingest kill test's three, the DAGs' three, ``sql``,
    ``serve-sql``). The archive is made in a thread at the start of a run that has them (tests/conftest.py),
    minutes before the first of them; one asked for meanwhile waits for it (``java_options``). If it could not
    be made, the CLI JVMs run without it; an archive Java cannot use is ignored (``-Xshare:auto``, the
    default), and its messages are off (``-Xlog:cds=off``) so that no test's output changes. Per run and per
    process: the archive is only valid for the exact jars it was made from.
    """

    def __init__(self) -> None:
        self.path = Path(tempfile.gettempdir()) / f"offsetlake-test-cli-{os.getpid()}.jsa"
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, warehouse: Path) -> None:
        if self._thread is not None:
            return
        env = {**os.environ, **_cli_env(CLI_DRIVER_JAVA_OPTIONS + f" -XX:ArchiveClassesAtExit={self.path}"),
               "OFFSETLAKE_WAREHOUSE": str(warehouse), "OFFSETLAKE_SPARK__LOG_LEVEL": "ERROR",
               "PYTHONPATH": str(Path(__file__).resolve().parents[1])}

        def dump() -> None:
            try:
                # --engine spark: the default (auto) answers SELECT 1 without starting a JVM
                subprocess.run([sys.executable, "-m", "cli.main", "sql", "--engine", "spark", "SELECT 1"], env=env,
                               cwd=warehouse, capture_output=True, timeout=300)
            except (OSError, subprocess.SubprocessError):
                pass  # no archive: the CLI JVMs run as they did
            finally:
                self._done.set()

        warehouse.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=dump, name="cli-class-archive", daemon=True)
        self._thread.start()

    def java_options(self) -> str:
        """The options that map the archive, once it exists (waiting for one being made), else none."""
        if self._thread is not None:
            self._done.wait(timeout=300)
        return f" -XX:SharedArchiveFile={self.path} -Xlog:cds=off" if self._done.is_set() and self.path.exists() \
            else ""

    def remove(self) -> None:
        if self._thread is not None:
            self._done.wait(timeout=300)
        self.path.unlink(missing_ok=True)


#: The run's archive (tests/conftest.py starts it).
CLASS_ARCHIVE = ClassArchive()


def _cli_env(java_options: str) -> dict[str, str]:
    return {"OFFSETLAKE_SPARK__EXTRA_CONF": ",".join(f"{k}={v}" for k, v in TEST_SPARK_CONF.items()),
            "OFFSETLAKE_SPARK__DRIVER_JAVA_OPTIONS": java_options}


def as_env() -> dict[str, str]:
    """The CLI subprocess's test settings as environment variables (``spark.extra_conf``, JVM options)."""
    return _cli_env(CLI_DRIVER_JAVA_OPTIONS + CLASS_ARCHIVE.java_options())


def as_toml() -> str:
    """The CLI subprocess's test settings as lines of a ``[spark]`` section of a settings file."""
    return ("extra_conf = { " + ", ".join(f'"{k}" = "{v}"' for k, v in TEST_SPARK_CONF.items()) + " }\n"
            + f'driver_java_options = "{CLI_DRIVER_JAVA_OPTIONS + CLASS_ARCHIVE.java_options()}"\n')
