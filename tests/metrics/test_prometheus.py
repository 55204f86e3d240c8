"""A real Prometheus (Debian's ``prometheus``) scrapes ``offsetlake serve-metrics``; PromQL answers with gold's values.

The command runs as a subprocess over a small warehouse written with delta-rs; Prometheus scrapes it every second
with the shipped alerting rules loaded; the tests query Prometheus's HTTP API. ``promtool`` checks the rules, and
unit-tests each alert over hand-made series (``promtool test rules``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from conf.settings import Settings
from tests.metrics.gold_tables import LAG, MEMBERS, STATES, at, lag_row, member_row, state_row, write
from tests.metrics.test_catalog import RULES, dashboard_queries

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_SECONDS = 60.0
LAG_ROWS = [lag_row("g1", 0, 42, at(0), interpolated=9.5), lag_row("g1", 1, 7, at(0)),
            lag_row("g2", 0, 1_000, at(0), status="STOP", group_status="ERR")]


def binary(name: str) -> str:
    """A Prometheus executable; a missing one is a test failure with the fix, never a skip."""
    found = shutil.which(name)
    if found is None:
        raise AssertionError(f"Debian's prometheus is not installed: run `make prometheus` (apt-get install -y "
                             f"prometheus) to run the metrics tests against a real server ({name} not found)")
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(condition: Callable[[], Any], what: str, timeout: float = START_TIMEOUT_SECONDS) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = condition()
        except OSError:  # not listening yet
            result = None
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.2)


@dataclass
class Served:
    """serve-metrics and the Prometheus scraping it."""

    exporter: subprocess.Popen[str]
    prometheus_url: str
    exporter_lines: list[str] = field(default_factory=list)

    def api(self, path: str, **params: str) -> Any:
        url = f"{self.prometheus_url}/api/v1/{path}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
        with urllib.request.urlopen(url, timeout=10) as response:
            answer = json.load(response)
        assert answer["status"] == "success", answer
        return answer["data"]

    def query(self, promql: str) -> list[dict[str, Any]]:
        return self.api("query", query=promql)["result"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    prometheus = binary("prometheus")
    root = tmp_path_factory.mktemp("prometheus")
    settings = Settings(cluster_name="c1", warehouse=str(root / "warehouse"))
    write(settings, LAG, LAG_ROWS)
    write(settings, STATES, [state_row("g1", "Stable", at(-60)), state_row("g2", "Stable", at(-60))])
    write(settings, MEMBERS, [member_row("g1", "a", at(-60)), member_row("g1", "b", at(-60))])

    # Both start at once: Prometheus retries its scrape every second until serve-metrics listens.
    exporter_port, port = free_port(), free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OFFSETLAKE_WAREHOUSE": settings.warehouse,
           "OFFSETLAKE_CLUSTER_NAME": settings.cluster_name}
    exporter = subprocess.Popen([sys.executable, "-m", "cli.main", "serve-metrics", "--port", str(exporter_port)],
                                cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    err = exporter.stderr
    assert err is not None
    threading.Thread(target=lambda: lines.extend(iter(err.readline, "")), daemon=True).start()
    config = root / "prometheus.yml"
    config.write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(RULES)],
        "scrape_configs": [{"job_name": "offsetlake",
                            "static_configs": [{"targets": [f"127.0.0.1:{exporter_port}"]}]}],
    }))
    log = root / "prometheus.log"
    with log.open("w") as out:
        server = subprocess.Popen([prometheus, f"--config.file={config}", f"--storage.tsdb.path={root / 'tsdb'}",
                                   f"--web.listen-address=127.0.0.1:{port}"], stdout=out, stderr=out, cwd=root)
    served = Served(exporter, f"http://127.0.0.1:{port}", lines)
    try:
        wait_for(lambda: exporter.poll() is not None or server.poll() is not None
                 or served.query('up{job="offsetlake"} == 1'), "Prometheus's first scrape of serve-metrics")
        assert exporter.poll() is None, "".join(lines)
        assert server.poll() is None, log.read_text()
        yield served
    finally:
        for process in (server, exporter):
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=30)


def test_a_promql_query_returns_the_group_s_lag_that_gold_consumer_lag_holds(served: Served) -> None:
    row = next(r for r in LAG_ROWS if r["group"] == "g1" and r["partition"] == 0)

    result = served.query('offsetlake_consumer_group_topic_partition_lag{group_id="g1",partition_id="0"}')

    assert len(result) == 1
    labels = {k: v for k, v in result[0]["metric"].items() if k not in ("job", "instance")}  # Prometheus's own
    assert labels == {"__name__": "offsetlake_consumer_group_topic_partition_lag", "cluster": "c1", "group_id": "g1",
                      "topic_name": row["topic"], "partition_id": "0"}
    assert float(result[0]["value"][1]) == row["lag"]


def test_every_partition_s_lag_and_every_group_s_status_are_gold_s(served: Served) -> None:
    lags = {(s["metric"]["group_id"], s["metric"]["partition_id"]): float(s["value"][1])
            for s in served.query("offsetlake_consumer_group_topic_partition_lag")}
    assert lags == {(r["group"], str(r["partition"])): r["lag"] for r in LAG_ROWS}
    erring = served.query('offsetlake_consumer_group_status{status="ERR"}')
    assert [(s["metric"]["group_id"], float(s["value"][1])) for s in erring] == [("g2", 3.0)]
    members = {s["metric"]["group_id"]: float(s["value"][1]) for s in served.query("offsetlake_consumer_group_members")}
    assert members == {"g1": 2.0, "g2": 0.0}


def test_every_query_of_the_grafana_dashboard_is_promql_prometheus_evaluates(served: Served) -> None:
    variables = {"$__rate_interval": "1m", "$cluster": ".*", "$group": ".*", "$estimator": "interpolated"}
    for expr in dashboard_queries():
        if expr.startswith("label_values("):  # Grafana's variable query: its selector is PromQL
            expr = expr.removeprefix("label_values(").rsplit(",", 1)[0]
        for name, value in variables.items():
            expr = expr.replace(name, value)
        served.query(expr)  # status "success", or the assertion names the expression's error


def test_the_shipped_alerting_rules_load_and_evaluate_in_the_server(served: Served) -> None:
    def evaluated() -> list[dict[str, Any]] | None:
        rules = [r for g in served.api("rules")["groups"] for r in g["rules"]]
        return rules if rules and all(r["health"] != "unknown" for r in rules) else None

    rules = wait_for(evaluated, "every rule's first evaluation")
    assert {r["name"]: r["health"] for r in rules} == {r["name"]: "ok" for r in rules}
    # g2 is in ERR now; its alert waits out its 5 minutes.
    alerts = wait_for(lambda: [(a["labels"]["group_id"], a["state"]) for a in served.api("alerts")["alerts"]
                               if a["labels"]["alertname"] == "OffsetlakeConsumerGroupStopped"],
                      "an evaluation after the first scrape")
    assert alerts == [("g2", "pending")]


def test_promtool_accepts_the_alerting_rules() -> None:
    result = subprocess.run([binary("promtool"), "check", "rules", str(RULES)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def expected_alert(alert: str, labels: dict[str, str]) -> dict[str, Any]:
    """What promtool should see firing: the rule's labels and its annotations with ``{{ $labels.x }}`` filled in."""
    rules = [r for group in yaml.safe_load(RULES.read_text())["groups"] for r in group["rules"]]
    rule = next(r for r in rules if r.get("alert") == alert)

    def filled(text: str) -> str:
        return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], text)

    return {"exp_labels": {**rule["labels"], **labels},
            "exp_annotations": {key: filled(text) for key, text in rule["annotations"].items()}}


