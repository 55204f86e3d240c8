"""offsetlake's settings: one typed place, three layers.

Layers, later wins:
  1. the defaults of the models below;
  2. a TOML file (``offsetlake.toml`` in the working directory, or the path in
     ``OFFSETLAKE_CONFIG``, or ``--config`` on the command line);
  3. environment variables ``OFFSETLAKE_<SECTION>__<KEY>`` (double underscore
     between section and key), e.g. ``OFFSETLAKE_KAFKA__BOOTSTRAP_SERVERS``.
     Top-level keys have no section: ``OFFSETLAKE_CLUSTER_NAME``.

pydantic-settings reads the file (``TomlConfigSettingsSource``) and the environment (``EnvSettingsSource``), and
pydantic checks every value: strictly for the file's typed values, from text for the environment's. What stays
written here is the edge: a ``ValidationError`` becomes one ``ConfigError`` line naming the key, the bad value
(or ``<hidden>``), where it came from and what is expected, instead of a stack trace from deep inside Spark or
librdkafka; and a variable that names no setting is refused with a hint, since the environment source ignores it.
``Settings(...)`` built in code is its defaults and arguments only, never the process's environment.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import math
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, get_origin
from urllib.parse import unquote, urlparse

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, SecretStr, ValidationError, \
    field_validator, model_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict, TomlConfigSettingsSource
from pydantic_settings.sources.utils import parse_env_vars

ENV_PREFIX = "OFFSETLAKE_"
#: Variables with the prefix that are not settings, and who reads them. The DAGs' variables reach the CLI
#: because each task's command inherits the worker's environment (dags/offsetlake_commands.py).
NOT_SETTINGS = {
    ENV_PREFIX + "CONFIG": "the settings file (this module, and the DAGs' param config)",
    ENV_PREFIX + "JVM_CACHE": "where set-up keeps the JVM jars (jvm/artifacts.py, before any settings exist)",
    ENV_PREFIX + "MAVEN_REPO": "the local Maven repository set-up resolves into (jvm/artifacts.py)",
    ENV_PREFIX + "BIN": "the offsetlake executable the DAGs run (dags/offsetlake_commands.py)",
    ENV_PREFIX + "SCENARIOS_DIR": "the reference_validation DAG's scenarios (dags/reference_validation.py)",
    ENV_PREFIX + "VALIDATE_WAREHOUSE": "reference_validation's scratch warehouse (dags/reference_validation.py)",
    ENV_PREFIX + "KAFKA_LIBS": "the Kafka jars of the tests' Java oracles (tests/coordinator/oracle.py)",
}
DEFAULT_CONFIG_FILE = "offsetlake.toml"

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_CLUSTER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
BOOTSTRAP_SERVERS = re.compile(r"^[^,\s]+:\d+(,[^,\s]+:\d+)*$")
_SPARK_MEMORY = re.compile(r"^\d+[kmgt]?$", re.IGNORECASE)
_LOG4J_LEVELS = ("ALL", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF", "TRACE")


HIDDEN = "<hidden>"
#: Settings that hold a credential (``SecretStr`` in the model).
SECRET_SETTINGS = frozenset({"kafka.sasl_password"})
#: Maps passed through to a client or connector unchanged: any of their values may be a credential
#: (sasl.jaas.config, ssl.key.password, fs.s3a.secret.key, AWS_SECRET_ACCESS_KEY, ...).
PASS_THROUGH_MAPS = ("kafka.librdkafka", "kafka.java_client", "spark.extra_conf", "storage.hadoop", "storage.delta_rs")
_SECRET_WORDS = ("pass", "pwd", "secret", "token", "key", "credential", "jaas")


def hides_value(key: str, value: object = None) -> bool:
    """Whether an error about ``key`` must show ``<hidden>`` instead of its value: a credential, anything in
    ``[storage]`` or a pass-through map, a table of values, and any key whose name says or suggests a secret
    (a misspelled ``sasl_pasword`` holds the password all the same)."""
    if isinstance(value, (dict, SecretStr)) or key in SECRET_SETTINGS or key.startswith("storage."):
        return True
    if any(key == name or key.startswith(name + ".") for name in PASS_THROUGH_MAPS):
        return True
    leaf = key.rsplit(".", 1)[-1].lower()
    secret_names = [name.rsplit(".", 1)[-1] for name in SECRET_SETTINGS]
    return any(word in leaf for word in _SECRET_WORDS) or bool(difflib.get_close_matches(leaf, secret_names, n=1))


class ConfigError(ValueError):
    """A setting has a value offsetlake cannot use.

    ``str()`` is a single line meant to be shown to the user as is. A value that is or may be a secret
    (``hides_value``) is neither in the message nor kept on the exception.
    """

    def __init__(self, key: str, value: object, expected: str, source: str = "") -> None:
        hidden = hides_value(key, value)
        self.key = key
        self.value = HIDDEN if hidden else value
        self.expected = expected
        self.source = source
        where = f" (from {source})" if source else ""
        shown = HIDDEN if hidden else repr(value)
        super().__init__(f"setting {key} = {shown}{where} is invalid: expected {expected}")


def user_cache_dir() -> Path:
    """offsetlake's per-user cache (``$XDG_CACHE_HOME/offsetlake`` or ``~/.cache/offsetlake``): what one clone
    builds once and another may reuse (the page's Vega bundle, the offset-commit UDF jar; the Makefile's
    pyspark wheel goes to its ``wheels/``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "offsetlake"


# --- rules: each refusal carries the words of its one-line error -------------------------------------------------

def _refuse(expected: str, value: object, *at: str) -> PydanticCustomError:
    """A refusal for ``load_settings`` to turn into a ConfigError: ``at`` names the key below the validator's
    location (a model validator's field, a map's entry), ``value`` is the value as checked (``0.0``, not ``"0"``)."""
    return PydanticCustomError("offsetlake", "{expected}", {"expected": expected, "value": value, "at": at})


def _rule(expected: str, ok: Callable[[Any], bool]) -> AfterValidator:
    def check(value: Any) -> Any:
        if not ok(value):
            raise _refuse(expected, value)
        return value

    return AfterValidator(check)


class _EnvText(str):
    """A table's value as an environment variable gives it (``name=value,name=value``), not a TOML table."""


def _table(value: object) -> dict[str, str]:
    if isinstance(value, _EnvText):
        out: dict[str, str] = {}
        for item in filter(None, (part.strip() for part in value.split(","))):
            name, sep, val = item.partition("=")
            if not sep or not name:
                raise _refuse("comma-separated name=value pairs", str(value))
            out[name.strip()] = val.strip()
        return out
    if not isinstance(value, dict):
        raise _refuse("a table of string keys and values", value)
    return {str(k): str(v) for k, v in value.items()}


Table = Annotated[dict[str, str], BeforeValidator(_table)]
Count = Annotated[int, _rule("a number >= 1", lambda n: n >= 1)]
NonNegative = Annotated[int, _rule("a number >= 0", lambda n: n >= 0)]
Fraction = Annotated[float, _rule("a fraction from 0.0 to 1.0", lambda x: 0.0 <= x <= 1.0)]


class _Section(BaseModel):
    """A section of the settings: immutable (a change is ``model_copy(update=...)``), unknown keys refused."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, hide_input_in_errors=True)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"settings are immutable: {type(self).__name__}.{name} cannot be assigned")


# --- the model ---------------------------------------------------------------------------------------------------

#: Spark confs of a type offsetlake knows, because it sets them from typed settings (pipelines/spark_session.py) or the
#: README's cluster examples set them: a bad value of one in ``spark.extra_conf`` is refused before a JVM starts.
#: Spark checks every conf itself when the session starts (``pipelines.spark_session.SparkStartError``); this
#: only saves that start for the usual ones.
_TYPED_SPARK_CONF: dict[str, str] = {
    "spark.sql.shuffle.partitions": "count", "spark.default.parallelism": "count",
    "spark.databricks.delta.snapshotPartitions": "count", "spark.executor.cores": "count",
    "spark.executor.instances": "count", "spark.cores.max": "count",
    "spark.driver.memory": "memory", "spark.executor.memory": "memory", "spark.ui.enabled": "bool",
}
_TYPED_SPARK_CONF_EXPECTED = {"count": "a whole number >= 1", "memory": "a JVM memory size such as 1g or 512m",
                              "bool": "true or false"}


class SparkSettings(_Section):
    """How the SparkSession is built (pipelines/spark_session.py)."""

    master: Annotated[str, _rule("a Spark master URL such as local[2] or yarn", str.strip)] = Field(
        "local[2]", description="The Spark master: local[2], spark://host:7077, yarn, k8s://https://...")
    app_name: str = Field("offsetlake", description="The Spark application's name, as the Spark UI and a cluster "
                                                    "manager show it.")
    shuffle_partitions: Count = Field(4, description="Partitions of every shuffle (spark.sql.shuffle.partitions); "
                                                     "few suit the small batches of a small machine.")
    snapshot_partitions: Count = Field(1, description=(
        "Tasks Delta rebuilds a table's state with (its log replayed into the files of one version): each read of a "
        "new version, each MERGE and idempotent append (spark.databricks.delta.snapshotPartitions, Delta's default "
        "50). A log holds one action per file, a few MB even for a table of thousands of files, so one task does it; "
        "each more is scheduling (one task made `run`'s refresh faster than four; recorded in CHANGELOG.md). Raise "
        "it for tables of hundreds of thousands of files."))
    driver_memory: Annotated[str, _rule("a JVM memory size such as 1g or 512m", _SPARK_MEMORY.match)] = Field(
        "1g", description="The driver JVM's heap (spark.driver.memory), e.g. 1g or 512m.")
    ui_enabled: bool = Field(False, description="Whether the driver serves the Spark UI (spark.ui.enabled).")
    log_level: Annotated[str, _rule("a log4j level such as WARN", lambda v: v.upper() in _LOG4J_LEVELS)] = Field(
        "WARN", description="The log4j level of Spark's own log, e.g. WARN or ERROR.")
    driver_java_options: Annotated[str, _rule("JVM options separated by spaces, each starting with '-'",
                                              lambda v: all(o.startswith("-") for o in v.split()))] = Field(
        "", description="JVM options of the driver, after offsetlake's own (spark.driver.extraJavaOptions). E.g. "
                        '"-XX:TieredStopAtLevel=1" for one-shot commands (C2 compiles code a short run never gets '
                        "back).")
    extra_conf: Table = Field(default_factory=dict, repr=False, description=(
        "Any other Spark conf, passed through unchanged (e.g. spark.kubernetes.*); may hold credentials, so never "
        "printed."))

    @field_validator("extra_conf")
    @classmethod
    def _typed_confs(cls, extra_conf: dict[str, str]) -> dict[str, str]:
        for key, value in extra_conf.items():
            kind = _TYPED_SPARK_CONF.get(key)
            text = value.strip()
            valid = (kind is None or (kind == "count" and text.isdigit() and int(text) >= 1)
                     or (kind == "memory" and _SPARK_MEMORY.match(text) is not None)
                     or (kind == "bool" and text.lower() in ("true", "false")))
            if not valid:
                raise _refuse(f"{_TYPED_SPARK_CONF_EXPECTED[kind]} (Spark's {key})", value, key)
        return extra_conf


def _valid_starting_offsets(text: str) -> bool:
    if text in ("earliest", "latest"):
        return True
    try:
        parsed = json.loads(text)
    except ValueError:
        return False
    return isinstance(parsed, dict) and all(
        isinstance(p, str) and p.isdigit() and isinstance(o, int) and not isinstance(o, bool) and o >= 0
        for p, o in parsed.items())


#: Pass-through options naming a file the client reads (librdkafka's CONFIGURATION.md; the Java client's
#: SslConfigs). librdkafka's ssl.ca.location may also be a directory, or "probe" (the system's stores).
_LIBRDKAFKA_FILES = ("ssl.ca.location", "ssl.certificate.location", "ssl.key.location", "ssl.keystore.location",
                     "ssl.crl.location", "sasl.kerberos.keytab")
_JAVA_CLIENT_FILES = ("ssl.truststore.location", "ssl.keystore.location")


class KafkaSettings(_Section):
    """How every Kafka client offsetlake creates connects to the cluster.

    The typed fields cover the common cases and are translated for both client
    families: librdkafka (confluent-kafka: admin, producers, test consumers) and
    the Java client inside Spark's Kafka source. Anything else goes through the
    two pass-through maps unchanged, because the two families name options
    differently (``ssl.ca.location`` vs ``ssl.truststore.location``).

    The password is a ``SecretStr``; it and the pass-through maps (which may hold credentials) are never printed.
    """

    bootstrap_servers: Annotated[str, _rule("host:port[,host:port...]", BOOTSTRAP_SERVERS.fullmatch)] = Field(
        "127.0.0.1:9092", description="The cluster's brokers to bootstrap from, host:port[,host:port...].")
    security_protocol: Annotated[str, _rule(f"one of {', '.join(SECURITY_PROTOCOLS)}",
                                            lambda v: v in SECURITY_PROTOCOLS)] = Field(
        "PLAINTEXT", description="Kafka's security.protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.")
    sasl_mechanism: Annotated[str | None, _rule(f"one of {', '.join(SASL_MECHANISMS)}",
                                                lambda v: v is None or v in SASL_MECHANISMS)] = Field(
        None, description="PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512; needs a SASL_* security_protocol.")
    sasl_username: str | None = Field(None, description="The SASL user name (with sasl_mechanism).")
    sasl_password: SecretStr | None = Field(None, description=(
        "The SASL password; a secret, never printed (for the clients: `get_secret_value()`)."))
    ssl_ca_location: str | None = Field(None, description=(
        "A PEM file of the CA certificates to trust: librdkafka's ssl.ca.location, and a PEM trust store for the "
        "Java client (KIP-651, 2.7); needs SSL or SASL_SSL."))
    librdkafka: Table = Field(default_factory=dict, repr=False, description=(
        "Passed unchanged to confluent-kafka clients, in librdkafka's names; may hold credentials, so never "
        "printed."))
    java_client: Table = Field(default_factory=dict, repr=False, description=(
        "Passed unchanged to Spark's Kafka source, in the Java client's names without Spark's kafka. prefix; may "
        "hold credentials, so never printed."))
    starting_offsets: Annotated[str, _rule('earliest, latest, or a JSON object of partition -> offset such as '
                                           '{"0": 42}', _valid_starting_offsets)] = Field(
        "earliest", description=(
            'Where a *new* ingest (no checkpoint yet) starts reading: "earliest" (all of the topic\'s retained '
            'history), "latest" (only what is written from now on), or a JSON object of partition -> offset, e.g. '
            "'{\"0\": 1200, \"1\": 950}' (partitions not named start at their earliest offset). Spark's Kafka "
            "source ``startingOffsets``; once a checkpoint exists it wins."))
    timeout_seconds: Annotated[float, _rule("a number of seconds > 0", lambda x: x > 0)] = Field(
        30.0, description=(
            "How long a command waits for the cluster to answer its first request (the check of the cluster and the "
            "source topic before Spark starts, and each metadata request) before it reports the cluster "
            "unreachable."))

    @model_validator(mode="after")
    def _security_that_can_connect(self) -> KafkaSettings:
        """SASL and SSL settings that cannot work together, found when the settings load rather than by the first
        client that connects (librdkafka's or the JVM's, after Spark has started)."""
        protocol = self.security_protocol
        sasl, ssl = protocol.startswith("SASL_"), protocol in ("SSL", "SASL_SSL")
        given = {"sasl_mechanism": self.sasl_mechanism, "sasl_username": self.sasl_username,
                 "sasl_password": self.password}
        credentials = [key for key, value in given.items() if value]
        if credentials and not sasl:
            raise _refuse(f"SASL_PLAINTEXT or SASL_SSL because kafka.{credentials[0]} is set ({protocol} sends no "
                          "SASL credentials)", protocol, "security_protocol")
        if sasl and not self.sasl_mechanism:
            raise _refuse(f"a SASL mechanism because security_protocol is {protocol}", None, "sasl_mechanism")
        # The credentials may instead come through both pass-through maps (sasl.username and sasl.password for
        # librdkafka, sasl.jaas.config for the Java client), which reach the clients as they are.
        passed_through = ({"sasl.username", "sasl.password"} <= self.librdkafka.keys()
                          and "sasl.jaas.config" in self.java_client)
        if sasl and not passed_through:
            for key, what in (("sasl_username", "a user name"), ("sasl_password", "a password")):
                if not given[key]:
                    raise _refuse(f"{what} because sasl_mechanism is {self.sasl_mechanism}", getattr(self, key), key)
        if self.ssl_ca_location:
            if not ssl:
                raise _refuse(f"SSL or SASL_SSL because kafka.ssl_ca_location is set ({protocol} does not use TLS)",
                              protocol, "security_protocol")
            if not os.path.isfile(self.ssl_ca_location):
                raise _refuse("an existing PEM file of CA certificates", self.ssl_ca_location, "ssl_ca_location")
        for key, options, files in (("librdkafka", self.librdkafka, _LIBRDKAFKA_FILES),
                                    ("java_client", self.java_client, _JAVA_CLIENT_FILES)):
            for name in files:
                path = options.get(name)
                if path and not (name == "ssl.ca.location" and path == "probe") and not os.path.exists(path):
                    raise _refuse("an existing file", path, key, name)
        return self

    @property
    def password(self) -> str | None:
        """The SASL password itself, for the clients only."""
        return None if self.sasl_password is None else self.sasl_password.get_secret_value()

    def starting_offsets_by_partition(self) -> dict[int, int] | None:
        """The per-partition form of ``starting_offsets``, or None for "earliest"/"latest"."""
        if self.starting_offsets in ("earliest", "latest"):
            return None
        return {int(p): int(o) for p, o in json.loads(self.starting_offsets).items()}

    def librdkafka_config(self) -> dict[str, str]:
        """Connection settings for confluent-kafka clients."""
        conf: dict[str, str] = {
            "bootstrap.servers": self.bootstrap_servers,
            "security.protocol": self.security_protocol,
        }
        if self.sasl_mechanism:
            conf["sasl.mechanism"] = self.sasl_mechanism
        if self.sasl_username is not None:
            conf["sasl.username"] = self.sasl_username
        if self.password is not None:
            conf["sasl.password"] = self.password
        if self.ssl_ca_location:
            conf["ssl.ca.location"] = self.ssl_ca_location
        conf.update(self.librdkafka)
        return conf

    def java_client_config(self) -> dict[str, str]:
        """Connection settings for the Java client (without Spark's ``kafka.`` prefix)."""
        conf: dict[str, str] = {
            "bootstrap.servers": self.bootstrap_servers,
            "security.protocol": self.security_protocol,
        }
        if self.sasl_mechanism:
            conf["sasl.mechanism"] = self.sasl_mechanism
            if self.sasl_username is not None:
                module = (
                    "org.apache.kafka.common.security.plain.PlainLoginModule"
                    if self.sasl_mechanism == "PLAIN"
                    else "org.apache.kafka.common.security.scram.ScramLoginModule"
                )
                user = _jaas_quote(self.sasl_username)
                password = _jaas_quote(self.password or "")
                conf["sasl.jaas.config"] = f'{module} required username="{user}" password="{password}";'
        if self.ssl_ca_location:
            # PEM trust stores are supported by the Java client since KIP-651 (2.7).
            conf["ssl.truststore.type"] = "PEM"
            conf["ssl.truststore.location"] = self.ssl_ca_location
        conf.update(self.java_client)
        return conf


def _jaas_quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


class LagSettings(_Section):
    """How gold.consumer_lag evaluates consumer status (pipelines/gold/consumer_lag.py).

    The names and defaults are Burrow's (linkedin/Burrow ``storage`` and
    ``evaluator`` sections), so a group is judged here as Burrow would judge it.
    """

    intervals: Annotated[int, _rule("a number >= 1 (commits per window)", lambda n: n >= 1)] = Field(
        10, description="Commits per partition in the sliding window (Burrow storage ``intervals``); also how many "
                        'end-offset snapshots count as "recent" for the STOP rule\'s recent-lag-zero check.')
    min_distance_seconds: Annotated[int, _rule("a number of seconds >= 0", lambda n: n >= 0)] = Field(
        0, description="A commit this close (seconds) to the previous window entry replaces it (storage "
                       "``min-distance``).")
    allowed_lag: Annotated[int, _rule("a number of messages >= 0", lambda n: n >= 0)] = Field(
        0, description="Lag at or below this counts as zero (evaluator ``allowed-lag``).")
    minimum_complete: Fraction = Field(0.0, description=(
        "Rules run only when this fraction of the window is filled; below it a partition is OK (evaluator "
        "``minimum-complete``, 0.0 to 1.0)."))
    message_timestamps: bool = Field(True, description=(
        "Whether ``snapshot-end-offsets`` also reads the timestamp of the message at each group's committed offset "
        "(one fetch per distinct committed offset), for the message-timestamp estimator."))


class GoldSettings(_Section):
    """How the gold tables are derived (pipelines/gold/)."""

    storm_rebalances: Count = Field(5, description=(
        "A rebalance is flagged as part of a storm when the group completed at least ``storm_rebalances`` "
        "rebalances (itself included) within ``storm_window_minutes``."))
    storm_window_minutes: Count = Field(10, description="The window, in minutes, in which ``storm_rebalances`` "
                                                        "rebalances make a storm.")


# Delta's VACUUM refuses a retention shorter than the table's delta.deletedFileRetentionDuration
# (7 days by default; spark.databricks.delta.retentionDurationCheck.enabled), because a reader or
# writer that started earlier may still need the files it would delete.
DELTA_SAFE_RETENTION_HOURS = 168


class MaintenanceSettings(_Section):
    """How ``offsetlake maintain`` compacts and vacuums the warehouse's Delta tables (pipelines/maintenance.py)."""

    vacuum_retention_hours: Annotated[int, _rule("a number of hours >= 0", lambda n: n >= 0)] = Field(
        DELTA_SAFE_RETENTION_HOURS, description=(
            "VACUUM deletes data files that left the table (compacted by OPTIMIZE, replaced by a gold refresh) at "
            "least this many hours ago. Keep it longer than any query, time travel or gold refresh that may lag "
            "behind: gold reads the files silver added since its last refresh."))
    allow_short_retention: bool = Field(False, description=(
        "Allow vacuum_retention_hours below Delta's 168 h safety check (turns the check off for the VACUUM)."))
    every_minutes: Annotated[int, _rule("a number of minutes >= 0 (0: no maintenance inside run)",
                                        lambda n: n >= 0)] = Field(60, description=(
        "In a continuous `offsetlake run`: OPTIMIZE then VACUUM every table this often, one table at a time between "
        "two batches, so that neither small files nor replaced ones pile up while it runs; 0: only "
        "`offsetlake maintain` does."))

    @model_validator(mode="after")
    def _safe_retention(self) -> MaintenanceSettings:
        if self.vacuum_retention_hours < DELTA_SAFE_RETENTION_HOURS and not self.allow_short_retention:
            raise _refuse(f"at least {DELTA_SAFE_RETENTION_HOURS} hours (Delta's retention safety check), or "
                          "maintenance.allow_short_retention = true to vacuum files that readers may still need",
                          self.vacuum_retention_hours, "vacuum_retention_hours")
        return self


SEVERITIES = ("critical", "warning")


def _a_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text[:10])
    except ValueError:
        return False
    return True


class QualitySettings(_Section):
    """Thresholds of the data-quality checks (``offsetlake check``, ``quality/``)."""

    max_quarantine_rate: Fraction = Field(0.01, description=(
        "silver.quarantine may hold at most this fraction of bronze's records (undecodable records mean the "
        "decoders are behind the broker's record versions)."))
    earliest_timestamp: Annotated[str, _rule("a date such as 2011-01-01", _a_date)] = Field(
        "2011-01-01", description="Record and commit timestamps must lie between this date (UTC, ISO 8601) and now "
                                  "plus future_slack_seconds (a broker clock ahead of offsetlake's, or a decoding "
                                  "error).")
    future_slack_seconds: NonNegative = Field(300, description=(
        "How far (seconds) ahead of offsetlake's clock a record or commit timestamp may be."))
    commit_record_slack_seconds: NonNegative = Field(60, description=(
        "A commit's commit_timestamp (set by the coordinator on the request) and its record's append time come from "
        "the same broker clock moments apart; more than this apart is suspicious."))
    sample_rows: NonNegative = Field(20, description="Unexpected rows kept per failed expectation in "
                                                     "audit.data_quality_results.")
    docs_dir: str = Field("", description="Where the GX data docs (HTML) go; empty: <warehouse>/_quality/data_docs.")
    severity: Table = Field(default_factory=dict, description=(
        'Per-expectation severity overrides, "suite.expectation" = "critical" | "warning".'))

    @field_validator("severity")
    @classmethod
    def _known_severities(cls, severity: dict[str, str]) -> dict[str, str]:
        for name, level in severity.items():
            if level not in SEVERITIES:
                raise _refuse(f"one of {', '.join(SEVERITIES)}", level, name)
        return severity


class StorageSettings(_Section):
    """How offsetlake reaches a warehouse that is not on the local disk (``warehouse`` = ``hdfs://``, ``s3a://``,
    ``abfss://``, ``gs://``): options for Hadoop's file system connectors, which Spark uses, and for delta-rs,
    which the dashboard, the SQL endpoint's catalog and the table-existence checks use without Spark.

    Values often hold credentials: they are never printed (``repr=False``; ConfigError names the key only).
    Prefer the connectors' own credential chains (instance profiles, ``AWS_*`` / ``AZURE_*`` / ``GOOGLE_*``
    environment variables) to putting secrets here.
    """

    hadoop: Table = Field(default_factory=dict, repr=False, description=(
        'Hadoop configuration, each key given to Spark as spark.hadoop.<key>, e.g. fs.s3a.endpoint = '
        '"http://minio:9000", fs.s3a.path.style.access = "true".'))
    delta_rs: Table = Field(default_factory=dict, repr=False, description=(
        "delta-rs storage options (https://delta-io.github.io/delta-rs/integrations/object-storage/), e.g. "
        "AWS_ENDPOINT_URL, AWS_REGION, AWS_ALLOW_HTTP."))


class SqlEndpointSettings(_Section):
    """Where ``offsetlake serve-sql`` listens and how it keeps its catalog current (pipelines/sql_endpoint.py)."""

    host: Annotated[str, _rule("a host name or IP address such as 127.0.0.1",
                               lambda h: h.strip() and not any(c.isspace() or c in "/:" for c in h))] = Field(
        "127.0.0.1", description=(
            "The address the HiveServer2 (Thrift) port binds to. There is no authentication (any user name is "
            "accepted), so the default is loopback only; put a proxy or an SSH tunnel in front for others."))
    port: Annotated[int, _rule("a TCP port from 1 to 65535", lambda n: 1 <= n <= 65535)] = Field(
        10000, description="HiveServer2's customary port; Spark's own start-thriftserver.sh uses it too.")
    catalog_refresh_seconds: Annotated[float, _rule("a number of seconds >= 0 (0: never look for new tables)",
                                                    lambda x: x >= 0)] = Field(30.0, description=(
        "Every this many seconds the server looks for tables created since start-up (a first `lag`, a first "
        "`check`) and registers them with the views that needed them; 0 turns it off. Rows appended to a registered "
        "table need no refresh: Delta reads the table's latest version at every query."))
    warm_up: bool = Field(True, description=(
        'Run every dashboards view once before saying "ready", so the first client\'s query does not pay for the '
        "JVM's cold start (seconds on a small machine)."))


def check_sql_endpoint(endpoint: SqlEndpointSettings, source: Callable[[str], str]) -> None:
    """Raise ConfigError for a bad ``[sql_endpoint]`` value; ``source(key)`` says where it came from
    (public: ``offsetlake serve-sql --host/--port`` override these after loading, with ``model_copy``, which does
    not validate)."""
    try:
        SqlEndpointSettings.model_validate(endpoint.model_dump())
    except ValidationError as exc:
        error = exc.errors()[0]
        raise _config_error({**error, "loc": ("sql_endpoint", *error["loc"])}, lambda key: source(key[1])) from None


#: The shortest writer lease: renewed every third of it, at most once a second (each renewal is a Delta commit).
MIN_LEASE_SECONDS = 3.0


class WriterSettings(_Section):
    """The lease that makes one process at a time the writer of a cluster's tables (pipelines/writer_lease.py)."""

    lease_seconds: Annotated[float, _rule(
        f"a number of seconds >= {MIN_LEASE_SECONDS:g} (the lease is renewed every third of it)",
        lambda x: MIN_LEASE_SECONDS <= x < float("inf"))] = Field(60.0, description=(
            "A writer renews its lease every third of this; a lease not renewed for this long (its process killed, "
            "its host gone) is free for the next writer. Shorter: a killed writer's successor starts sooner; longer: "
            "a writer survives longer storage outages (and pauses) without losing its lease."))


#: URI schemes offsetlake's warehouse may have: Hadoop's file systems whose connectors Spark can load
#: (hdfs from Spark's own Hadoop client; s3a, abfs(s), gs from the connector jar named in the README's
#: "Running on a cluster"), each also readable by delta-rs.
WAREHOUSE_SCHEMES = ("file", "hdfs", "s3a", "abfs", "abfss", "gs")
_URI_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def warehouse_scheme(warehouse: str) -> str:
    """The URI scheme of a ``warehouse`` setting, lower case; "" for a plain local path."""
    match = _URI_SCHEME.match(warehouse.strip())
    return match.group(1).lower() if match and len(match.group(1)) > 1 else ""


def _check_warehouse(warehouse: str) -> str:
    if not warehouse.strip():
        raise _refuse("a directory path or URI", warehouse)
    scheme = warehouse_scheme(warehouse)
    if not scheme:
        return warehouse
    uri = urlparse(warehouse.strip())
    if scheme not in WAREHOUSE_SCHEMES:
        hint = " (Hadoop's S3 connector is s3a://)" if scheme in ("s3", "s3n") else ""
        raise _refuse(f"a local path or a URI with one of the schemes {', '.join(WAREHOUSE_SCHEMES)}{hint}", warehouse)
    if scheme == "file" and not uri.path.startswith("/"):
        raise _refuse("an absolute file: URI such as file:///data/warehouse", warehouse)
    if scheme != "file" and not uri.netloc:
        raise _refuse(f"{scheme}://<{'namenode:port' if scheme == 'hdfs' else 'bucket or container'}>/<path>",
                      warehouse)
    return warehouse


class Settings(BaseSettings):
    """All of offsetlake's settings. Build with :func:`load_settings`."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_nested_delimiter="__", case_sensitive=True,
                                      frozen=True, extra="forbid", strict=True, hide_input_in_errors=True)

    cluster_name: Annotated[str, _rule("1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
                                       _CLUSTER_NAME.match)] = Field(
        "local", description="Tags every row of every table; each cluster has its own checkpoints.")
    warehouse: Annotated[str, AfterValidator(_check_warehouse)] = Field("warehouse", description=(
        "Delta tables and streaming checkpoints live here: a local path, or hdfs://namenode:8020/offsetlake, "
        "s3a://bucket/offsetlake, abfss://..., gs://..."))
    debug_log: str = Field("", description=(
        "Where a command keeps what its one-line errors leave out: stack traces, the Spark JVM's output, "
        "librdkafka's log. Empty: offsetlake-debug.log in the user's cache (``user_cache_dir``)."))
    spark: SparkSettings = Field(default_factory=SparkSettings)
    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    lag: LagSettings = Field(default_factory=LagSettings)
    gold: GoldSettings = Field(default_factory=GoldSettings)
    maintenance: MaintenanceSettings = Field(default_factory=MaintenanceSettings)
    quality: QualitySettings = Field(default_factory=QualitySettings)
    sql_endpoint: SqlEndpointSettings = Field(default_factory=SqlEndpointSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    writer: WriterSettings = Field(default_factory=WriterSettings)

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: Any, env_settings: Any,
                                   dotenv_settings: Any, file_secret_settings: Any) -> tuple[Any, ...]:
        """Only the arguments: ``load_settings`` reads the file and the environment it is given."""
        return (init_settings,)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"settings are immutable: Settings.{name} cannot be assigned")

    @property
    def warehouse_is_local(self) -> bool:
        """Whether the warehouse is a directory of this machine (a path, or a ``file:`` URI)."""
        return warehouse_scheme(self.warehouse) in ("", "file")

    @property
    def warehouse_uri(self) -> str:
        """The warehouse as Spark, Hadoop and delta-rs take it: a URI with a scheme as given (no trailing
        slash), a local path or ``file:`` URI as an absolute path. Every table, checkpoint and file of the
        warehouse is under it (``pipelines.storage.join``).

        Why ``file:`` becomes a path: Hadoop writes ``file:///x`` as ``file:/x``, and Delta refuses to create a
        table whose given location and qualified location differ as text (DELTA_AMBIGUOUS_PATHS_IN_CREATE_TABLE,
        found by tests/pipelines/test_storage.py); a path is one spelling every library agrees on."""
        if warehouse_scheme(self.warehouse) == "file":
            return str(self.warehouse_path)
        if warehouse_scheme(self.warehouse):
            return self.warehouse.strip().rstrip("/")
        return str(Path(self.warehouse).expanduser().resolve())

    @property
    def warehouse_path(self) -> Path:
        """The warehouse as a local directory, for what must be local (Derby's files, GX's data docs);
        a ``file:`` URI gives its path. A remote warehouse has none: ConfigError names the setting."""
        scheme = warehouse_scheme(self.warehouse)
        if scheme == "file":
            return Path(unquote(urlparse(self.warehouse.strip()).path)).resolve()
        if scheme:
            raise ConfigError("warehouse", self.warehouse, "a local directory here (this step keeps files on the "
                              "local disk)")
        return Path(self.warehouse).expanduser().resolve()

    @property
    def debug_log_path(self) -> Path:
        """The debug log's file (``debug_log``, else ``offsetlake-debug.log`` in the user's cache): on the local
        disk whatever the warehouse, so that a warehouse that cannot be written still has its failure told."""
        return Path(self.debug_log).expanduser() if self.debug_log.strip() else \
            user_cache_dir() / "offsetlake-debug.log"

    def with_overrides(self, **changes: Any) -> Settings:
        return self.model_copy(update=changes)


_SECTIONS: dict[str, type[_Section]] = {
    name: f.annotation for name, f in Settings.model_fields.items()
    if isinstance(f.annotation, type) and issubclass(f.annotation, _Section)}
_TABLES = {(section, name) for section, cls in _SECTIONS.items()
           for name, f in cls.model_fields.items() if get_origin(f.annotation) is dict}


# --- the layers --------------------------------------------------------------------------------------------------

class _TomlFile(TomlConfigSettingsSource):
    """The settings file; unlike the library's source, a file that was asked for must exist and be read."""

    def _read_files(self, files: Any, deep_merge: bool = False) -> dict[str, Any]:
        path = Path(files)
        try:
            return tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError("config file", str(path), "an existing TOML file") from None
        except OSError as exc:  # a directory, no permission
            raise ConfigError("config file", str(path), f"a readable TOML file ({exc.strerror or exc})") from None
        except UnicodeDecodeError:
            raise ConfigError("config file", str(path), "a TOML file in UTF-8") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError("config file", str(path), f"valid TOML ({exc})") from None


