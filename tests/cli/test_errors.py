"""cli/errors.py and cli/main.py: a failure at the Spark or Kafka edge ends the command with one line on stderr, exit
status non-zero, in bounded time, and leaves nothing half-made; its details go to the debug log the line names.

Each case is a real ``offsetlake`` process against real components: a warehouse that is a file, read-only or on a
full disk, an address nothing answers on, a server that accepts connections and never answers (tests/edges.py), the
session's broker with the wrong security settings or a topic it lacks, and two Spark JVMs that cannot start. Only
those two start a JVM: everything else is caught before Spark starts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.edges import closed_address, full_directory, read_only_directory, silent_server
from tests.spark_conf import as_env as spark_conf_env

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 2.0
#: What a command may take beyond ``kafka.timeout_seconds``: Python's start and imports, on a loaded machine.
START_UP = 8.0


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str
    seconds: float
    debug_log: Path

    @property
    def line(self) -> str:
        """The one line on stderr (asserted: one line, no traceback)."""
        lines = self.stderr.splitlines()
        assert len(lines) == 1 and "Traceback" not in self.stderr, self.stderr[-3000:]
        return lines[0]


def offsetlake(tmp_path: Path, *args: str, timeout: float = 120, **environ: str) -> Ran:
    """``offsetlake ARGS`` in a process of its own, with only ``environ``'s settings (``OFFSETLAKE_<NAME>``), the
    warehouse ``tmp_path/warehouse`` and the debug log ``tmp_path/debug.log`` unless given."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("OFFSETLAKE_")}
    env.update({"PYTHONPATH": str(ROOT), "OFFSETLAKE_WAREHOUSE": str(tmp_path / "warehouse"),
                "OFFSETLAKE_DEBUG_LOG": str(tmp_path / "debug.log")})
    env.update({f"OFFSETLAKE_{key.upper()}": value for key, value in environ.items()})
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True, cwd=tmp_path,
                            env=env, timeout=timeout)
    return Ran(result.returncode, result.stdout, result.stderr, time.monotonic() - started,
               Path(env["OFFSETLAKE_DEBUG_LOG"]))


def kafka_at(address: str, **kafka: str) -> dict[str, str]:
    return {"kafka__bootstrap_servers": address, "kafka__timeout_seconds": str(TIMEOUT),
            **{f"kafka__{key}": value for key, value in kafka.items()}}


# -- the warehouse ---------------------------------------------------------------------------------------------

def test_a_warehouse_that_is_a_file_is_one_line_before_spark_starts_and_the_file_is_left_alone(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "warehouse").write_text("notes")
    ran = offsetlake(tmp_path, "gold")
    assert (ran.code, ran.stdout) == (1, "")
    assert ran.line == (f"offsetlake: warehouse {tmp_path / 'warehouse'} is a file, not a directory: set warehouse "
                        f"(or OFFSETLAKE_WAREHOUSE) to a directory (details: {ran.debug_log})")
    assert ran.seconds < START_UP  # no JVM
    assert (tmp_path / "warehouse").read_text() == "notes"


@pytest.mark.parametrize("inside", [False, True], ids=["the-directory-itself", "a-directory-to-make-in-it"])
def test_a_read_only_warehouse_is_one_line_and_nothing_is_made_there(tmp_path, inside: bool) -> None:  # type: ignore[no-untyped-def]
    with read_only_directory(tmp_path / "read-only") as directory:
        warehouse = directory / "warehouse" if inside else directory
        ran = offsetlake(tmp_path, "gold", warehouse=str(warehouse))
        assert (ran.code, ran.stdout) == (1, "")
        verb = "make the warehouse directory" if inside else "write to the warehouse"
        assert ran.line.startswith(f"offsetlake: cannot {verb} {warehouse}: ")
        assert "OFFSETLAKE_WAREHOUSE" in ran.line and ran.line.endswith(f"(details: {ran.debug_log})")
        assert list(directory.iterdir()) == []


