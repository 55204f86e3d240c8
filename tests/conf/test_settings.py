"""conf/settings.py: defaults, the TOML file, environment overrides, and one-line errors."""

from __future__ import annotations

import json
import re
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
         "no such setting (removed: a refresh writes its tables one after the other)"),
        ({"OFFSETLAKE_WAREHOUSE": "s3://bucket/wh"}, "warehouse", "Hadoop's S3 connector is s3a://"),
        ({"OFFSETLAKE_WAREHOUSE": "ftp://host/wh"}, "warehouse", "one of the schemes file, hdfs, s3a"),
        ({"OFFSETLAKE_WAREHOUSE": "hdfs:///wh"}, "warehouse", "hdfs://<namenode:port>/<path>"),
        ({"OFFSETLAKE_WAREHOUSE": "s3a:bucket"}, "warehouse", "s3a://<bucket or container>/<path>"),
        ({"OFFSETLAKE_WAREHOUSE": "file:warehouse"}, "warehouse", "an absolute file: URI"),
        ({"OFFSETLAKE_GOLD__RESOLVE_TOPIC_IDS": "true"}, "gold.resolve_topic_ids",
         "no such setting (removed: gold names topic ids from the end-offset snapshots"),
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


def test_sasl_settings_become_a_jaas_config_for_the_java_client_and_plain_keys_for_librdkafka(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n", encoding="utf-8")
    settings = load_settings(config_file=None, environ={
        "OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SASL_SSL",
        "OFFSETLAKE_KAFKA__SASL_MECHANISM": "SCRAM-SHA-512",
        "OFFSETLAKE_KAFKA__SASL_USERNAME": "alice",
        "OFFSETLAKE_KAFKA__SASL_PASSWORD": 'p"w',
        "OFFSETLAKE_KAFKA__SSL_CA_LOCATION": str(ca),
    })
    java = settings.kafka.java_client_config()
    assert java["sasl.jaas.config"] == (
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="p\\"w";'
    )
    assert java["ssl.truststore.type"] == "PEM" and java["ssl.truststore.location"] == str(ca)
    rdkafka = settings.kafka.librdkafka_config()
    assert rdkafka["sasl.username"] == "alice" and rdkafka["ssl.ca.location"] == str(ca)


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

    log4j2 = f"-Dlog4j2.configurationFile={Path(__file__).resolve().parents[2] / 'conf' / 'log4j2.properties'}"
    settings = load_settings(config_file=None, environ={
        "OFFSETLAKE_WAREHOUSE": "/tmp/wh", "OFFSETLAKE_SPARK__DRIVER_JAVA_OPTIONS": " -XX:TieredStopAtLevel=1  -Xss4m"})
    assert spark_conf(settings)["spark.driver.extraJavaOptions"].split() == [
        "-Dderby.system.home=/tmp/wh/derby", log4j2, "-XX:TieredStopAtLevel=1", "-Xss4m"]
    default = load_settings(config_file=None, environ={"OFFSETLAKE_WAREHOUSE": "/tmp/wh"})
    assert spark_conf(default)["spark.driver.extraJavaOptions"] == f"-Dderby.system.home=/tmp/wh/derby {log4j2}"


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


SECRET = "hunter2-do-not-print"
SECTIONS = ("spark", "kafka", "lag", "gold", "maintenance", "quality", "sql_endpoint", "storage")


@pytest.mark.parametrize(("text", "key"), [
    ('[sparkk]\nmaster = "local[2]"\n', "sparkk"),
    ('[Spark]\nmaster = "local[2]"\n', "Spark"),
    ("[sparkk]\n", "sparkk"),  # an empty table is no less a typo
])
def test_a_misspelled_section_is_reported_with_the_section_names(tmp_path: Path, text: str, key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, text), environ={})
    message = str(caught.value)
    assert caught.value.key == key
    assert all(section in message for section in SECTIONS), message
    assert "(did you mean spark?)" in message and "top-level settings are cluster_name, warehouse" in message
    assert "\n" not in message