class _Environment(EnvSettingsSource):
    """``OFFSETLAKE_*`` variables of a given mapping (the process's, or a test's). A table is given as
    ``name=value,name=value``, not JSON."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = {name: value for name, value in environ.items() if name not in NOT_SETTINGS}
        super().__init__(Settings, case_sensitive=False)  # variables are upper case; names in the file are not

    def _load_env_vars(self) -> Mapping[str, str | None]:
        tables = {f"{ENV_PREFIX}{section}__{key}".lower() for section, key in _TABLES}
        found = parse_env_vars(self._environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)
        return {name: _EnvText(value) if name in tables else value for name, value in found.items()}

    def decode_complex_value(self, field_name: str, field: Any, value: Any) -> Any:
        return value

    def _coerce_env_val_strict(self, field: Any, value: Any) -> Any:
        # Text that is no valid value stays text, for the model to refuse with the setting's name (pydantic-settings
        # 2.14's JSON fallback raises instead); so does "inf" or "nan", which is no number of seconds or rows.
        try:
            coerced = super()._coerce_env_val_strict(field, value)
        except ValueError:
            return value
        return value if isinstance(coerced, float) and not math.isfinite(coerced) else coerced


def load_settings(
    config_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Read defaults, then the TOML file, then ``OFFSETLAKE_*`` variables, and validate.

    Raises ConfigError (one line) for any unreadable file, unknown key or bad value.
    """
    env = os.environ if environ is None else environ
    variables = _setting_variables(env)
    path_text = config_file if config_file is not None else env.get(ENV_PREFIX + "CONFIG")
    path = Path(path_text) if path_text else Path(DEFAULT_CONFIG_FILE)
    # The file as written: the source's own call folds case ([Spark] would pass as [spark]).
    file = _TomlFile(Settings, path).toml_data if path_text is not None or path.exists() else {}
    layers = _deep_merge(file, _Environment(env)())

    def source(key: tuple[str, ...]) -> str:
        key = key[:2] if key[0] in _SECTIONS else key[:1]
        if key in variables:
            return f"env {variables[key]}"
        node: Any = file
        for part in key:
            node = node.get(part, _MISSING) if isinstance(node, dict) else _MISSING
        return "default" if node is _MISSING else str(path)

    try:
        return Settings(**layers)
    except ValidationError as exc:
        raise _config_error(exc.errors()[0], source) from None