def test_a_group_in_err_alerts_after_five_minutes_and_a_storm_while_it_is_recent(tmp_path: Path) -> None:
    """``promtool test rules`` over series a scrape could have given: time starts at 0 s."""
    tests = {
        "rule_files": [str(RULES)],
        "evaluation_interval": "1m",
        "tests": [{
            "interval": "1m",
            "input_series": [
                {"series": 'offsetlake_consumer_group_status{cluster="c1",group_id="g1",status="ERR"}',
                 "values": "3x10"},
                {"series": 'offsetlake_consumer_group_status{cluster="c1",group_id="g2",status="WARN"}',
                 "values": "2x10"},
                # g3's newest storm rebalance ended at 60 s.
                {"series": 'offsetlake_consumer_group_last_storm_timestamp_seconds{cluster="c1",group_id="g3"}',
                 "values": "60x20"},
            ],
            "alert_rule_test": [
                {"eval_time": "4m", "alertname": "OffsetlakeConsumerGroupStopped", "exp_alerts": []},
                {"eval_time": "6m", "alertname": "OffsetlakeConsumerGroupStopped", "exp_alerts": [expected_alert(
                    "OffsetlakeConsumerGroupStopped", {"cluster": "c1", "group_id": "g1", "status": "ERR"})]},
                {"eval_time": "5m", "alertname": "OffsetlakeRebalanceStorm", "exp_alerts": [expected_alert(
                    "OffsetlakeRebalanceStorm", {"cluster": "c1", "group_id": "g3"})]},
                {"eval_time": "12m", "alertname": "OffsetlakeRebalanceStorm", "exp_alerts": []},
            ],
        }],
    }
    path = tmp_path / "offsetlake-rules.test.yml"
    path.write_text(yaml.safe_dump(tests))

    result = subprocess.run([binary("promtool"), "test", "rules", str(path)], capture_output=True, text=True)

    assert result.returncode == 0, result.stdout + result.stderr
