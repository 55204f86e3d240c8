"""pipelines/sql_endpoint.py without a JVM: the checks made before Spark starts, and the serving session's settings.

The server itself is tested over the wire in tests/cli/test_serve_sql.py.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from conf.settings import Settings, SparkSettings
from pipelines.spark_session import spark_conf
from pipelines.sql_endpoint import (
    EndpointError,
    check_port_free,
    check_warehouse,
    jdbc_url,
    session_settings,
    sqlalchemy_url,
    tables_on_disk,
)


def test_the_urls_name_the_host_port_and_default_database() -> None:
    assert jdbc_url("127.0.0.1", 10001) == "jdbc:hive2://127.0.0.1:10001/default"
    assert sqlalchemy_url("127.0.0.1", 10001) == "hive://127.0.0.1:10001/default"


def test_a_port_another_socket_listens_on_is_refused_and_a_free_one_is_not() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(EndpointError, match=f"cannot listen on 127.0.0.1:{port}: Address already in use "
                                                r"\(setting sql_endpoint.port"):
            check_port_free("127.0.0.1", port)
    check_port_free("127.0.0.1", port)  # released: free again


def test_a_warehouse_without_tables_is_refused_and_one_with_a_delta_table_is_not(tmp_path: Path) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    settings = Settings(warehouse=str(tmp_path / "warehouse"))
    with pytest.raises(EndpointError, match="does not exist"):
        check_warehouse(settings)
    (tmp_path / "warehouse" / "gold").mkdir(parents=True)
    with pytest.raises(EndpointError, match="holds no offsetlake table yet"):
        check_warehouse(settings)
    (tmp_path / "warehouse" / "gold" / "rebalance_events" / "_delta_log").mkdir(parents=True)  # no commit yet
    with pytest.raises(EndpointError, match="holds no offsetlake table yet"):
        check_warehouse(settings)
    write_deltalake(str(tmp_path / "warehouse" / "gold" / "rebalance_events"), pa.table({"x": [1]}))
    check_warehouse(settings)
    assert tables_on_disk(settings) == {"gold.rebalance_events"}


def test_the_serving_session_loads_the_extra_jars_from_the_driver_class_path_and_keeps_derby_home_unset(
        tmp_path: Path) -> None:
    settings = Settings(warehouse=str(tmp_path / "warehouse"),
                        spark=SparkSettings(driver_java_options="-XX:TieredStopAtLevel=1",
                                            extra_conf={"spark.sql.codegen.wholeStage": "false"}))
    served = spark_conf(session_settings(settings))
    jars = spark_conf(settings)["spark.jars"].split(",")
    assert served["spark.driver.extraClassPath"].split(os.pathsep) == jars
    assert served["spark.jars"] == spark_conf(settings)["spark.jars"]  # executors still get them
    options = served["spark.driver.extraJavaOptions"].split()
    assert "-Dderby.system.home" not in served["spark.driver.extraJavaOptions"]
    assert options == [f"-Dderby.stream.error.file={tmp_path / 'warehouse' / 'derby.log'}",
                       "-XX:TieredStopAtLevel=1"]
    assert served["spark.sql.codegen.wholeStage"] == "false"
    assert "spark.driver.extraClassPath" not in settings.spark.extra_conf  # the input is left as it was