def test_a_misspelled_section_of_an_environment_variable_is_reported_with_the_section_names() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(config_file=None, environ={"OFFSETLAKE_SPARKK__MASTER": "local[2]"})
    message = str(caught.value)
    assert caught.value.key == "sparkk.master" and "(from env OFFSETLAKE_SPARKK__MASTER)" in message
    assert all(section in message for section in SECTIONS) and "(did you mean spark?)" in message


@pytest.mark.parametrize(("environ", "key", "hint"), [
    ({"OFFSETLAKE_SPARK_MASTER": "yarn"}, "spark_master",
     "did you mean OFFSETLAKE_SPARK__MASTER, with two underscores?"),
    ({"OFFSETLAKE_SQL_ENDPOINT_PORT": "1"}, "sql_endpoint_port", "did you mean OFFSETLAKE_SQL_ENDPOINT__PORT"),
    ({"OFFSETLAKE_MASTER": "yarn"}, "master", "did you mean OFFSETLAKE_SPARK__MASTER?"),
    ({"OFFSETLAKE_CLUSTERNAME": "x"}, "clustername", "did you mean cluster_name?"),
    ({"OFFSETLAKE_SPARK": "yarn"}, "spark", "expected a table [spark] of settings (in the environment "
                                            "OFFSETLAKE_SPARK__<KEY>)"),
])
def test_an_unknown_top_level_name_lists_the_top_level_settings_and_points_to_the_likely_one(
        environ: dict[str, str], key: str, hint: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(config_file=None, environ=environ)
    assert caught.value.key == key
    assert hint in str(caught.value)


def test_a_sections_key_written_at_the_top_of_the_file_says_which_section_it_belongs_in(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"setting bootstrap_servers = 'b:9092' .*\(bootstrap_servers belongs in "
                                          r"\[kafka\]\)"):
        load_settings(write(tmp_path, 'bootstrap_servers = "b:9092"\n'), environ={})


@pytest.mark.parametrize(("text", "environ", "key"), [
    (f'[kafka]\nsasl_pasword = "{SECRET}"\n', {}, "kafka.sasl_pasword"),
    (f'[kafka]\nsasl_passwd = "{SECRET}"\n', {}, "kafka.sasl_passwd"),
    (f'sasl_password = "{SECRET}"\n', {}, "sasl_password"),
    ("[kafka]\nsasl_password = 123456789\n", {}, "kafka.sasl_password"),
    (f'[kafka]\noauth_token = "{SECRET}"\n', {}, "kafka.oauth_token"),
    (f'[kafka]\napi_credentials = "{SECRET}"\n', {}, "kafka.api_credentials"),
    (f'[kafka]\nlibrdkafka = "sasl.password={SECRET}"\n', {}, "kafka.librdkafka"),
    (f'[kafka]\njava_client = ["{SECRET}"]\n', {}, "kafka.java_client"),
    (f'[kafka.librdkafka]\n"ssl.key.location" = "/no/such/{SECRET}.pem"\n', {}, "kafka.librdkafka.ssl.key.location"),
    (f'[kafka.java_client]\n"ssl.truststore.location" = "/no/such/{SECRET}.jks"\n', {},
     "kafka.java_client.ssl.truststore.location"),
    (f'[spark]\nextra_conf = "spark.hadoop.fs.s3a.secret.key={SECRET}"\n', {}, "spark.extra_conf"),
    (f'[storage]\ndelta_rs = "AWS_SECRET_ACCESS_KEY={SECRET}"\n', {}, "storage.delta_rs"),
    (f'[storage]\nhadop = {{ "fs.s3a.secret.key" = "{SECRET}" }}\n', {}, "storage.hadop"),
    (f'[kafak]\nsasl_password = "{SECRET}"\n', {}, "kafak"),
    ("", {"OFFSETLAKE_KAFKA__SASL_PASWORD": SECRET}, "kafka.sasl_pasword"),
    ("", {"OFFSETLAKE_SASL_PASSWORD": SECRET}, "sasl_password"),
    ("", {"OFFSETLAKE_KAFAK__SASL_PASSWORD": SECRET}, "kafak.sasl_password"),
    ("", {"OFFSETLAKE_KAFKA__LIBRDKAFKA": f"sasl.password {SECRET}"}, "kafka.librdkafka"),
    ("", {"OFFSETLAKE_KAFKA__JAVA_CLIENT": f"=sasl.jaas.config={SECRET}"}, "kafka.java_client"),
    ("", {"OFFSETLAKE_SPARK__EXTRA_CONF": f"spark.hadoop.fs.s3a.secret.key:{SECRET}"}, "spark.extra_conf"),
    ("", {"OFFSETLAKE_STORAGE__DELTA_RS": f"AWS_SECRET_ACCESS_KEY {SECRET}"}, "storage.delta_rs"),
])
def test_a_value_that_is_or_may_be_a_secret_is_hidden_in_the_error(tmp_path: Path, text: str,
                                                                   environ: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, text) if text else None, environ=environ)
    message = str(caught.value)
    assert caught.value.key == key
    assert f"setting {key} = <hidden> (from " in message
    assert SECRET not in message and "123456789" not in message
    assert SECRET not in repr(vars(caught.value))  # nor kept on the exception for someone to print


