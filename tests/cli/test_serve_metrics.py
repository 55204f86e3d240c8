"""offsetlake serve-metrics and run --metrics-port: what they serve, and bad input as one line (no Spark started).

tests/metrics/test_prometheus.py has a real Prometheus scrape the command.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cli.main import main
from cli.serve_metrics import serve_run_metrics
from conf.settings import Settings
from metrics import catalog as C
from metrics.groups import READS
from pipelines.freshness import Visibility
from pipelines.ingest import BatchReport
from pipelines.main_job import CycleReport
from tests.metrics.gold_tables import LAG, at, lag_row, write

ROOT = Path(__file__).resolve().parents[2]


def samples(text: str) -> dict[str, dict[tuple[str, ...], float]]:
    """sample name -> {label values in the catalog's order (the text has them sorted by name): value}."""
    out: dict[str, dict[tuple[str, ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = tuple(sample.labels[label] for label in C.BY_NAME[sample.name].labels)
            out.setdefault(sample.name, {})[labels] = sample.value
    return out


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something else listens on."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


@pytest.fixture(autouse=True)
def no_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no offsetlake.toml of the checkout's
    monkeypatch.delenv("OFFSETLAKE_CONFIG", raising=False)


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a SparkSession was started")

    monkeypatch.setattr("pipelines.spark_session.build_spark_session", refuse)


def test_an_empty_warehouse_is_said_once_its_own_metrics_are_served_and_sigterm_stops_it(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OFFSETLAKE_WAREHOUSE": str(warehouse),
           "OFFSETLAKE_CLUSTER_NAME": "c1"}
    process = subprocess.Popen([sys.executable, "-m", "cli.main", "serve-metrics", "--port", "0"], cwd=tmp_path,
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    try:
        said = [process.stderr.readline(), process.stderr.readline()]
        assert said[0].startswith(f"serve-metrics: no gold table in {warehouse} yet"), said
        port = int(re.search(r"at http://127\.0\.0\.1:(\d+)/metrics; Ctrl-C stops", said[1]).group(1))  # type: ignore[union-attr]
        scrape(f"http://127.0.0.1:{port}/metrics")
        served = samples(scrape(f"http://127.0.0.1:{port}/metrics"))
        assert served[C.TABLE_UP.name] == {("c1", spec.name): 0.0 for spec in READS}

        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert process.stderr.read() == "serve-metrics: stopped\n"  # nothing said again at the second scrape
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_port_in_use_is_one_line(busy_port: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve-metrics", "--port", str(busy_port)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"offsetlake: serve-metrics: cannot listen on 127.0.0.1:{busy_port}: Address already in use")


def test_a_port_out_of_range_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve-metrics", "--port", "70000"]) == 1
    assert capsys.readouterr().err.strip() == "offsetlake: serve-metrics: --port must be between 0 and 65535, got 70000"


def test_run_refuses_metrics_with_once_before_spark_starts(no_spark: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--once", "--metrics-port", "9564"]) == 2
    assert capsys.readouterr().err.strip() == (
        "offsetlake: --metrics-port is for the continuous run (a --once run ends before Prometheus scrapes it)")


def test_run_stops_at_a_metrics_port_in_use_before_spark_starts(no_spark: None, busy_port: int,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--metrics-port", str(busy_port)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"offsetlake: run: cannot listen on 127.0.0.1:{busy_port}: Address already in use")


def test_the_run_s_endpoint_serves_the_job_s_health_and_its_warehouse_s_groups(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = Settings(cluster_name="c1", warehouse=str(tmp_path / "warehouse"))
    write(settings, LAG, [lag_row("g1", 0, 42, at(0))])
    args = argparse.Namespace(metrics_port=0, metrics_host="127.0.0.1", topic="__consumer_offsets")
    ended = dt.datetime.now(dt.UTC)
    batch = BatchReport(batch_id=0, records=25, rows_per_table={}, lost_records=0, seconds=1.0)
    # Before its first batch a run has read nothing of the topic (no end offsets): no ListOffsets is asked.
    report = CycleReport(batches=(batch,), gold_written=(), lag_rows=None, snapshot=None, seconds=0.1,
                         newest_visible=None, freshness=3.0, visibility=Visibility(ended, "__consumer_offsets", {}))

    metrics = serve_run_metrics(args, settings)
    try:
        metrics.observe(report)
        assert capsys.readouterr().err.strip() == f"run: metrics at {metrics.url}"
        served = samples(scrape(str(metrics.url)))
    finally:
        metrics.close()

    job = ("c1", "__consumer_offsets")
    assert served[C.RUN_CYCLES.name] == {job: 1.0}
    assert served[C.RUN_RECORDS.name] == {job: 25.0}
    assert served[C.RUN_FRESHNESS.name] == {job: 3.0}
    assert served[C.RUN_LAST_SUCCESS.name] == {job: pytest.approx(ended.timestamp())}
    assert served[C.PARTITION_LAG.name] == {("c1", "g1", "orders", "0"): 42.0}


def test_without_a_metrics_port_the_run_serves_nothing() -> None:
    metrics = serve_run_metrics(argparse.Namespace(metrics_port=None), Settings())
    assert metrics.url is None
    metrics.observe(None)  # type: ignore[arg-type]  # the hook does nothing, whatever the cycle
    metrics.close()