_MISSING = object()


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        both = isinstance(value, dict) and isinstance(merged.get(key), dict)
        merged[key] = _deep_merge(merged[key], value) if both else value
    return merged


#: pydantic's error types, as the one-line error says what is expected.
_EXPECTED = {"int_type": "a whole number", "int_parsing": "a whole number", "int_from_float": "a whole number",
             "float_type": "a number", "float_parsing": "a number", "bool_type": "true or false",
             "bool_parsing": "true or false", "string_type": "a string", "dict_type": "a table of string keys and "
             "values"}


def _config_error(error: Any, source: Callable[[tuple[str, ...]], str]) -> ConfigError:
    """The one line of the first error pydantic found."""
    loc = tuple(str(part) for part in error["loc"])
    ctx = error.get("ctx") or {}
    if error["type"] == "offsetlake":
        key = (*loc, *ctx["at"])
        return ConfigError(".".join(key), ctx["value"], ctx["expected"], source(key))
    if error["type"] == "extra_forbidden" or (len(loc) == 1 and loc[0] in _SECTIONS):
        return _unknown_name(loc, error["input"], source(loc))
    key = loc[:2] if loc[0] in _SECTIONS else loc[:1]
    return ConfigError(".".join(key), error["input"], _EXPECTED.get(error["type"], error["msg"]), source(key))


