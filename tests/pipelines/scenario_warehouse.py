"""The reference coordinator's scenarios through the real pipeline, built once per run in the background.

``tests/pipelines/gold/test_refresh.py`` (gold against the reference, incremental equals full) and
``tests/pipelines/test_validate.py`` (``offsetlake validate``'s comparison and its report) read the
same warehouse: every scenario of ``conf/scenarios/`` (their group names are distinct) simulated,
the first 60% of each one's records built into gold by ``pipelines.validation.build_gold`` (a new
plain topic on the broker of the background builds, one ingest, one refresh), then the rest produced
to the same topic, ingested and refreshed incrementally, then one more refresh with nothing new.

Why in the background (tests/background.py): unlike the other background warehouses this one is CPU
work, not waiting (ten simulations, two ingests, three refreshes: about 78 s of the suite's critical path
when it was a fixture of tests/pipelines/conftest.py). It is built last, when the waiting builds are done,
beside the second half of the suite, when one of the two cores was idle about a third of the time
(sampled every 15 s, 2026-11-26). Its records go to a plain topic of their own, never to
``__consumer_offsets``, so they change no other background warehouse.
"""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "conf" / "scenarios").glob("*.yaml"))
FIRST_PART = 0.6  # share of each scenario's records in the first ingest


def gold_version(spark: Any, settings: Any, spec: Any) -> int:
    from delta.tables import DeltaTable

    from pipelines.delta_tables import table_path

    return DeltaTable.forPath(spark, str(table_path(settings, spec))).history(1).collect()[0]["version"]


def build_scenario_warehouse(spark: Any, broker: Any, base_settings: Any, root: Path) -> dict[str, Any]:
    """Build the warehouse in ``root`` from topic records on ``broker``; what the tests read of it."""
    from cli.simulate import produce_records
    from conf.settings import GoldSettings, KafkaSettings
    from coordinator import simulate
    from pipelines.gold.refresh import GOLD, refresh_gold
    from pipelines.ingest import IngestOptions, run_ingest
    from pipelines.validation import build_gold, scenario_name

    settings = base_settings.model_copy(update={"warehouse": str(root / "warehouse"),
        "kafka": KafkaSettings(bootstrap_servers=broker.bootstrap_servers),
        "gold": GoldSettings(storm_rebalances=8, storm_window_minutes=10)})
    results = {scenario_name(path): simulate(str(path), kafka_version="4.2") for path in SCENARIOS}
    topic = f"offsets-{uuid.uuid4().hex[:8]}"
    cut = {name: int(len(r.records) * FIRST_PART) for name, r in results.items()}
    first = {name: dataclasses.replace(r, records=r.records[:cut[name]]) for name, r in results.items()}
    build_gold(spark, settings, first, topic)
    first_versions = {spec.name: gold_version(spark, settings, spec) for spec in GOLD}
    produce_records(settings.kafka.librdkafka_config(), topic,
                    [rec for name, r in results.items() for rec in r.records[cut[name]:]])
    run_ingest(spark, settings, IngestOptions(topic=topic, once=True))
    steps: list[tuple[str, ...]] = []  # each table as the refresh announced its commit
    counts = refresh_gold(spark, settings, on_written=steps.append)
    versions = {spec.name: gold_version(spark, settings, spec) for spec in GOLD}
    again = refresh_gold(spark, settings)
    return {"settings": settings, "topic": topic, "results": results, "first_versions": first_versions,
            "counts": counts, "versions": versions, "again": again, "written_steps": steps,
            "versions_after": {spec.name: gold_version(spark, settings, spec) for spec in GOLD}}
