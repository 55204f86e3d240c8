"""Session-wide fixtures: one real Kafka broker and one SparkSession for the whole run.

Both are expensive (a JVM each), so they are session-scoped; every test that
writes tables gets its own warehouse directory through ``settings_for``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from broker.embedded import EmbeddedBroker
from conf.settings import KafkaSettings, Settings, SparkSettings
from tests.background import BACKGROUND_FIXTURES, BackgroundBuilds, fixtures_needed, order_items
from tests.spark_conf import CLASS_ARCHIVE, SESSION_DRIVER_JAVA_OPTIONS, SESSION_DRIVER_MEMORY, TEST_SPARK_CONF

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

AIRFLOW_TESTS = Path(__file__).resolve().parent / "dags"
#: Tests that start a distributed file system or a Spark cluster: ``make test-cluster``, not ``make test``.
CLUSTER_TESTS = Path(__file__).resolve().parent / "cluster"


#: Session fixtures that compile and run Kafka's Java code in a JVM of their own (tests/coordinator/oracle.py).
JVM_PROCESS_FIXTURES = frozenset({"assignor_oracle", "hash_order_oracle", "protocol_oracle", "record_oracle"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark what each test needs, run the tests of the background warehouses late and the Airflow DAG tests last.

    ``cluster`` marks the tests under tests/cluster/. ``broker`` and ``jvm_process`` are derived from the
    fixtures a test uses (directly or through
    other fixtures), so ``make test-fast`` (``-m "not broker and not jvm_process"``) cannot miss one;
    tests that start a JVM without such a fixture carry the mark themselves. A background warehouse
    (tests/background.py) is built on a broker of its own: its tests are ``broker`` tests too.

    ``dag.test()`` runs Airflow in this process (its logging configuration, an in-process
    execution API thread). Seen once: confluent-kafka consumers started by a later test module
    then hung in ``close()`` waiting for the GIL. Keeping Airflow's in-process runs after every
    other test keeps the rest of the suite independent of that.
    """
    for item in items:
        if Path(str(item.path)).is_relative_to(CLUSTER_TESTS):
            item.add_marker(pytest.mark.cluster)
        names = set(getattr(item, "fixturenames", ()))
        if "kafka_broker" in names or names & set(BACKGROUND_FIXTURES):
            item.add_marker(pytest.mark.broker)
        if names & JVM_PROCESS_FIXTURES:
            item.add_marker(pytest.mark.jvm_process)
        if "spark" in names:
            item.add_marker(pytest.mark.spark)
    order_items(items)
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
        # The session JVM's output and PySpark's failed-query logs (pipelines/spark_session.py), kept with the run.
        debug_log=str(tmp_path_factory.mktemp("debug-log") / "offsetlake-debug.log"),
        # One shuffle partition: the tests' tables are tiny, and every Spark job pays per task.
        # Interpreted expressions, no codegen, no AQE, the serial GC: tests/spark_conf.py says why.
        spark=SparkSettings(master="local[2]", shuffle_partitions=1, ui_enabled=False, log_level="ERROR",
                            driver_memory=SESSION_DRIVER_MEMORY, extra_conf=dict(TEST_SPARK_CONF),
                            driver_java_options=SESSION_DRIVER_JAVA_OPTIONS),
    )


@pytest.fixture(scope="session")
def spark(base_settings: Settings):  # type: ignore[no-untyped-def]
    """The one SparkSession of the run (local[2], Delta, Kafka source)."""
    from pipelines.spark_session import build_spark_session

    session = build_spark_session(base_settings)
    yield session
    session.stop()


@pytest.fixture
def warehouse_settings(tmp_path: Path, base_settings: Settings) -> Settings:
    """The session's settings with a fresh warehouse for this test, for tests that need no broker."""
    return base_settings.model_copy(update={"warehouse": str(tmp_path / "warehouse")})


@pytest.fixture
def settings_for(tmp_path: Path, kafka_broker: EmbeddedBroker, base_settings: Settings) -> Callable[..., Settings]:
    """Settings pointing at the session broker and a fresh warehouse for this test."""

    def make(**changes: object) -> Settings:
        kafka = KafkaSettings(bootstrap_servers=kafka_broker.bootstrap_servers)
        settings = base_settings.model_copy(update={"warehouse": str(tmp_path / "warehouse"), "kafka": kafka})
        return settings.model_copy(update=changes)

    return make


