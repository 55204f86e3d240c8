"""pipelines/spark_session.py: the packages shipped to Spark's executors are the packages the project installs.

A package missing from ``SHIPPED_PACKAGES`` works in local mode (the driver's own import path) and fails on a
standalone cluster, whose Python workers import only what the zip holds; the three lists are kept by hand."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from pipelines.spark_session import SHIPPED_PACKAGES

ROOT = Path(__file__).resolve().parents[2]


def test_the_shipped_packages_are_those_pyproject_installs_and_make_byte_compiles() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    installed = {name.rstrip("*") for name in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]}
    [make_line] = re.findall(r"^PACKAGES := (.*)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert set(SHIPPED_PACKAGES) == installed == set(make_line.split())
    assert all((ROOT / package / "__init__.py").is_file() for package in SHIPPED_PACKAGES)