def test_a_full_disk_under_the_warehouse_is_one_line_and_the_warehouse_it_made_is_gone(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with full_directory(tmp_path / "disk") as disk:
        ran = offsetlake(tmp_path, "gold", warehouse=str(disk / "warehouse"))
        assert (ran.code, ran.stdout) == (1, "")
        assert ran.line == (f"offsetlake: cannot write to the warehouse {disk / 'warehouse'}: No space left on device: "
                            "free space there, or set warehouse (or OFFSETLAKE_WAREHOUSE) to a disk with room "
                            f"(details: {ran.debug_log})")
        assert not (disk / "warehouse").exists()


# -- the Kafka cluster -----------------------------------------------------------------------------------------

def test_an_address_nothing_answers_on_is_one_line_naming_it_within_the_timeout(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with closed_address() as address:
        ran = offsetlake(tmp_path, "ingest", "--once", **kafka_at(address))
    assert (ran.code, ran.stdout) == (1, "")
    assert ran.line == (f"offsetlake: Kafka cluster {address} did not answer within 2 s (kafka.timeout_seconds): "
                        f"Connect to ipv4#{address} failed: Connection refused (details: {ran.debug_log})")
    assert ran.seconds < TIMEOUT + START_UP
    # librdkafka's reconnections, logged once with their count, in the debug log; no table made for nothing
    failures = [line for line in ran.debug_log.read_text().splitlines()
                if "offsetlake.librdkafka" in line and "Connection refused" in line]
    assert len(failures) == 2 and failures[1].endswith("more times)"), failures
    assert only_a_released_lease_in(tmp_path / "warehouse")


def test_a_server_that_accepts_and_never_answers_is_one_line_within_the_timeout(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with silent_server() as address:
        ran = offsetlake(tmp_path, "run", "--once", **kafka_at(address))
    assert (ran.code, ran.stdout) == (1, "")
    assert ran.line == (f"offsetlake: Kafka cluster {address} did not answer within 2 s (kafka.timeout_seconds): it "
                        "accepted the connection but never answered Kafka's first request (ApiVersions); if it is a "
                        "Kafka listener, it may expect TLS or SASL, which kafka.security_protocol = PLAINTEXT does not "
                        f"use (details: {ran.debug_log})")
    assert ran.seconds < TIMEOUT + START_UP
    assert "probably due to broker version < 0.10" not in ran.stderr


def test_sasl_settings_against_a_plaintext_listener_are_one_line_naming_them(tmp_path, kafka_broker) -> None:  # type: ignore[no-untyped-def]
    address = kafka_broker.bootstrap_servers
    ran = offsetlake(tmp_path, "snapshot-end-offsets", **kafka_at(
        address, security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-512", sasl_username="offsetlake",
        sasl_password="hunter2"))
    assert (ran.code, ran.stdout) == (1, "")
    assert ran.line.startswith(f"offsetlake: Kafka cluster {address} did not answer within 2 s "
                               "(kafka.timeout_seconds): SASL SCRAM-SHA-512 mechanism handshake failed")
    assert ran.line.endswith("; the TLS/SASL settings may be the cause (kafka.security_protocol = SASL_PLAINTEXT, "
                             "kafka.sasl_mechanism = SCRAM-SHA-512): check that the listener takes them "
                             f"(details: {ran.debug_log})")
    assert "hunter2" not in ran.stderr
    assert ran.seconds < TIMEOUT + START_UP


@pytest.mark.parametrize("command", [["ingest", "--once"], ["run", "--once"], ["run"]])
def test_a_topic_that_does_not_exist_is_one_line_naming_it_and_the_cluster_and_is_not_created(
        tmp_path, kafka_broker, command: list[str]) -> None:  # type: ignore[no-untyped-def]
    from conf.settings import KafkaSettings, Settings
    from pipelines.kafka_clients import cluster_metadata

    topic = f"no-such-topic-{uuid.uuid4().hex[:8]}"
    ran = offsetlake(tmp_path, *command, "--topic", topic, cluster_name="edges",
                     **kafka_at(kafka_broker.bootstrap_servers))
    assert (ran.code, ran.stdout) == (1, "")
    assert ran.line == (
        f"offsetlake: topic {topic} does not exist on cluster edges ({kafka_broker.bootstrap_servers}); offsetlake "
        f"never creates a topic: check its name (details: {ran.debug_log})")
    assert ran.seconds < START_UP
    # The broker creates topics on request (auto.create.topics.enable=true): nothing asked it to.
    broker = Settings(kafka=KafkaSettings(bootstrap_servers=kafka_broker.bootstrap_servers))
    assert topic not in cluster_metadata(broker).topics
    assert only_a_released_lease_in(tmp_path / "warehouse", "edges")


def only_a_released_lease_in(warehouse: Path, cluster_name: str = "local") -> bool:
    """What a command that took the writer lease (``gold``) leaves when Spark fails after it: no table, no checkpoint,
    only the lease table, its lease released (a correct run next takes it at once)."""
    from conf.settings import Settings
    from pipelines.writer_lease import current_lease

    if not warehouse.exists():
        return True
    if [p.name for p in warehouse.iterdir()] != ["_offsetlake"]:
        return False
    lease = current_lease(Settings(cluster_name=cluster_name, warehouse=str(warehouse)))
    return lease is None or lease.released_at is not None


# -- Spark -----------------------------------------------------------------------------------------------------

def test_a_spark_conf_of_a_type_offsetlake_knows_is_one_line_before_spark_starts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    ran = offsetlake(tmp_path, "gold", spark__extra_conf="spark.sql.shuffle.partitions=banana")
    assert (ran.code, ran.stdout) == (2, "")
    # A pass-through map's values are hidden (they may hold a secret); the key says what is wrong.
    assert ran.line == ("offsetlake: config error: setting spark.extra_conf.spark.sql.shuffle.partitions = <hidden> "
                        "(from env OFFSETLAKE_SPARK__EXTRA_CONF) is invalid: expected a whole number >= 1 (Spark's "
                        "spark.sql.shuffle.partitions)")
    assert ran.seconds < START_UP
    assert not (tmp_path / "warehouse").exists()


def spark_env(**extra: str) -> dict[str, str]:
    """The tests' Spark settings for a CLI JVM (tests/spark_conf.py), as ``offsetlake``'s keyword settings."""
    env = {key.removeprefix("OFFSETLAKE_").lower(): value for key, value in spark_conf_env().items()}
    return {"spark__master": "local[1]", "spark__log_level": "ERROR", **env, **extra}


@pytest.mark.jvm_process
def test_a_spark_master_spark_submit_refuses_is_one_line_and_the_jvms_output_goes_to_the_debug_log(tmp_path) -> None:  # type: ignore[no-untyped-def]
    ran = offsetlake(tmp_path, "gold", timeout=300, **spark_env(spark__master="bogus://nowhere"))
    assert (ran.code, ran.stdout) == (1, "")
    assert ran.line == ("offsetlake: Spark did not start (spark.master = 'bogus://nowhere'): Master must either be "
                        f"yarn or start with spark, k8s, or local (details: {ran.debug_log})")
    log = ran.debug_log.read_text()
    assert 'Exception in thread "main" org.apache.spark.SparkException: Master must' in log
    assert "JAVA_GATEWAY_EXITED" in log  # PySpark's error, with its traceback
    assert only_a_released_lease_in(tmp_path / "warehouse")


@pytest.mark.jvm_process
def test_a_spark_conf_spark_refuses_is_one_line_at_once_instead_of_a_hang(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Before, PySpark's conversion of the error recursed through the failing session state: ``offsetlake gold``
    printed nothing until killed."""
    conf = spark_env()
    conf["spark__extra_conf"] += ",spark.sql.ansi.enabled=banana"
    ran = offsetlake(tmp_path, "gold", timeout=300, **conf)
    assert (ran.code, ran.stdout) == (1, "")
    assert ran.line == ("offsetlake: Spark refused its settings: [INVALID_CONF_VALUE.TYPE_MISMATCH] The value "
                        "'banana' in the config \"spark.sql.ansi.enabled\" is invalid. It should be a/an 'boolean' "
                        f"value (set in spark.extra_conf) (details: {ran.debug_log})")
    assert only_a_released_lease_in(tmp_path / "warehouse")


# -- the one line of an error from a component -------------------------------------------------------------------

def test_a_jvm_error_is_told_by_its_message_and_innermost_cause_without_java_class_names(spark) -> None:  # type: ignore[no-untyped-def]
    from py4j.protocol import Py4JJavaError

    from cli.errors import first_line

    jvm = spark._jvm
    failed = jvm.java.util.concurrent.CompletableFuture()
    failed.completeExceptionally(jvm.java.io.IOException("No space left on device"))
    with pytest.raises(Py4JJavaError) as raised:
        failed.get()  # ExecutionException: java.io.IOException: No space left on device, caused by the IOException
    assert str(raised.value).startswith("An error occurred while calling")
    assert first_line(raised.value) == "No space left on device"
    with pytest.raises(Exception) as analysis:  # noqa: PT011 - PySpark's AnalysisException, whichever class path
        spark.sql("SELECT * FROM no_such_table_of_the_edges").collect()
    assert first_line(analysis.value).startswith("[TABLE_OR_VIEW_NOT_FOUND] The table or view `no_such_table_of_the_")
    assert "JVM stacktrace" not in first_line(analysis.value)


def test_a_kafka_error_is_told_by_its_text() -> None:
    from confluent_kafka import KafkaError, KafkaException

    from cli.errors import first_line

    error = KafkaException(KafkaError(KafkaError._TIMED_OUT, "Failed to get metadata: Local: Timed out"))
    assert first_line(error) == "Failed to get metadata: Local: Timed out"
