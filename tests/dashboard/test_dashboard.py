"""offsetlake dashboard: the page built from the sample warehouse, opened in headless Chromium.

The sample warehouse (tests/dashboard/sample_warehouse.py) gives, for groups alpha and beta: 5
rebalances (alpha's generations 1 to 4, beta's 1); lag points at s1, s2, s3 for alpha and at s3 for
beta (4); ownership intervals for alpha's generations 1-3 (4 partitions each) and beta's generation 1
(4 partitions): 16 bars; two status rows. Those are the marks the browser must have drawn.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from dashboard.build import build_dashboard
from dashboard.data import COLUMNS, Filters, build_data
from dashboard.read import read_tables
from tests.dashboard.browser import parse, rendered_dom, screenshot
from tests.dashboard.sample_warehouse import sample_warehouse


@pytest.fixture(scope="module")
def sample(spark, kafka_broker, base_settings, tmp_path_factory):  # type: ignore[no-untyped-def]
    return sample_warehouse(spark, kafka_broker, base_settings, tmp_path_factory.mktemp("sample"))


@pytest.mark.broker
@pytest.mark.spark
def test_delta_rs_reads_the_same_rows_as_spark_without_a_session(spark, sample) -> None:  # type: ignore[no-untyped-def]
    by_delta_rs, report = read_tables(sample.settings, COLUMNS, engine="delta-rs")
    by_spark, spark_report = read_tables(sample.settings, COLUMNS, engine="spark", spark_factory=lambda: spark)
    assert set(report.engines) == set(COLUMNS) and set(report.engines.values()) == {"delta-rs"}
    assert set(spark_report.engines.values()) == {"spark"} and report.fallbacks == {}
    for name in COLUMNS:
        assert by_delta_rs[name], name
        assert sorted(by_delta_rs[name], key=repr) == sorted(by_spark[name], key=repr), name


@pytest.mark.broker
@pytest.mark.spark
def test_the_status_table_agrees_with_the_consumer_status_view(spark, sample) -> None:  # type: ignore[no-untyped-def]
    from pipelines.sql_views import register_catalog

    tables, _ = read_tables(sample.settings, COLUMNS, engine="delta-rs")
    groups = (sample.alpha, sample.beta, sample.gamma)
    data = build_data(tables, Filters(groups=groups), now=0, warehouse="w")
    page = {s["group"]: (s["state"], s["generation"], s["members"], s["committed_partitions"], s["burrow_status"],
                         s["total_lag"]) for s in data.status}
    register_catalog(spark, sample.settings)
    view = {r["group"]: (r["state"], r["generation"], r["members"], r["committed_partitions"], r["burrow_status"],
                         r["total_lag"]) for r in spark.sql("SELECT * FROM dashboards.consumer_status_now").collect()
            if r["group"] in groups}
    assert page == view
    assert page[sample.alpha][:4] == ("Empty", 4, 0, 4) and page[sample.beta][:4] == ("Stable", 1, 1, 4)


@pytest.mark.broker
@pytest.mark.spark
def test_the_page_renders_its_charts_with_the_data_in_headless_chromium(sample, tmp_path, monkeypatch,
                                                                         capsys) -> None:  # type: ignore[no-untyped-def]
    from cli.main import main

    out = tmp_path / "report.html"
    monkeypatch.setenv("OFFSETLAKE_WAREHOUSE", str(sample.settings.warehouse_path))
    assert main(["dashboard", "--out", str(out), "--group", sample.alpha, "--group", sample.beta]) == 0
    assert f"wrote {out} (2 groups, 5 rebalances, 4 lag points, 8 partitions)" in capsys.readouterr().err

    page = parse(rendered_dom(out))
    assert page.rendered == "true", page.errors
    assert page.marks == {"rebalances": 5, "lag": 4, "ownership": 16}
    assert page.declared_marks == {"rebalances": "5", "lag": "4", "ownership": "16"}
    assert page.status_rows == 2
    assert {sample.alpha, sample.beta, sample.a1_client, sample.a2_client, sample.b1_client} <= set(page.texts)
    assert "Empty" in page.texts and "Stable" in page.texts

    png = screenshot(out, tmp_path / "report.png")
    header = png.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", header[16:24]) == (1400, 2000)
    print(f"dashboard screenshot: {png}")


def test_a_warehouse_without_tables_gives_a_page_that_says_there_is_nothing_yet(base_settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    settings = dataclasses.replace(base_settings, warehouse=str(tmp_path / "empty"))
    report = build_dashboard(settings, tmp_path / "empty.html", engine="delta-rs")
    assert report.read.engines == {} and report.data.missing_tables == sorted(COLUMNS)
    page = parse(rendered_dom(Path(report.out)))
    assert page.rendered == "true", page.errors
    assert page.marks == {"rebalances": 0, "lag": 0, "ownership": 0} and page.status_rows == 0
    assert "No rebalances recorded." in page.texts and "No groups in the warehouse." in page.texts