def _setting_variables(environ: Mapping[str, str]) -> dict[tuple[str, ...], str]:
    """The ``OFFSETLAKE_*`` variables by the setting each names. One that names none is refused here: the
    environment source would pass it by."""
    found: dict[tuple[str, ...], str] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name in NOT_SETTINGS:
            continue
        rest = name[len(ENV_PREFIX):].lower()
        key = tuple(rest.split("__", 1)) if "__" in rest else (rest,)
        known = (key[1] in _SECTIONS[key[0]].model_fields if len(key) == 2 and key[0] in _SECTIONS
                 else len(key) == 1 and key[0] in _top_level_keys())
        if not known:
            raise _unknown_name(key, value, f"env {name}")
        found[key] = name
    return found


# --- unknown names: what was likely meant --------------------------------------------------------------------------

#: Settings offsetlake no longer has, and why: a file that still sets one gets this reason, not only the list.
REMOVED_SETTINGS = {
    "gold.resolve_topic_ids": "removed: gold names topic ids from the end-offset snapshots and never "
                              "asks the cluster",
    "gold.topic_lookup_timeout_seconds": "removed: gold no longer looks topic ids up on the cluster",
    "gold.concurrent_writes": "removed: a refresh writes its tables one after the other",
    "gold.interpreted_up_to_rows": "removed: Spark's code generation is Spark's configuration "
                                   "(spark.sql.codegen.*), not switched per refresh",
}