def test_a_misspelled_password_is_hidden_and_its_right_name_suggested(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"= <hidden> .*\(did you mean sasl_password\?\)$"):
        load_settings(write(tmp_path, f'[kafka]\nsasl_pasword = "{SECRET}"\n'), environ={})
    with pytest.raises(ConfigError, match=r"\(did you mean OFFSETLAKE_KAFKA__SASL_PASSWORD\?\)$"):
        load_settings(config_file=None, environ={"OFFSETLAKE_SASL_PASSWORD": SECRET})


def test_a_value_that_holds_no_secret_is_still_shown(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"setting kafka.sasl_username = 42 "):
        load_settings(write(tmp_path, "[kafka]\nsasl_username = 42\n"), environ={})
    with pytest.raises(ConfigError, match=r"setting kafka.bootstrap_server = 'b:9092' .*\(did you mean "
                                          r"bootstrap_servers\?\)"):
        load_settings(write(tmp_path, '[kafka]\nbootstrap_server = "b:9092"\n'), environ={})


def test_a_printed_settings_object_shows_no_password_and_no_pass_through_value() -> None:
    settings = load_settings(config_file=None, environ={
        "OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SASL_PLAINTEXT",
        "OFFSETLAKE_KAFKA__SASL_MECHANISM": "PLAIN",
        "OFFSETLAKE_KAFKA__SASL_USERNAME": "alice",
        "OFFSETLAKE_KAFKA__SASL_PASSWORD": SECRET,
        "OFFSETLAKE_KAFKA__LIBRDKAFKA": f"ssl.key.password={SECRET}-rd",
        "OFFSETLAKE_KAFKA__JAVA_CLIENT": f"ssl.key.password={SECRET}-java",
        "OFFSETLAKE_SPARK__EXTRA_CONF": f"spark.hadoop.fs.s3a.secret.key={SECRET}-spark",
    })
    assert settings.kafka.sasl_password.get_secret_value() == SECRET  # kept for the clients
    for text in (repr(settings), str(settings), repr(settings.kafka), repr(settings.spark)):
        assert SECRET not in text
    assert "sasl_username='alice'" in repr(settings.kafka)