@pytest.fixture(scope="session", autouse=True)
def background_builds(request: pytest.FixtureRequest,
                      tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundBuilds | None]:
    """Start building, on a broker of their own, the background warehouses the selected tests use (none: nothing)."""
    needed = fixtures_needed(request.session.items)
    if not needed:
        yield None
        return
    # The session's JVM first, before this fixture starts any thread: PySpark starts it with a preexec_fn,
    # which is only safe in a process with one thread (broker/embedded.py die_with_parent says why).
    spark = request.getfixturevalue("spark")
    # A run with the background warehouses is a run with the CLI JVMs' tests (tests/spark_conf.py ClassArchive).
    CLASS_ARCHIVE.start(tmp_path_factory.mktemp("class-archive"))
    builds = BackgroundBuilds(spark, request.getfixturevalue("base_settings"),
                              tmp_path_factory.mktemp("background"), needed).start()
    request.config.stash[BACKGROUND_KEY] = builds
    try:
        yield builds
    finally:
        builds.stop()
        CLASS_ARCHIVE.remove()


BACKGROUND_KEY = pytest.StashKey[BackgroundBuilds]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """How long each background build took (they overlap the rest of the suite, so no test shows it)."""
    builds = config.stash.get(BACKGROUND_KEY, None)
    if builds is not None and builds.timings:
        terminalreporter.write_sep("=", "background warehouses (tests/background.py)")
        for line in builds.timings:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def real_traffic_warehouse(background_builds: BackgroundBuilds):  # type: ignore[no-untyped-def]
    """Real consumer groups on the background broker, ingested and refreshed once (tests/real_traffic.py)."""
    return background_builds.result("real_traffic_warehouse")


@pytest.fixture(scope="session")
def sample_traffic_warehouse(background_builds: BackgroundBuilds):  # type: ignore[no-untyped-def]
    """The story-telling warehouse of the SQL views, `sql` and the dashboard (tests/dashboard/sample_warehouse.py)."""
    return background_builds.result("sample_traffic_warehouse")


@pytest.fixture(scope="session")
def kip848_traffic_warehouse(background_builds: BackgroundBuilds):  # type: ignore[no-untyped-def]
    """Two KIP-848 groups through two ingests and refreshes (tests/pipelines/gold/kip848_traffic.py)."""
    return background_builds.result("kip848_traffic_warehouse")


@pytest.fixture(scope="session")
def dag_traffic_warehouse(background_builds: BackgroundBuilds):  # type: ignore[no-untyped-def]
    """The groups the offsets_ingest DAG's run ingests (tests/dags/dag_traffic.py)."""
    return background_builds.result("dag_traffic_warehouse")


@pytest.fixture(scope="session")
def scenario_warehouse(background_builds: BackgroundBuilds):  # type: ignore[no-untyped-def]
    """Every scenario of conf/scenarios through ingest and gold in two parts (tests/pipelines/scenario_warehouse.py)."""
    return background_builds.result("scenario_warehouse")


@pytest.fixture(scope="session")
def scenario_silver_from_bronze(spark, scenario_warehouse):  # type: ignore[no-untyped-def]
    """The scenario warehouse's silver tables derived again from its bronze (``pipelines.silver.tables_from_bronze``):
    decoded once for tests/pipelines/test_silver.py and the rebuild from bronze in gold/test_refresh.py."""
    from pipelines.silver import tables_from_bronze

    return tables_from_bronze(spark, scenario_warehouse["settings"])


@pytest.fixture(scope="session")
def maintained_warehouse(background_builds: BackgroundBuilds):  # type: ignore[no-untyped-def]
    """One group's batches, gold, OPTIMIZE and VACUUM, more batches (tests/pipelines/maintained_warehouse.py)."""
    return background_builds.result("maintained_warehouse")


@pytest.fixture(scope="session")
def offsets_ingest_dag_run(background_builds: BackgroundBuilds, dag_traffic_warehouse):  # type: ignore[no-untyped-def]
    """offsets_ingest's ``dag.test()`` over the DAG's groups, in a process of its own (tests/dags/dag_run.py)."""
    return background_builds.result("offsets_ingest_dag_run")
