"""pipelines/spark_session.py: the packages shipped to Spark's executors are the packages the project installs;
a local warehouse is checked before Spark starts; a JVM that exits at start, or a session that refuses its settings,
is told by its reason.

A package missing from ``SHIPPED_PACKAGES`` works in local mode (the driver's own import path) and fails on a
standalone cluster, whose Python workers import only what the zip holds; the three lists are kept by hand."""

from __future__ import annotations

import re
import time
import tomllib
from pathlib import Path

import pytest

from conf.settings import Settings
from pipelines.spark_session import (
    SHIPPED_PACKAGES,
    WarehouseError,
    check_local_warehouse,
    jvm_exit_reason,
    session_state_error,
)
from tests.edges import full_directory, read_only_directory

ROOT = Path(__file__).resolve().parents[2]


def test_the_shipped_packages_are_those_pyproject_installs_and_make_byte_compiles() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    installed = {name.rstrip("*") for name in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]}
    [make_line] = re.findall(r"^PACKAGES := (.*)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert set(SHIPPED_PACKAGES) == installed == set(make_line.split())
    assert all((ROOT / package / "__init__.py").is_file() for package in SHIPPED_PACKAGES)


def test_a_missing_local_warehouse_is_made_and_left_without_the_files_of_its_check(tmp_path: Path) -> None:
    warehouse = tmp_path / "data" / "warehouse"
    assert check_local_warehouse(Settings(warehouse=str(warehouse))) is True
    assert warehouse.is_dir() and list(warehouse.iterdir()) == []
    assert check_local_warehouse(Settings(warehouse=str(warehouse))) is False  # there already


def test_a_warehouse_that_is_a_file_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "warehouse").write_text("not a directory")
    with pytest.raises(WarehouseError) as raised:
        check_local_warehouse(Settings(warehouse=str(tmp_path / "warehouse")))
    assert str(raised.value) == (f"warehouse {tmp_path / 'warehouse'} is a file, not a directory: set warehouse (or "
                                 "OFFSETLAKE_WAREHOUSE) to a directory")
    assert (tmp_path / "warehouse").read_text() == "not a directory"


def test_a_warehouse_under_a_file_is_refused_naming_the_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(WarehouseError, match=r"cannot make the warehouse directory .*/file/warehouse: Not a "
                                             r"directory \(a part of the path is a file\)"):
        check_local_warehouse(Settings(warehouse=str(tmp_path / "file" / "warehouse")))


def test_a_read_only_warehouse_is_refused_unless_the_command_only_reads_it(tmp_path: Path) -> None:
    with read_only_directory(tmp_path / "read-only") as directory:
        with pytest.raises(WarehouseError, match=f"cannot write to the warehouse {directory}: "):
            check_local_warehouse(Settings(warehouse=str(directory)))
        with pytest.raises(WarehouseError, match=f"cannot make the warehouse directory {directory / 'warehouse'}: "):
            check_local_warehouse(Settings(warehouse=str(directory / "warehouse")))
        assert check_local_warehouse(Settings(warehouse=str(directory)), writable=False) is False
        assert list(directory.iterdir()) == []


def test_a_full_disk_under_the_warehouse_is_refused_and_the_directory_it_made_removed(tmp_path: Path) -> None:
    with full_directory(tmp_path / "disk") as disk:
        with pytest.raises(WarehouseError) as raised:
            check_local_warehouse(Settings(warehouse=str(disk / "warehouse")))
        assert str(raised.value) == (f"cannot write to the warehouse {disk / 'warehouse'}: No space left on device: "
                                     "free space there, or set warehouse (or OFFSETLAKE_WAREHOUSE) to a disk with room")
        assert not (disk / "warehouse").exists()


def test_a_remote_warehouse_is_left_to_hadoop() -> None:
    assert check_local_warehouse(Settings(warehouse="hdfs://namenode:8020/offsetlake")) is False


def test_a_jvm_that_exits_at_start_is_told_by_its_reason_not_its_stack() -> None:
    submit = ("WARNING: Using incubator modules: jdk.incubator.vector\n"
              "26/12/02 05:24:23 WARN Utils: Set SPARK_LOCAL_IP if you need to bind to another address\n"
              'Exception in thread "main" org.apache.spark.SparkException: Master must either be yarn or start with '
              "spark, k8s, or local\n\tat org.apache.spark.deploy.SparkSubmit.error(SparkSubmit.scala:1065)\n")
    assert jvm_exit_reason(submit) == "Master must either be yarn or start with spark, k8s, or local"
    java = ("Unrecognized VM option 'NoSuchOption'\nError: Could not create the Java Virtual Machine.\n"
            "Error: A fatal exception has occurred. Program will exit.\n")
    assert jvm_exit_reason(java) == "Unrecognized VM option 'NoSuchOption'"
    assert jvm_exit_reason("") == "the JVM exited without a word"


def test_a_session_whose_settings_spark_refuses_is_told_at_once(spark) -> None:  # type: ignore[no-untyped-def]
    """PySpark's own conversion of this error recursed through the failing session state without end: asked
    through py4j's call it is one answer (a JVM session of its own, on the session's SparkContext)."""
    session_class = getattr(spark._jvm, "org.apache.spark.sql.classic.SparkSession")
    refusing = session_class(spark._jsc.sc(), {"spark.sql.ansi.enabled": "banana"})
    started = time.monotonic()
    assert session_state_error(refusing) == (
        "[INVALID_CONF_VALUE.TYPE_MISMATCH] The value 'banana' in the config \"spark.sql.ansi.enabled\" is invalid. "
        "It should be a/an 'boolean' value")
    assert time.monotonic() - started < 10
    assert session_state_error(spark._jsparkSession) is None
