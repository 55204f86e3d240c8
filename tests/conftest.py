"""Session-wide fixtures: one real Kafka broker and one SparkSession for the whole run.

Both are expensive (a JVM each), so they are session-scoped; every test that
writes tables gets its own warehouse directory through ``settings_for``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from broker.embedded import EmbeddedBroker
from conf.settings import KafkaSettings, Settings, SparkSettings
from tests.spark_conf import SESSION_DRIVER_JAVA_OPTIONS, TEST_SPARK_CONF

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

AIRFLOW_TESTS = Path(__file__).resolve().parent / "dags"


#: Session fixtures that compile and run Kafka's Java code in a JVM of their own (tests/coordinator/oracle.py).
JVM_PROCESS_FIXTURES = frozenset({"assignor_oracle", "hash_order_oracle", "protocol_oracle", "record_oracle"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark what each test needs, then run the Airflow DAG tests last.

    ``broker`` and ``jvm_process`` are derived from the fixtures a test uses (directly or through
    other fixtures), so ``make test-fast`` (``-m "not broker and not jvm_process"``) cannot miss one;
    tests that start a JVM without such a fixture carry the mark themselves.

    ``dag.test()`` runs Airflow in this process (its logging configuration, an in-process
    execution API thread). Seen once: confluent-kafka consumers started by a later test module
    then hung in ``close()`` waiting for the GIL. Keeping Airflow's in-process runs after every
    other test keeps the rest of the suite independent of that.
    """
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if "kafka_broker" in names:
            item.add_marker(pytest.mark.broker)
        if names & JVM_PROCESS_FIXTURES:
            item.add_marker(pytest.mark.jvm_process)
        if "spark" in names:
            item.add_marker(pytest.mark.spark)
    items.sort(key=lambda item: Path(str(item.path)).is_relative_to(AIRFLOW_TESTS))


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    """A real single-node KRaft broker on 127.0.0.1, started from the Maven jars."""
    broker = EmbeddedBroker(tmp_path_factory.mktemp("kafka-broker"))
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def base_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(
        cluster_name="test",
        warehouse=str(tmp_path_factory.mktemp("warehouse")),
        # One shuffle partition: the tests' tables are tiny, and every Spark job pays per task.
        # Interpreted expressions, no codegen, no AQE, the serial GC: tests/spark_conf.py says why.
        spark=SparkSettings(master="local[2]", shuffle_partitions=1, ui_enabled=False, log_level="ERROR",
                            extra_conf=dict(TEST_SPARK_CONF), driver_java_options=SESSION_DRIVER_JAVA_OPTIONS),
    )


@pytest.fixture(scope="session")
def spark(base_settings: Settings):  # type: ignore[no-untyped-def]
    """The one SparkSession of the run (local[2], Delta, Kafka source)."""
    from pipelines.spark_session import build_spark_session

    session = build_spark_session(base_settings)
    yield session
    session.stop()


@pytest.fixture
def settings_for(tmp_path: Path, kafka_broker: EmbeddedBroker, base_settings: Settings) -> Callable[..., Settings]:
    """Settings pointing at the session broker and a fresh warehouse for this test."""

    def make(**changes: object) -> Settings:
        kafka = KafkaSettings(bootstrap_servers=kafka_broker.bootstrap_servers)
        settings = dataclasses.replace(base_settings, warehouse=str(tmp_path / "warehouse"), kafka=kafka)
        return dataclasses.replace(settings, **changes)  # type: ignore[arg-type]

    return make


@pytest.fixture(scope="session")
def real_traffic_warehouse(spark, kafka_broker: EmbeddedBroker, base_settings: Settings,  # type: ignore[no-untyped-def]
                           tmp_path_factory: pytest.TempPathFactory):
    """Real consumer groups on the session broker, ingested and refreshed once (tests/real_traffic.py)."""
    from tests.real_traffic import build_real_traffic

    return build_real_traffic(spark, kafka_broker, base_settings, tmp_path_factory.mktemp("real-traffic"))
