"""offsetlake serve-sql: the real command in a subprocess, asked over the wire with PyHive (HiveServer2's Thrift
protocol, as Superset asks it).

One server for the module, serving a copy of the run's sample warehouse (tests/dashboard/sample_warehouse.py;
copied, not rebuilt, so that the rows and the table this module adds do not reach other modules). Expected
answers come from the sample's story (its docstring): alpha rebalanced four times (two members joined, two
left) and its lag was 0 at s1 and 100 at s2 and s3. Start-up and query times are printed, not asserted.

Marked ``long`` (``make test-long``, which CI runs) since 2026-11-28: a server JVM of its own for the module
(24 s to ready in the fresh-clone ``make test`` of 00:42, at load 3.4, and ~15 s of queries), in a suite that had
reached 11 min 19 s of pytest at that load.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pipelines.sql_views import VIEW_SCHEMA, VIEWS_DIR
from schemas.catalog import TABLES
from tests.dashboard.sample_warehouse import PARTITIONS
from tests.spark_conf import as_env as spark_conf_env

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT_SECONDS = 420.0
pytestmark = [pytest.mark.broker, pytest.mark.spark, pytest.mark.jvm_process, pytest.mark.long]

VIEWS = {f"{VIEW_SCHEMA}.{path.stem}" for path in VIEWS_DIR.glob("*.sql")}
#: Created by the test below once the server is up (`offsetlake check` creates it; the sample never ran one).
LATE_TABLE = "audit.data_quality_results"


@dataclass
class Server:
    """The running ``offsetlake serve-sql`` and what it printed."""

    process: subprocess.Popen[str]
    port: int
    settings: Any
    stdout: list[str] = field(default_factory=list)
    stderr_path: Path | None = None
    start_seconds: float = 0.0
    timings: list[str] = field(default_factory=list)
    connection: Any = None

    def connect(self) -> Any:
        from pyhive import hive

        return hive.connect(host="127.0.0.1", port=self.port, username="offsetlake-test")

    def query(self, sql: str, what: str = "") -> list[tuple[Any, ...]]:
        """Run ``sql`` on the module's connection (kept open, as a BI tool's pool keeps it); note its time."""
        if self.connection is None:
            started = time.monotonic()
            self.connection = self.connect()
            self.timings.append(f"{time.monotonic() - started:6.2f} s  open a connection")
        started = time.monotonic()
        cursor = self.connection.cursor()
        cursor.execute(sql)
        rows = cursor.fetchall()
        cursor.close()
        self.timings.append(f"{time.monotonic() - started:6.2f} s  {what or sql[:80]}")
        return [tuple(row) for row in rows]

    def stderr(self) -> str:
        assert self.stderr_path is not None
        return self.stderr_path.read_text()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(condition: Callable[[], bool], timeout: float, what: str, interval: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def command_env(warehouse: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "OFFSETLAKE_WAREHOUSE": str(warehouse),
            "OFFSETLAKE_SPARK__MASTER": "local[2]", "OFFSETLAKE_SPARK__SHUFFLE_PARTITIONS": "1",
            "OFFSETLAKE_SPARK__UI_ENABLED": "false", "OFFSETLAKE_SPARK__LOG_LEVEL": "ERROR",
            "OFFSETLAKE_SQL_ENDPOINT__CATALOG_REFRESH_SECONDS": "1", **spark_conf_env()}


@pytest.fixture(scope="module")
def sample(sample_traffic_warehouse):  # type: ignore[no-untyped-def]
    return sample_traffic_warehouse


@pytest.fixture(scope="module")
def server(sample, tmp_path_factory, pytestconfig) -> Iterator[Server]:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("serve-sql")
    warehouse = root / "warehouse"
    shutil.copytree(sample.settings.warehouse_path, warehouse, ignore=shutil.ignore_patterns("_checkpoints"))
    settings = sample.settings.model_copy(update={"warehouse": str(warehouse)})
    port = free_port()
    stderr_path = root / "serve-sql.stderr"
    started = time.monotonic()
    with stderr_path.open("w") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "cli.main", "serve-sql", "--port", str(port)],
                                   stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=root,
                                   env=command_env(warehouse))
    served = Server(process=process, port=port, settings=settings, stderr_path=stderr_path)
    out = process.stdout
    assert out is not None
    reader = threading.Thread(target=lambda: served.stdout.extend(iter(out.readline, "")), daemon=True)
    reader.start()
    try:
        wait_for(lambda: any(line.startswith("serve-sql: ready") for line in served.stdout)
                 or process.poll() is not None, READY_TIMEOUT_SECONDS, "serve-sql to say it is ready")
        assert process.poll() is None, served.stderr()
        served.start_seconds = time.monotonic() - started
        yield served
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=60)
        ready = next((line.strip() for line in served.stdout if line.startswith("serve-sql: ready")), "never ready")
        lines = [f"serve-sql: process start to ready line {served.start_seconds:.1f} s; {ready}",
                 "query times over PyHive (one connection):", *served.timings]
        capture = pytestconfig.pluginmanager.get_plugin("capturemanager")
        with capture.global_and_fixture_disabled():  # printed even when the module passes
            print("\n" + "\n".join(lines), flush=True)


def test_the_server_says_when_it_is_ready_with_the_jdbc_and_sqlalchemy_urls(server) -> None:  # type: ignore[no-untyped-def]
    text = "".join(server.stdout)
    assert f"jdbc:hive2://127.0.0.1:{server.port}/default" in text
    assert f"hive://127.0.0.1:{server.port}/default" in text
    ready = next(line for line in server.stdout if line.startswith("serve-sql: ready"))
    assert f"views of {server.settings.warehouse_path}" in ready


def test_every_table_and_every_dashboards_view_is_listed_and_answers_over_the_wire(server) -> None:  # type: ignore[no-untyped-def]
    from pipelines.delta_tables import table_path

    on_disk = {name for name, spec in TABLES.items()
               if (Path(table_path(server.settings, spec)) / "_delta_log").is_dir()}
    assert LATE_TABLE not in on_disk and "gold.consumer_lag" in on_disk
    listed = {f"{layer}.{name}" for layer in sorted({spec.layer for spec in TABLES.values()})
              for _, name, _ in server.query(f"SHOW TABLES IN {layer}", f"SHOW TABLES IN {layer}")}
    assert listed == on_disk
    views = {f"{schema}.{name}" for schema, name, _ in server.query(f"SHOW VIEWS IN {VIEW_SCHEMA}", "SHOW VIEWS")}
    assert views == VIEWS
    for name in sorted(on_disk | VIEWS):
        server.query(f"SELECT * FROM {name} LIMIT 5", f"SELECT * FROM {name} LIMIT 5")


def test_a_dashboard_question_gets_the_sample_warehouses_answers(server, sample) -> None:  # type: ignore[no-untyped-def]
    lag = server.query(f"SELECT total_lag, partitions FROM dashboards.lag_over_time WHERE `group` = '{sample.alpha}' "
                       "ORDER BY snapshot_time", "dashboards.lag_over_time, one group")
    assert lag == [(0, PARTITIONS), (100, PARTITIONS), (100, PARTITIONS)]
    top = server.query(f"SELECT rebalances, members_joined, members_left FROM dashboards.top_rebalancing_groups "
                       f"WHERE `group` IN ('{sample.alpha}', '{sample.beta}') ORDER BY rebalances DESC",
                       "dashboards.top_rebalancing_groups, two groups")
    # alpha: a1 joined, a2 joined, a2 left, a1 left; beta: b1 joined and stayed.
    assert top == [(4, 2, 2), (1, 1, 0)]
    status = server.query("SELECT `group`, state, members, total_lag FROM dashboards.consumer_status_now "
                          f"WHERE `group` = '{sample.beta}'", "dashboards.consumer_status_now, one group")
    assert status == [(sample.beta, "Stable", 1, 0)]


def test_another_connection_sees_the_same_catalog_and_keeps_its_own_settings(server) -> None:  # type: ignore[no-untyped-def]
    server.query("SET spark.sql.shuffle.partitions=3")
    assert server.query("SET spark.sql.shuffle.partitions")[0][1] == "3"
    started = time.monotonic()
    with server.connect() as other:
        cursor = other.cursor()
        cursor.execute("SET spark.sql.shuffle.partitions")
        assert cursor.fetchall()[0][1] == "1"
        cursor.execute(f"SHOW VIEWS IN {VIEW_SCHEMA}")
        assert {f"{schema}.{name}" for schema, name, _ in cursor.fetchall()} == VIEWS
        closing = time.monotonic()
    server.timings.append(f"{time.monotonic() - started:6.2f} s  a second connection: open, two statements, "
                          f"close ({time.monotonic() - closing:.2f} s of it closing)")


def test_rows_appended_after_start_up_are_in_the_next_query(server, sample, spark) -> None:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    from pipelines.delta_tables import read_table, table_path

    late = f"late-{sample.alpha}"
    query = f"SELECT count(*), sum(total_lag) FROM dashboards.lag_over_time WHERE `group` = '{late}'"
    assert server.query(query, "dashboards.lag_over_time, before the append") == [(0, None)]
    spec = TABLES["gold.consumer_lag"]
    alpha_rows = read_table(spark, server.settings, spec).where(F.col("group") == sample.alpha)
    newest = alpha_rows.agg(F.max("snapshot_time")).collect()[0][0]
    (alpha_rows.where(F.col("snapshot_time") == newest).withColumn("group", F.lit(late))
     .write.format("delta").mode("append").save(str(table_path(server.settings, spec))))
    # The same snapshot as alpha's newest: 25 behind on each of the 4 partitions.
    assert server.query(query, "dashboards.lag_over_time, after the append") == [(1, 100)]


def test_a_table_created_after_start_up_is_registered_within_the_refresh_interval(server, spark) -> None:  # type: ignore[no-untyped-def]
    from pipelines.delta_tables import ensure_table

    layer, name = LATE_TABLE.split(".")
    assert (layer, name) not in {(s, t) for s, t, _ in server.query(f"SHOW TABLES IN {layer}")}
    ensure_table(spark, server.settings, TABLES[LATE_TABLE])
    created = time.monotonic()
    wait_for(lambda: (layer, name) in {(s, t) for s, t, _ in server.query(f"SHOW TABLES IN {layer}")},
             60, f"{LATE_TABLE} to be registered", interval=0.5)
    server.timings.append(f"{time.monotonic() - created:6.2f} s  {LATE_TABLE} created -> listed")
    assert server.query(f"SELECT count(*) FROM {LATE_TABLE}") == [(0,)]


def test_a_port_in_use_is_one_line_naming_the_setting(server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = subprocess.run([sys.executable, "-m", "cli.main", "serve-sql", "--port", str(server.port)],
                            capture_output=True, text=True, cwd=tmp_path,
                            env=command_env(server.settings.warehouse_path), timeout=120)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"offsetlake: serve-sql: cannot listen on 127.0.0.1:{server.port}: Address already in use "
        "(setting sql_endpoint.port or sql_endpoint.host, or --port/--host)"]


def test_a_missing_warehouse_is_one_line_naming_the_setting(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = subprocess.run([sys.executable, "-m", "cli.main", "serve-sql", "--port", str(free_port())],
                            capture_output=True, text=True, cwd=tmp_path, env=command_env(tmp_path / "nowhere"),
                            timeout=120)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        f"offsetlake: serve-sql: warehouse {tmp_path / 'nowhere'} does not exist (setting warehouse, or "
        "OFFSETLAKE_WAREHOUSE)"]


def test_sigterm_closes_the_server_and_it_exits_0(server) -> None:  # type: ignore[no-untyped-def]
    """Last in the module: it stops the module's server, whose connection is still open."""
    assert server.connection is not None  # a client still connected must not keep it up
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=180) == 0
    server.timings.append(f"{time.monotonic() - started:6.2f} s  SIGTERM -> exit 0")
    with contextlib.suppress(Exception):  # the server is gone; closing the client's end may complain
        server.connection.close()
    stderr = server.stderr()
    assert stderr.rstrip().endswith("serve-sql: stopped"), stderr[-2000:]
    assert "Traceback" not in stderr and "\tat org.apache" not in stderr, stderr[-4000:]
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", server.port)) != 0
