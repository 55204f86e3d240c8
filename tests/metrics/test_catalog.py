"""metrics/catalog.py: docs, Grafana dashboard and alerting rules name only the metrics offsetlake exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from metrics import catalog as C

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "metrics.md"
DASHBOARD = ROOT / "conf" / "grafana" / "offsetlake.json"
RULES = ROOT / "conf" / "prometheus" / "offsetlake-rules.yml"
NAME = re.compile(r"\boffsetlake_[a-z_]+")


def dashboard_queries() -> list[str]:
    """Every PromQL expression of the dashboard: its panels' targets and its query variables."""
    dashboard = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    exprs += [v["definition"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    return exprs


def test_the_docs_reference_is_the_catalog_s_table() -> None:
    text = DOCS.read_text()
    start = text.index("\n", text.index("<!-- Generated from metrics/catalog.py")) + 1
    end = text.index("<!-- end of the generated reference -->")
    assert text[start:end].strip() == C.reference_table(), "regenerate it: python -m metrics.catalog"


def test_every_metric_has_an_exposition_name_of_its_type_and_kminion_s_labels_where_kminion_has_it() -> None:
    assert len(C.BY_NAME) == len(C.METRICS)
    for m in C.METRICS:
        assert m.name.startswith("offsetlake_") and m.name.endswith("_total") == (m.kind == C.COUNTER), m.name
        assert m.labels[0] == C.CLUSTER, m.name
        if m.kminion.startswith("kminion_kafka_consumer_group"):
            assert m.name.removeprefix("offsetlake_") == m.kminion.removeprefix("kminion_kafka_"), m.name


def test_the_grafana_dashboard_is_json_whose_queries_use_only_exported_metrics() -> None:
    exprs = dashboard_queries()
    used = {name for expr in exprs for name in NAME.findall(expr)}
    assert used and used <= set(C.BY_NAME), used - set(C.BY_NAME)
    # The panels: lag per group, lag in seconds, status, rebalances by cause, freshness.
    assert {C.TOPIC_LAG.name, C.PARTITION_LAG_SECONDS.name, C.GROUP_STATUS.name, C.REBALANCES.name,
            C.RUN_FRESHNESS.name} <= used


def test_the_alerting_rules_use_only_exported_metrics() -> None:
    rules = [rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]]
    used = {name for rule in rules for name in NAME.findall(rule["expr"])}
    assert used <= set(C.BY_NAME), used - set(C.BY_NAME)
    assert {rule["alert"] for rule in rules} >= {"OffsetlakeConsumerGroupStopped", "OffsetlakeRebalanceStorm"}