@pytest.mark.parametrize(("environ", "key", "expected"), [
    ({"OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SASL_SSL", "OFFSETLAKE_KAFKA__SASL_MECHANISM": "SCRAM-SHA-512"},
     "kafka.sasl_username", "a user name because sasl_mechanism is SCRAM-SHA-512"),
    ({"OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SASL_PLAINTEXT", "OFFSETLAKE_KAFKA__SASL_MECHANISM": "PLAIN",
      "OFFSETLAKE_KAFKA__SASL_USERNAME": "alice"},
     "kafka.sasl_password", "a password because sasl_mechanism is PLAIN"),
    ({"OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SASL_PLAINTEXT", "OFFSETLAKE_KAFKA__SASL_MECHANISM": "PLAIN",
      "OFFSETLAKE_KAFKA__SASL_USERNAME": "alice", "OFFSETLAKE_KAFKA__SASL_PASSWORD": ""},
     "kafka.sasl_password", "a password because sasl_mechanism is PLAIN"),
    ({"OFFSETLAKE_KAFKA__SASL_MECHANISM": "PLAIN"},
     "kafka.security_protocol", "SASL_PLAINTEXT or SASL_SSL because kafka.sasl_mechanism is set"),
    ({"OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SSL", "OFFSETLAKE_KAFKA__SASL_USERNAME": "alice"},
     "kafka.security_protocol", "SASL_PLAINTEXT or SASL_SSL because kafka.sasl_username is set"),
    ({"OFFSETLAKE_KAFKA__SASL_PASSWORD": SECRET},
     "kafka.security_protocol", "SASL_PLAINTEXT or SASL_SSL because kafka.sasl_password is set"),
    ({"OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SSL", "OFFSETLAKE_KAFKA__SSL_CA_LOCATION": "/no/such/ca.pem"},
     "kafka.ssl_ca_location", "an existing PEM file of CA certificates"),
    ({"OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SSL", "OFFSETLAKE_KAFKA__SSL_CA_LOCATION": str(EXAMPLE.parent)},
     "kafka.ssl_ca_location", "an existing PEM file of CA certificates"),  # a directory
    ({"OFFSETLAKE_KAFKA__SSL_CA_LOCATION": str(EXAMPLE)},
     "kafka.security_protocol", "SSL or SASL_SSL because kafka.ssl_ca_location is set"),
    ({"OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SSL", "OFFSETLAKE_KAFKA__LIBRDKAFKA": "ssl.certificate.location=/no/c"},
     "kafka.librdkafka.ssl.certificate.location", "an existing file"),
    ({"OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SSL", "OFFSETLAKE_KAFKA__JAVA_CLIENT": "ssl.keystore.location=/no/k"},
     "kafka.java_client.ssl.keystore.location", "an existing file"),
])
def test_sasl_and_ssl_settings_that_cannot_connect_are_refused_when_the_settings_load(
        environ: dict[str, str], key: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(config_file=None, environ=environ)
    assert caught.value.key == key
    assert f"expected {expected}" in str(caught.value)
    assert SECRET not in str(caught.value)


def test_sasl_credentials_may_come_through_both_pass_through_maps_and_probe_is_a_ca_location() -> None:
    jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="a" password="b";'
    settings = load_settings(config_file=None, environ={
        "OFFSETLAKE_KAFKA__SECURITY_PROTOCOL": "SASL_SSL",
        "OFFSETLAKE_KAFKA__SASL_MECHANISM": "SCRAM-SHA-256",
        "OFFSETLAKE_KAFKA__LIBRDKAFKA": "sasl.username=a,sasl.password=b,ssl.ca.location=probe",
        "OFFSETLAKE_KAFKA__JAVA_CLIENT": f"sasl.jaas.config={jaas}",
    })
    assert settings.kafka.java_client_config()["sasl.jaas.config"] == jaas
    assert settings.kafka.librdkafka_config()["ssl.ca.location"] == "probe"


def documented_variables() -> set[str]:
    """Every OFFSETLAKE_* name the README, the documentation, the Makefile and the code (DAGs, set-up, test helpers)
    mention; test
    modules are left out, since they also name bad variables on purpose."""
    root = EXAMPLE.parents[1]
    files = [root / "README.md", root / "Makefile", *(
        path for folder in ("cli", "conf", "dags", "docs", "jvm", "pipelines", "broker", "dashboard", "quality",
                                                                 "tests")
        for path in (root / folder).rglob("*") if path.suffix in (".py", ".md", ".toml")
        and not path.name.startswith("test_"))]
    return {name for path in files for name in re.findall(r"\bOFFSETLAKE_[A-Z0-9_]*[A-Z0-9]\b", path.read_text())}


def names_a_setting(variable: str) -> bool:
    """Whether ``variable`` is OFFSETLAKE_<KEY> of a top-level setting or OFFSETLAKE_<SECTION>__<KEY> (README)."""
    from pydantic import BaseModel

    rest = variable.removeprefix("OFFSETLAKE_").lower()
    section, _, key = rest.partition("__") if "__" in rest else ("", "", rest)
    holder = getattr(Settings(), section, None) if section else Settings()
    return (isinstance(holder, BaseModel) and key in type(holder).model_fields
            and not isinstance(getattr(holder, key), BaseModel))  # OFFSETLAKE_SPARK is no setting


def test_every_offsetlake_variable_the_docs_tell_users_to_set_is_accepted_by_the_settings(tmp_path: Path) -> None:
    others = sorted(name for name in documented_variables() if not names_a_setting(name))
    # The DAGs' own, at least (docs/operations.md, "Deploying"): the scan must find them.
    assert {"OFFSETLAKE_BIN", "OFFSETLAKE_CONFIG", "OFFSETLAKE_SCENARIOS_DIR", "OFFSETLAKE_VALIDATE_WAREHOUSE"} <= set(
        others)
    config = write(tmp_path, 'cluster_name = "x"\n')
    for name in others:  # each set to a path, as users set them (OFFSETLAKE_CONFIG to this file)
        assert load_settings(environ={"OFFSETLAKE_CONFIG": str(config), name: str(config)}).cluster_name == "x", name


def test_a_config_file_that_cannot_be_read_as_text_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"setting config file = '.*' is invalid: expected a readable TOML file"):
        load_settings(tmp_path, environ={})  # a directory
    binary = tmp_path / "offsetlake.toml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="expected a TOML file in UTF-8"):
        load_settings(binary, environ={})


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
        "setting spark.extra_conf.spark.sql.shuffle.partitions = <hidden> (from env OFFSETLAKE_SPARK__EXTRA_CONF) is "
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