def _top_level_keys() -> list[str]:
    return [name for name in Settings.model_fields if name not in _SECTIONS]


def _did_you_mean(name: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(name.lower(), list(candidates), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def _env_name(section: str, key: str) -> str:
    return f"{ENV_PREFIX}{section.upper()}__{key.upper()}"


def _unknown_section(name: str) -> str:
    """What is expected instead of section ``name`` (a TOML table, or the section part of an environment variable)."""
    return (f"a known section: {name} is none of {', '.join(_SECTIONS)}{_did_you_mean(name, _SECTIONS)}; "
            f"top-level settings are {', '.join(_top_level_keys())}")


def _unknown_name(key: tuple[str, ...], value: Any, source: str) -> ConfigError:
    """A name that is no setting: a misspelled section, a section's misspelled or removed key, a misspelled
    top-level key, or a section's key without its section."""
    qualified = ".".join(key)
    if len(key) == 2:
        section, name = key
        if section not in _SECTIONS:
            return ConfigError(qualified, value, _unknown_section(section), source)
        fields = _SECTIONS[section].model_fields
        removed = REMOVED_SETTINGS.get(qualified)
        return ConfigError(qualified, value, f"no such setting ({removed}); delete it" if removed
                           else f"one of {', '.join(sorted(fields))}{_did_you_mean(name, fields)}", source)
    (name,) = key
    if isinstance(value, dict):
        return ConfigError(name, value, _unknown_section(name), source)
    if name in _SECTIONS:  # e.g. spark = "..." in the file, or the section's name alone as a variable
        return ConfigError(name, value, f"a table [{name}] of settings (in the environment "
                                        f"{ENV_PREFIX}{name.upper()}__<KEY>)", source)
    from_env = source.startswith("env ")
    home = next((section for section, cls in _SECTIONS.items() if name in cls.model_fields), None)
    prefix = next((section for section in _SECTIONS if name.startswith(section + "_")), None)
    if home:  # e.g. sasl_password at the top level
        hint = f" (did you mean {_env_name(home, name)}?)" if from_env else f" ({name} belongs in [{home}])"
    elif prefix and from_env:  # spark_master: one underscore between the section and the key
        hint = f" (did you mean {_env_name(prefix, name[len(prefix) + 1:])}, with two underscores?)"
    else:
        hint = _did_you_mean(name, [*_top_level_keys(), *_SECTIONS])
    return ConfigError(name, value, f"a top-level setting ({', '.join(_top_level_keys())}) or a section "
                                    f"({', '.join(_SECTIONS)}){hint}", source)
