"""conf/settings.py: defaults, the TOML file, environment overrides, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conf.settings import ConfigError, Settings, load_settings

EXAMPLE = Path(__file__).resolve().parents[2] / "conf" / "offsetlake.example.toml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "offsetlake.toml"
    path.write_text(text)
    return path


def test_defaults_run_locally_with_two_cores_and_few_shuffle_partitions() -> None:
    settings = load_settings(config_file=None, environ={})
    assert settings.spark.master == "local[2]"
    assert settings.spark.shuffle_partitions <= 4
    assert settings.kafka.security_protocol == "PLAINTEXT"


def test_the_shipped_example_file_is_valid() -> None:
    settings = load_settings(EXAMPLE, environ={})
    assert settings.cluster_name == "prod-eu-1"
    assert settings.kafka.bootstrap_servers == "broker-1:9092,broker-2:9092"


def test_environment_overrides_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, 'cluster_name = "from-file"\n[spark]\nshuffle_partitions = 8\n')
    settings = load_settings(path, environ={
        "OFFSETLAKE_CLUSTER_NAME": "from-env",
        "OFFSETLAKE_SPARK__EXTRA_CONF": "spark.executor.memory=2g, spark.foo=bar",
    })
    assert settings.cluster_name == "from-env"
    assert settings.spark.shuffle_partitions == 8
    assert settings.spark.extra_conf == {"spark.executor.memory": "2g", "spark.foo": "bar"}


def test_the_sql_endpoint_listens_on_loopback_port_10000_unless_the_file_or_environment_says_otherwise(
        tmp_path: Path) -> None:
    endpoint = load_settings(config_file=None, environ={}).sql_endpoint
    assert (endpoint.host, endpoint.port, endpoint.catalog_refresh_seconds, endpoint.warm_up) == (
        "127.0.0.1", 10000, 30.0, True)
    path = write(tmp_path, '[sql_endpoint]\nport = 10001\nwarm_up = false\n')
    endpoint = load_settings(path, environ={"OFFSETLAKE_SQL_ENDPOINT__CATALOG_REFRESH_SECONDS": "0"}).sql_endpoint
    assert (endpoint.port, endpoint.catalog_refresh_seconds, endpoint.warm_up) == (10001, 0.0, False)


def test_config_file_can_come_from_the_environment(tmp_path: Path) -> None:
    path = write(tmp_path, 'warehouse = "/data/lake"\n')
    assert load_settings(environ={"OFFSETLAKE_CONFIG": str(path)}).warehouse == "/data/lake"



def test_the_jvm_cache_variable_of_set_up_is_not_taken_for_an_unknown_setting(tmp_path: Path) -> None:
    settings = load_settings(environ={"OFFSETLAKE_JVM_CACHE": str(tmp_path / "jars"), "OFFSETLAKE_CLUSTER_NAME": "x"})
    assert settings.cluster_name == "x"

@pytest.mark.parametrize(
    ("environ", "key", "expected"),
    [
        ({"OFFSETLAKE_SPARK__SHUFFLE_PARTITIONS": "many"}, "spark.shuffle_partitions", "a whole number"),
        ({"OFFSETLAKE_SPARK__SHUFFLE_PARTITIONS": "0"}, "spark.shuffle_partitions", "a number >= 1"),
        ({"OFFSETLAKE_SPARK__SNAPSHOT_PARTITIONS": "0"}, "spark.snapshot_partitions", "a number >= 1"),
        ({"OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "TLS"}, "kafka.security_protocol", "one of PLAINTEXT"),
        ({"OFFSETLAKE_KAFKA__BOOTSTRAP_SERVERS": "broker-without-port"}, "kafka.bootstrap_servers", "host:port"),
        ({"OFFSETLAKE_CLUSTER_NAME": "has spaces"}, "cluster_name", "letters, digits"),
        ({"OFFSETLAKE_SPARK__UI_ENABLED": "maybe"}, "spark.ui_enabled", "true or false"),
        ({"OFFSETLAKE_SPARK__DRIVER_JAVA_OPTIONS": "-Xss4m TieredStopAtLevel=1"}, "spark.driver_java_options",
         "each starting with '-'"),
        ({"OFFSETLAKE_KAFKA__NO_SUCH_KEY": "x"}, "kafka.no_such_key", "one of bootstrap_servers"),
        ({"OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SASL_SSL"}, "kafka.sasl_mechanism", "a SASL mechanism"),
        ({"OFFSETLAKE_KAFKA__STARTING_OFFSETS": "newest"}, "kafka.starting_offsets", "earliest, latest, or a JSON"),
        ({"OFFSETLAKE_KAFKA__STARTING_OFFSETS": '{"0": -1}'}, "kafka.starting_offsets", "partition -> offset"),
        ({"OFFSETLAKE_KAFKA__STARTING_OFFSETS": '{"p0": 5}'}, "kafka.starting_offsets", "partition -> offset"),
        ({"OFFSETLAKE_SQL_ENDPOINT__PORT": "70000"}, "sql_endpoint.port", "a TCP port from 1 to 65535"),
        ({"OFFSETLAKE_SQL_ENDPOINT__PORT": "ten"}, "sql_endpoint.port", "a whole number"),
        ({"OFFSETLAKE_SQL_ENDPOINT__HOST": "127.0.0.1:10000"}, "sql_endpoint.host", "a host name or IP address"),
        ({"OFFSETLAKE_SQL_ENDPOINT__CATALOG_REFRESH_SECONDS": "-1"}, "sql_endpoint.catalog_refresh_seconds",
         "a number of seconds >= 0"),
        ({"OFFSETLAKE_GOLD__STORM_REBALANCES": "0"}, "gold.storm_rebalances", "a number >= 1"),
        ({"OFFSETLAKE_GOLD__CONCURRENT_WRITES": "4"}, "gold.concurrent_writes",
         "no such setting (removed with issue 52: a refresh writes its tables one after the other)"),
        ({"OFFSETLAKE_WAREHOUSE": "s3://bucket/wh"}, "warehouse", "Hadoop's S3 connector is s3a://"),
        ({"OFFSETLAKE_WAREHOUSE": "ftp://host/wh"}, "warehouse", "one of the schemes file, hdfs, s3a"),
        ({"OFFSETLAKE_WAREHOUSE": "hdfs:///wh"}, "warehouse", "hdfs://<namenode:port>/<path>"),
        ({"OFFSETLAKE_WAREHOUSE": "s3a:bucket"}, "warehouse", "s3a://<bucket or container>/<path>"),
        ({"OFFSETLAKE_WAREHOUSE": "file:warehouse"}, "warehouse", "an absolute file: URI"),
        ({"OFFSETLAKE_GOLD__RESOLVE_TOPIC_IDS": "true"}, "gold.resolve_topic_ids",
         "no such setting (removed 2026-11-26: gold names topic ids from the end-offset snapshots"),
    ],
)
def test_a_bad_setting_names_key_value_source_and_expectation(environ: dict[str, str], key: str,
                                                              expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(config_file=None, environ=environ)
    message = str(caught.value)
    assert caught.value.key == key
    assert key in message and expected in message
    assert "\n" not in message
    env_name = next(iter(environ))
    if caught.value.source != "default":
        assert env_name in message


def test_a_wrongly_typed_toml_value_is_reported_with_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, '[spark]\nshuffle_partitions = "four"\n')
    with pytest.raises(ConfigError, match=r"spark.shuffle_partitions = 'four' \(from .*offsetlake.toml\)"):
        load_settings(path, environ={})


def test_invalid_toml_and_missing_file_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="valid TOML"):
        load_settings(write(tmp_path, "cluster_name = \n"), environ={})
    with pytest.raises(ConfigError, match="an existing TOML file"):
        load_settings(tmp_path / "missing.toml", environ={})


def test_sasl_settings_become_a_jaas_config_for_the_java_client_and_plain_keys_for_librdkafka() -> None:
    settings = load_settings(config_file=None, environ={
        "OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SASL_SSL",
        "OFFSETLAKE_KAFKA__SASL_MECHANISM": "SCRAM-SHA-512",
        "OFFSETLAKE_KAFKA__SASL_USERNAME": "alice",
        "OFFSETLAKE_KAFKA__SASL_PASSWORD": 'p"w',
        "OFFSETLAKE_KAFKA__SSL_CA_LOCATION": "/etc/ca.pem",
    })
    java = settings.kafka.java_client_config()
    assert java["sasl.jaas.config"] == (
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="p\\"w";'
    )
    assert java["ssl.truststore.type"] == "PEM" and java["ssl.truststore.location"] == "/etc/ca.pem"
    rdkafka = settings.kafka.librdkafka_config()
    assert rdkafka["sasl.username"] == "alice" and rdkafka["ssl.ca.location"] == "/etc/ca.pem"


def test_pass_through_maps_reach_each_client_family_unchanged() -> None:
    settings = load_settings(config_file=None, environ={
        "OFFSETLAKE_KAFKA__LIBRDKAFKA": "client.id=rd",
        "OFFSETLAKE_KAFKA__JAVA_CLIENT": "client.id=java",
    })
    assert settings.kafka.librdkafka_config()["client.id"] == "rd"
    assert settings.kafka.java_client_config()["client.id"] == "java"


def test_the_cli_reports_a_bad_setting_as_one_line_without_a_traceback(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cli.main", "demo"],
        capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], timeout=120,
        env={"PATH": "/usr/bin:/bin", "OFFSETLAKE_SPARK__SHUFFLE_PARTITIONS": "lots", "HOME": str(tmp_path)},
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines == [
        "offsetlake: config error: setting spark.shuffle_partitions = 'lots' "
        "(from env OFFSETLAKE_SPARK__SHUFFLE_PARTITIONS) is invalid: expected a whole number"
    ]


def test_settings_are_immutable() -> None:
    settings = Settings()
    with pytest.raises(AttributeError):
        settings.cluster_name = "x"  # type: ignore[misc]


def test_starting_offsets_become_sparks_starting_offsets_with_every_partition_named() -> None:
    from pipelines.offsets_topic_source import kafka_source_options

    earliest = load_settings(environ={})
    assert earliest.kafka.starting_offsets == "earliest"
    assert kafka_source_options(earliest, partitions=[0, 1])["startingOffsets"] == "earliest"
    latest = load_settings(environ={"OFFSETLAKE_KAFKA__STARTING_OFFSETS": "latest"})
    assert kafka_source_options(latest, partitions=[0, 1])["startingOffsets"] == "latest"
    some = load_settings(environ={"OFFSETLAKE_KAFKA__STARTING_OFFSETS": '{"1": 950, "0": 1200}'})
    assert some.kafka.starting_offsets_by_partition() == {0: 1200, 1: 950}
    # Spark refuses specific offsets that leave a partition out: the others start at their earliest (-2).
    options = kafka_source_options(some, partitions=[0, 1, 2])
    assert json.loads(options["startingOffsets"]) == {"__consumer_offsets": {"0": 1200, "1": 950, "2": -2}}


def test_driver_java_options_follow_offsetlakes_own_on_the_driver_jvm() -> None:
    from pipelines.spark_session import spark_conf

    settings = load_settings(config_file=None, environ={
        "OFFSETLAKE_WAREHOUSE": "/tmp/wh", "OFFSETLAKE_SPARK__DRIVER_JAVA_OPTIONS": " -XX:TieredStopAtLevel=1  -Xss4m"})
    assert spark_conf(settings)["spark.driver.extraJavaOptions"].split() == [
        "-Dderby.system.home=/tmp/wh/derby", "-XX:TieredStopAtLevel=1", "-Xss4m"]
    default = load_settings(config_file=None, environ={"OFFSETLAKE_WAREHOUSE": "/tmp/wh"})
    assert spark_conf(default)["spark.driver.extraJavaOptions"] == "-Dderby.system.home=/tmp/wh/derby"


def test_delta_rebuilds_a_versions_state_with_one_task_unless_told_otherwise() -> None:
    from pipelines.spark_session import spark_conf

    default = load_settings(config_file=None, environ={"OFFSETLAKE_WAREHOUSE": "/tmp/wh"})
    assert spark_conf(default)["spark.databricks.delta.snapshotPartitions"] == "1"
    wider = load_settings(config_file=None, environ={"OFFSETLAKE_WAREHOUSE": "/tmp/wh",
                                                     "OFFSETLAKE_SPARK__SNAPSHOT_PARTITIONS": "16"})
    assert spark_conf(wider)["spark.databricks.delta.snapshotPartitions"] == "16"
    assert spark_conf(wider)["spark.sql.shuffle.partitions"] == "4"  # shuffles keep their own setting


@pytest.mark.parametrize("warehouse", ["s3a://bucket/offsetlake", "hdfs://namenode:8020/offsetlake",
                                       "abfss://lake@account.dfs.core.windows.net/offsetlake", "gs://bucket/offsetlake"])
def test_a_warehouse_uri_is_kept_as_given_not_turned_into_a_local_directory(warehouse: str) -> None:
    settings = load_settings(config_file=None, environ={"OFFSETLAKE_WAREHOUSE": warehouse + "/"})
    assert settings.warehouse_uri == warehouse and not settings.warehouse_is_local
    with pytest.raises(ConfigError, match="a local directory here"):
        settings.warehouse_path  # noqa: B018 - what needs a local directory says so in one line


def test_a_local_path_and_a_file_uri_name_the_same_local_directory(tmp_path: Path) -> None:
    by_path = load_settings(config_file=None, environ={"OFFSETLAKE_WAREHOUSE": str(tmp_path / "wh")})
    by_uri = load_settings(config_file=None, environ={"OFFSETLAKE_WAREHOUSE": f"file://{tmp_path}/wh"})
    assert by_path.warehouse_uri == by_uri.warehouse_uri == str(tmp_path / "wh")
    assert by_path.warehouse_path == by_uri.warehouse_path == tmp_path / "wh" and by_uri.warehouse_is_local


def test_storage_options_reach_spark_as_hadoop_settings_and_are_never_printed() -> None:
    from pipelines.spark_session import spark_conf

    settings = load_settings(config_file=None, environ={
        "OFFSETLAKE_STORAGE__HADOOP": "fs.s3a.access.key=AKIAEXAMPLE,fs.s3a.secret.key=s3cr3t",
        "OFFSETLAKE_STORAGE__DELTA_RS": "AWS_SECRET_ACCESS_KEY=s3cr3t"})
    conf = spark_conf(settings)
    assert conf["spark.hadoop.fs.s3a.secret.key"] == "s3cr3t"
    assert conf["spark.hadoop.fs.s3a.access.key"] == "AKIAEXAMPLE"
    assert settings.storage.delta_rs == {"AWS_SECRET_ACCESS_KEY": "s3cr3t"}
    assert "s3cr3t" not in repr(settings) and "AKIAEXAMPLE" not in repr(settings)
    with pytest.raises(ConfigError) as caught:
        load_settings(config_file=None, environ={"OFFSETLAKE_STORAGE__HADOOP": "fs.s3a.secret.key s3cr3t"})
    assert "s3cr3t" not in str(caught.value) and "storage.hadoop" in str(caught.value)


def test_the_clusters_timeout_is_thirty_seconds_unless_set_to_another_positive_number() -> None:
    assert load_settings(config_file=None, environ={}).kafka.timeout_seconds == 30.0
    assert load_settings(config_file=None, environ={"OFFSETLAKE_KAFKA__TIMEOUT_SECONDS": "2.5"}
                         ).kafka.timeout_seconds == 2.5
    with pytest.raises(ConfigError) as caught:
        load_settings(config_file=None, environ={"OFFSETLAKE_KAFKA__TIMEOUT_SECONDS": "0"})
    assert str(caught.value) == ("setting kafka.timeout_seconds = 0.0 (from env OFFSETLAKE_KAFKA__TIMEOUT_SECONDS) is "
                                 "invalid: expected a number of seconds > 0")


def test_a_spark_conf_of_a_type_offsetlake_knows_is_checked_before_a_jvm_starts() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(config_file=None, environ={"OFFSETLAKE_SPARK__EXTRA_CONF": "spark.sql.shuffle.partitions=banana"})
    assert str(caught.value) == (
        "setting spark.extra_conf.spark.sql.shuffle.partitions = 'banana' (from env OFFSETLAKE_SPARK__EXTRA_CONF) is "
        "invalid: expected a whole number >= 1 (Spark's spark.sql.shuffle.partitions)")
    # Good values pass; the confs offsetlake knows no type of are Spark's to check when the session starts.
    settings = load_settings(config_file=None, environ={
        "OFFSETLAKE_SPARK__EXTRA_CONF": "spark.executor.memory=2g,spark.ui.enabled=True,spark.sql.ansi.enabled=banana"})
    assert settings.spark.extra_conf["spark.sql.ansi.enabled"] == "banana"


def test_the_debug_log_is_in_the_users_cache_unless_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert Settings().debug_log_path == tmp_path / "offsetlake" / "offsetlake-debug.log"
    assert load_settings(config_file=None, environ={"OFFSETLAKE_DEBUG_LOG": "/var/log/offsetlake.log"}
                         ).debug_log_path == Path("/var/log/offsetlake.log")