def test_settings_built_in_code_take_only_their_arguments_and_are_checked_all_the_same(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic import ValidationError

    from conf.settings import SparkSettings

    monkeypatch.setenv("OFFSETLAKE_CLUSTER_NAME", "from-env")
    assert Settings().cluster_name == "local" and Settings(cluster_name="x").cluster_name == "x"
    with pytest.raises(ValidationError, match="a number >= 1"):
        SparkSettings(shuffle_partitions=0)
    with pytest.raises(ValidationError) as caught:
        Settings(kafka={"sasl_password": SECRET})  # a password without SASL
    assert SECRET not in str(caught.value) and SECRET not in repr(caught.value)


@pytest.mark.parametrize(("text", "key", "expected"), [
    ('[spark]\nshuffle_partitions = 4.0\n', "spark.shuffle_partitions", "a whole number"),
    ('[spark]\nshuffle_partitions = true\n', "spark.shuffle_partitions", "a whole number"),
    ('[spark]\nui_enabled = "true"\n', "spark.ui_enabled", "true or false"),
    ('[kafka]\ntimeout_seconds = "5"\n', "kafka.timeout_seconds", "a number"),
])
def test_a_file_value_of_another_type_is_refused_though_the_environment_may_spell_it(
        tmp_path: Path, text: str, key: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(write(tmp_path, text), environ={})
    assert caught.value.key == key and str(caught.value).endswith(f"expected {expected}")
