"""schemas/catalog.py: every table of the warehouse by name, and where each gold table is defined.

Issue 14, item 7: a gold table is found by its name. Its module ``pipelines/gold/<table>.py`` holds its schema,
key, incremental strategy and build step, and ``tests/pipelines/gold/test_<table>.py`` tests that transform.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from schemas.catalog import GOLD, TABLES

GOLD_TESTS = Path(__file__).resolve().parents[1] / "pipelines" / "gold"
REFRESHED_ELSEWHERE = {"gold.validation_diffs"}  # written by `offsetlake validate`, not kept current by a refresh


def test_every_table_is_registered_under_its_own_name() -> None:
    assert all(name == spec.name for name, spec in TABLES.items())
    assert len({spec.relative_path for spec in TABLES.values()}) == len(TABLES)


def test_each_gold_table_is_defined_by_the_module_named_after_it_with_a_strategy_and_a_test_module() -> None:
    kept_current = [spec for spec in GOLD if spec.name not in REFRESHED_ELSEWHERE]
    assert len(kept_current) == 10
    for spec in kept_current:
        module = importlib.import_module(f"pipelines.gold.{spec.table}")
        assert module.TABLE is spec, spec.name
        assert spec.key, f"{spec.name} declares no key"
        assert spec.incremental is not None, f"{spec.name} declares no incremental strategy"
        assert (GOLD_TESTS / f"test_{spec.table}.py").is_file(), f"no tests/pipelines/gold/test_{spec.table}.py"
