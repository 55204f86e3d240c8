"""offsetlake's settings: one typed place, three layers.

Layers, later wins:
  1. defaults in the dataclasses below;
  2. a TOML file (``offsetlake.toml`` in the working directory, or the path in
     ``OFFSETLAKE_CONFIG``, or ``--config`` on the command line);
  3. environment variables ``OFFSETLAKE_<SECTION>__<KEY>`` (double underscore
     between section and key), e.g. ``OFFSETLAKE_KAFKA__BOOTSTRAP_SERVERS``.
     Top-level keys have no section: ``OFFSETLAKE_CLUSTER_NAME``.

Every value is checked here, at the edge, so that a bad setting fails with one
line naming the key, the bad value, where it came from and what is expected
(``ConfigError``), instead of a stack trace from deep inside Spark or librdkafka.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


HIDDEN = "<hidden>"
#: Settings that hold a credential.
SECRET_SETTINGS = frozenset({"kafka.sasl_password"})
#: Maps passed through to a client or connector unchanged: any of their values may be a credential
#: (sasl.jaas.config, ssl.key.password, fs.s3a.secret.key, AWS_SECRET_ACCESS_KEY, ...).
PASS_THROUGH_MAPS = ("kafka.librdkafka", "kafka.java_client", "spark.extra_conf", "storage.hadoop", "storage.delta_rs")
_SECRET_WORDS = ("pass", "pwd", "secret", "token", "key", "credential", "jaas")


def hides_value(key: str, value: object = None) -> bool:
    """Whether an error about ``key`` must show ``<hidden>`` instead of its value: a credential, anything in
    ``[storage]`` or a pass-through map, a table of values, and any key whose name says or suggests a secret
    (a misspelled ``sasl_pasword`` holds the password all the same)."""
    if isinstance(value, dict) or key in SECRET_SETTINGS or key.startswith("storage."):
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


@dataclass(frozen=True)
class SparkSettings:
    """How the SparkSession is built (pipelines/spark_session.py)."""

    master: str = "local[2]"
    app_name: str = "offsetlake"
    shuffle_partitions: int = 4
    # Tasks Delta rebuilds a table's state with (its log replayed into the files of one version): each
    # read of a new version, each MERGE and idempotent append (spark.databricks.delta.snapshotPartitions,
    # Delta's default 50). A log holds one action per file, a few MB even for a table of thousands of
    # files, so one task does it; each more is scheduling (one task made `run`'s refresh faster than four;
    # recorded in CHANGELOG.md). Raise it for tables of hundreds of thousands of files.
    snapshot_partitions: int = 1
    driver_memory: str = "1g"
    ui_enabled: bool = False
    log_level: str = "WARN"
    # JVM options of the driver, after offsetlake's own (spark.driver.extraJavaOptions). E.g.
    # "-XX:TieredStopAtLevel=1" for one-shot commands (C2 compiles code a short run never gets back).
    driver_java_options: str = ""
    # Any other Spark conf, passed through unchanged (e.g. spark.kubernetes.*); may hold credentials, so
    # never printed.
    extra_conf: dict[str, str] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class KafkaSettings:
    """How every Kafka client offsetlake creates connects to the cluster.

    The typed fields cover the common cases and are translated for both client
    families: librdkafka (confluent-kafka: admin, producers, test consumers) and
    the Java client inside Spark's Kafka source. Anything else goes through the
    two pass-through maps unchanged, because the two families name options
    differently (``ssl.ca.location`` vs ``ssl.truststore.location``).

    The password and the pass-through maps (which may hold credentials) are left out of ``repr()``.
    """

    bootstrap_servers: str = "127.0.0.1:9092"
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    ssl_ca_location: str | None = None
    librdkafka: dict[str, str] = field(default_factory=dict, repr=False)
    java_client: dict[str, str] = field(default_factory=dict, repr=False)
    # Where a *new* ingest (no checkpoint yet) starts reading: "earliest" (all of the topic's
    # retained history), "latest" (only what is written from now on), or a JSON object of
    # partition -> offset, e.g. '{"0": 1200, "1": 950}' (partitions not named start at their
    # earliest offset). Spark's Kafka source ``startingOffsets``; once a checkpoint exists it wins.
    starting_offsets: str = "earliest"
    # How long a command waits for the cluster to answer its first request (the check of the cluster and the
    # source topic before Spark starts, and each metadata request) before it reports the cluster unreachable.
    timeout_seconds: float = 30.0

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
        if self.sasl_password is not None:
            conf["sasl.password"] = self.sasl_password
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
                password = _jaas_quote(self.sasl_password or "")
                conf["sasl.jaas.config"] = f'{module} required username="{user}" password="{password}";'
        if self.ssl_ca_location:
            # PEM trust stores are supported by the Java client since KIP-651 (2.7).
            conf["ssl.truststore.type"] = "PEM"
            conf["ssl.truststore.location"] = self.ssl_ca_location
        conf.update(self.java_client)
        return conf


@dataclass(frozen=True)
class LagSettings:
    """How gold.consumer_lag evaluates consumer status (pipelines/gold/consumer_lag.py).

    The names and defaults are Burrow's (linkedin/Burrow ``storage`` and
    ``evaluator`` sections), so a group is judged here as Burrow would judge it.
    """

    # Commits per partition in the sliding window (Burrow storage ``intervals``); also how many
    # end-offset snapshots count as "recent" for the STOP rule's recent-lag-zero check.
    intervals: int = 10
    # A commit this close (seconds) to the previous window entry replaces it (storage ``min-distance``).
    min_distance_seconds: int = 0
    # Lag at or below this counts as zero (evaluator ``allowed-lag``).
    allowed_lag: int = 0
    # Rules run only when this fraction of the window is filled; below it a partition is OK
    # (evaluator ``minimum-complete``, 0.0 to 1.0).
    minimum_complete: float = 0.0
    # Whether ``snapshot-end-offsets`` also reads the timestamp of the message at each group's
    # committed offset (one fetch per distinct committed offset), for the message-timestamp estimator.
    message_timestamps: bool = True


@dataclass(frozen=True)
class GoldSettings:
    """How the gold tables are derived (pipelines/gold/)."""

    # A rebalance is flagged as part of a storm when the group completed at least
    # ``storm_rebalances`` rebalances (itself included) within ``storm_window_minutes``.
    storm_rebalances: int = 5
    storm_window_minutes: int = 10


# Delta's VACUUM refuses a retention shorter than the table's delta.deletedFileRetentionDuration
# (7 days by default; spark.databricks.delta.retentionDurationCheck.enabled), because a reader or
# writer that started earlier may still need the files it would delete.
DELTA_SAFE_RETENTION_HOURS = 168


@dataclass(frozen=True)
class MaintenanceSettings:
    """How ``offsetlake maintain`` compacts and vacuums the warehouse's Delta tables (pipelines/maintenance.py)."""

    # VACUUM deletes data files that left the table (compacted by OPTIMIZE, replaced by a gold
    # refresh) at least this many hours ago. Keep it longer than any query, time travel or gold
    # refresh that may lag behind: gold reads the files silver added since its last refresh.
    vacuum_retention_hours: int = DELTA_SAFE_RETENTION_HOURS
    # Allow vacuum_retention_hours below Delta's 168 h safety check (turns the check off for the VACUUM).
    allow_short_retention: bool = False
    # In a continuous `offsetlake run`: OPTIMIZE then VACUUM every table this often, one table at a time between
    # two batches, so that neither small files nor replaced ones pile up while it runs; 0: only `maintain` does.
    every_minutes: int = 60


SEVERITIES = ("critical", "warning")


@dataclass(frozen=True)
class QualitySettings:
    """Thresholds of the data-quality checks (``offsetlake check``, ``quality/``)."""

    # silver.quarantine may hold at most this fraction of bronze's records (undecodable records
    # mean the decoders are behind the broker's record versions).
    max_quarantine_rate: float = 0.01
    # Record and commit timestamps must lie between this date (UTC, ISO 8601) and now plus
    # future_slack_seconds (a broker clock ahead of offsetlake's, or a decoding error).
    earliest_timestamp: str = "2011-01-01"
    future_slack_seconds: int = 300
    # A commit's commit_timestamp (set by the coordinator on the request) and its record's append
    # time come from the same broker clock moments apart; more than this apart is suspicious.
    commit_record_slack_seconds: int = 60
    # Unexpected rows kept per failed expectation in audit.data_quality_results.
    sample_rows: int = 20
    # Where the GX data docs (HTML) go; empty: <warehouse>/_quality/data_docs.
    docs_dir: str = ""
    # Per-expectation severity overrides, "suite.expectation" = "critical" | "warning".
    severity: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class StorageSettings:
    """How offsetlake reaches a warehouse that is not on the local disk (``warehouse`` = ``hdfs://``, ``s3a://``,
    ``abfss://``, ``gs://``): options for Hadoop's file system connectors, which Spark uses, and for delta-rs,
    which the dashboard, the SQL endpoint's catalog and the table-existence checks use without Spark.

    Values often hold credentials: they are never printed (``repr=False``; ConfigError names the key only).
    Prefer the connectors' own credential chains (instance profiles, ``AWS_*`` / ``AZURE_*`` / ``GOOGLE_*``
    environment variables) to putting secrets here.
    """

    # Hadoop configuration, each key given to Spark as spark.hadoop.<key>, e.g.
    # fs.s3a.endpoint = "http://minio:9000", fs.s3a.path.style.access = "true".
    hadoop: dict[str, str] = field(default_factory=dict, repr=False)
    # delta-rs storage options (https://delta-io.github.io/delta-rs/integrations/object-storage/), e.g.
    # AWS_ENDPOINT_URL, AWS_REGION, AWS_ALLOW_HTTP.
    delta_rs: dict[str, str] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class SqlEndpointSettings:
    """Where ``offsetlake serve-sql`` listens and how it keeps its catalog current (pipelines/sql_endpoint.py)."""

    # The address the HiveServer2 (Thrift) port binds to. There is no authentication (any user name
    # is accepted), so the default is loopback only; put a proxy or an SSH tunnel in front for others.
    host: str = "127.0.0.1"
    # HiveServer2's customary port; Spark's own start-thriftserver.sh uses it too.
    port: int = 10000
    # Every this many seconds the server looks for tables created since start-up (a first `lag`, a first
    # `check`) and registers them with the views that needed them; 0 turns it off. Rows appended to a
    # registered table need no refresh: Delta reads the table's latest version at every query.
    catalog_refresh_seconds: float = 30.0
    # Run every dashboards view once before saying "ready", so the first client's query does not pay
    # for the JVM's cold start (seconds on a small machine).
    warm_up: bool = True


#: The shortest writer lease: renewed every third of it, at most once a second (each renewal is a Delta commit).
MIN_LEASE_SECONDS = 3.0


@dataclass(frozen=True)
class WriterSettings:
    """The lease that makes one process at a time the writer of a cluster's tables (pipelines/writer_lease.py)."""

    # A writer renews its lease every third of this; a lease not renewed for this long (its process killed,
    # its host gone) is free for the next writer. Shorter: a killed writer's successor starts sooner; longer:
    # a writer survives longer storage outages (and pauses) without losing its lease.
    lease_seconds: float = 60.0


@dataclass(frozen=True)
class Settings:
    """All of offsetlake's settings. Build with :func:`load_settings`."""

    cluster_name: str = "local"
    warehouse: str = "warehouse"
    # Where a command keeps what its one-line errors leave out: stack traces, the Spark JVM's output, librdkafka's
    # log. Empty: offsetlake-debug.log in the user's cache (``user_cache_dir``).
    debug_log: str = ""
    spark: SparkSettings = field(default_factory=SparkSettings)
    kafka: KafkaSettings = field(default_factory=KafkaSettings)
    lag: LagSettings = field(default_factory=LagSettings)
    gold: GoldSettings = field(default_factory=GoldSettings)
    maintenance: MaintenanceSettings = field(default_factory=MaintenanceSettings)
    quality: QualitySettings = field(default_factory=QualitySettings)
    sql_endpoint: SqlEndpointSettings = field(default_factory=SqlEndpointSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    writer: WriterSettings = field(default_factory=WriterSettings)

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
            from urllib.parse import unquote, urlparse

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
        return dataclasses.replace(self, **changes)


#: URI schemes offsetlake's warehouse may have: Hadoop's file systems whose connectors Spark can load
#: (hdfs from Spark's own Hadoop client; s3a, abfs(s), gs from the connector jar named in the README's
#: "Running on a cluster"), each also readable by delta-rs.
WAREHOUSE_SCHEMES = ("file", "hdfs", "s3a", "abfs", "abfss", "gs")
_URI_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def warehouse_scheme(warehouse: str) -> str:
    """The URI scheme of a ``warehouse`` setting, lower case; "" for a plain local path."""
    match = _URI_SCHEME.match(warehouse.strip())
    return match.group(1).lower() if match and len(match.group(1)) > 1 else ""


def load_settings(
    config_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Read defaults, then the TOML file, then ``OFFSETLAKE_*`` variables, and validate.

    Raises ConfigError (one line) for any unreadable file, unknown key or bad value.
    """
    env = os.environ if environ is None else environ
    raw: dict[str, dict[str, tuple[Any, str]]] = {"": {}}

    path_text = config_file if config_file is not None else env.get(ENV_PREFIX + "CONFIG")
    path = Path(path_text) if path_text else Path(DEFAULT_CONFIG_FILE)
    if path_text is not None or path.exists():
        for section, key, value in _read_toml(path):
            raw.setdefault(section, {})[key] = (value, str(path))

    for name, value in env.items():
        if not name.startswith(ENV_PREFIX) or name in NOT_SETTINGS:
            continue
        rest = name[len(ENV_PREFIX):].lower()
        section, _, key = rest.partition("__") if "__" in rest else ("", "", rest)
        raw.setdefault(section, {})[key] = (value, f"env {name}")

    return _build(raw)


def _read_toml(path: Path) -> list[tuple[str, str, Any]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError("config file", str(path), "an existing TOML file") from None
    except OSError as exc:  # a directory, no permission
        raise ConfigError("config file", str(path), f"a readable TOML file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ConfigError("config file", str(path), "a TOML file in UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("config file", str(path), f"valid TOML ({exc})") from None
    out: list[tuple[str, str, Any]] = []
    for key, value in data.items():
        if isinstance(value, dict) and key in _SECTIONS:
            for sub_key, sub_value in value.items():
                out.append((key, sub_key, sub_value))
        else:
            out.append(("", key, value))
    return out


_SECTIONS: dict[str, type] = {"spark": SparkSettings, "kafka": KafkaSettings, "lag": LagSettings, "gold": GoldSettings,
                             "maintenance": MaintenanceSettings, "quality": QualitySettings,
                             "sql_endpoint": SqlEndpointSettings, "storage": StorageSettings,
                             "writer": WriterSettings}


def _top_level_keys() -> list[str]:
    return [f.name for f in dataclasses.fields(Settings) if f.name not in _SECTIONS]


def _did_you_mean(name: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(name.lower(), candidates, n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def _env_name(section: str, key: str) -> str:
    return f"{ENV_PREFIX}{section.upper()}__{key.upper()}"


def _unknown_section(name: str) -> str:
    """What is expected instead of section ``name`` (a TOML table, or the section part of an environment variable)."""
    return (f"a known section: {name} is none of {', '.join(_SECTIONS)}{_did_you_mean(name, list(_SECTIONS))}; "
            f"top-level settings are {', '.join(_top_level_keys())}")


def _unknown_top_level(key: str, value: Any, source: str) -> ConfigError:
    """A top-level name that is no setting: a misspelled section (a TOML table), a misspelled top-level key, or
    a section's key without its section."""
    if isinstance(value, dict):
        return ConfigError(key, value, _unknown_section(key), source)
    if key in _SECTIONS:  # e.g. spark = "..." in the file, or the section's name alone as a variable
        return ConfigError(key, value, f"a table [{key}] of settings (in the environment "
                                       f"{ENV_PREFIX}{key.upper()}__<KEY>)", source)
    from_env = source.startswith("env ")
    home = next((name for name, cls in _SECTIONS.items() if key in {f.name for f in dataclasses.fields(cls)}), None)
    prefix = next((name for name in _SECTIONS if key.startswith(name + "_")), None)
    if home:  # e.g. sasl_password at the top level
        hint = f" (did you mean {_env_name(home, key)}?)" if from_env else f" ({key} belongs in [{home}])"
    elif prefix and from_env:  # spark_master: one underscore between the section and the key
        hint = f" (did you mean {_env_name(prefix, key[len(prefix) + 1:])}, with two underscores?)"
    else:
        hint = _did_you_mean(key, [*_top_level_keys(), *_SECTIONS])
    return ConfigError(key, value, f"a top-level setting ({', '.join(_top_level_keys())}) or a section "
                                   f"({', '.join(_SECTIONS)}){hint}", source)


def _build(raw: dict[str, dict[str, tuple[Any, str]]]) -> Settings:
    for section in raw:
        if section and section not in _SECTIONS:
            first_key = next(iter(raw[section]))
            value, source = raw[section][first_key]
            raise ConfigError(f"{section}.{first_key}", value, _unknown_section(section), source)
    sections = {name: _build_section(cls, name, raw.get(name, {})) for name, cls in _SECTIONS.items()}
    top = _coerce_fields(Settings, "", raw.get("", {}), skip=set(_SECTIONS))
    settings = Settings(**top, **sections)
    _validate(settings, raw)
    return settings


#: Settings offsetlake no longer has, and why: a file that still sets one gets this reason, not only the list.
REMOVED_SETTINGS = {
    "gold.resolve_topic_ids": "removed: gold names topic ids from the end-offset snapshots and never "
                              "asks the cluster",
    "gold.topic_lookup_timeout_seconds": "removed: gold no longer looks topic ids up on the cluster",
    "gold.concurrent_writes": "removed: a refresh writes its tables one after the other",
    "gold.interpreted_up_to_rows": "removed: Spark's code generation is Spark's configuration "
                                   "(spark.sql.codegen.*), not switched per refresh",
}


def _build_section(cls: type, name: str, values: dict[str, tuple[Any, str]]) -> Any:
    return cls(**_coerce_fields(cls, name, values, skip=set()))


def _coerce_fields(cls: type, section: str, values: dict[str, tuple[Any, str]], skip: set[str]) -> dict[str, Any]:
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in skip}
    out: dict[str, Any] = {}
    for key, (value, source) in values.items():
        qualified = f"{section}.{key}" if section else key
        if key not in fields:
            if not section:
                raise _unknown_top_level(key, value, source)
            removed = REMOVED_SETTINGS.get(qualified)
            raise ConfigError(qualified, value, f"no such setting ({removed}); delete it" if removed
                              else f"one of {', '.join(sorted(fields))}{_did_you_mean(key, list(fields))}", source)
        out[key] = _coerce(qualified, value, fields[key].type, source)
    return out


def _coerce(key: str, value: Any, annotation: Any, source: str) -> Any:
    kind = str(annotation)
    from_env = source.startswith("env ")
    if kind == "int":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if from_env and re.fullmatch(r"-?\d+", str(value).strip()):
            return int(value)
        raise ConfigError(key, value, "a whole number", source)
    if kind == "float":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if from_env and re.fullmatch(r"-?\d+(\.\d*)?|-?\.\d+", str(value).strip()):
            return float(value)
        raise ConfigError(key, value, "a number", source)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if from_env and str(value).lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            return str(value).lower() in ("1", "true", "yes", "on")
        raise ConfigError(key, value, "true or false", source)
    if kind.startswith("dict"):
        if from_env:
            return _parse_env_map(key, value, source)
        if not isinstance(value, dict):
            raise ConfigError(key, value, "a table of string keys and values", source)
        return {str(k): str(v) for k, v in value.items()}
    # str and str | None
    if from_env or isinstance(value, str):
        return str(value)
    raise ConfigError(key, value, "a string", source)


def _parse_env_map(key: str, value: str, source: str) -> dict[str, str]:
    """``a=1,b=2`` from an environment variable."""
    out: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in value.split(","))):
        name, sep, val = item.partition("=")
        if not sep or not name:
            raise ConfigError(key, value, "comma-separated name=value pairs", source)
        out[name.strip()] = val.strip()
    return out


def _validate(settings: Settings, raw: dict[str, dict[str, tuple[Any, str]]]) -> None:
    def source(section: str, key: str) -> str:
        return raw.get(section, {}).get(key, (None, "default"))[1]

    if not _CLUSTER_NAME.match(settings.cluster_name):
        raise ConfigError("cluster_name", settings.cluster_name,
                          "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit",
                          source("", "cluster_name"))
    if not settings.warehouse.strip():
        raise ConfigError("warehouse", settings.warehouse, "a directory path or URI", source("", "warehouse"))
    scheme = warehouse_scheme(settings.warehouse)
    if scheme:
        from urllib.parse import urlparse

        uri = urlparse(settings.warehouse.strip())
        if scheme not in WAREHOUSE_SCHEMES:
            hint = " (Hadoop's S3 connector is s3a://)" if scheme in ("s3", "s3n") else ""
            raise ConfigError("warehouse", settings.warehouse,
                              f"a local path or a URI with one of the schemes {', '.join(WAREHOUSE_SCHEMES)}{hint}",
                              source("", "warehouse"))
        if scheme == "file" and not uri.path.startswith("/"):
            raise ConfigError("warehouse", settings.warehouse, "an absolute file: URI such as file:///data/warehouse",
                              source("", "warehouse"))
        if scheme != "file" and not uri.netloc:
            raise ConfigError("warehouse", settings.warehouse,
                              f"{scheme}://<{'namenode:port' if scheme == 'hdfs' else 'bucket or container'}>/<path>",
                              source("", "warehouse"))
    spark = settings.spark
    if not spark.master.strip():
        raise ConfigError("spark.master", spark.master, "a Spark master URL such as local[2] or yarn",
                          source("spark", "master"))
    if spark.shuffle_partitions < 1:
        raise ConfigError("spark.shuffle_partitions", spark.shuffle_partitions, "a number >= 1",
                          source("spark", "shuffle_partitions"))
    if spark.snapshot_partitions < 1:
        raise ConfigError("spark.snapshot_partitions", spark.snapshot_partitions, "a number >= 1",
                          source("spark", "snapshot_partitions"))
    if not _SPARK_MEMORY.match(spark.driver_memory):
        raise ConfigError("spark.driver_memory", spark.driver_memory, "a JVM memory size such as 1g or 512m",
                          source("spark", "driver_memory"))
    if spark.driver_java_options.strip() and not all(o.startswith("-") for o in spark.driver_java_options.split()):
        raise ConfigError("spark.driver_java_options", spark.driver_java_options,
                          "JVM options separated by spaces, each starting with '-'",
                          source("spark", "driver_java_options"))
    if spark.log_level.upper() not in ("ALL", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF", "TRACE"):
        raise ConfigError("spark.log_level", spark.log_level, "a log4j level such as WARN",
                          source("spark", "log_level"))
    _check_typed_spark_conf(spark.extra_conf, source("spark", "extra_conf"))
    kafka = settings.kafka
    if not BOOTSTRAP_SERVERS.fullmatch(kafka.bootstrap_servers):
        raise ConfigError("kafka.bootstrap_servers", kafka.bootstrap_servers,
                          "host:port[,host:port...]", source("kafka", "bootstrap_servers"))
    if kafka.security_protocol not in SECURITY_PROTOCOLS:
        raise ConfigError("kafka.security_protocol", kafka.security_protocol,
                          f"one of {', '.join(SECURITY_PROTOCOLS)}", source("kafka", "security_protocol"))
    if kafka.sasl_mechanism is not None and kafka.sasl_mechanism not in SASL_MECHANISMS:
        raise ConfigError("kafka.sasl_mechanism", kafka.sasl_mechanism,
                          f"one of {', '.join(SASL_MECHANISMS)}", source("kafka", "sasl_mechanism"))
    _validate_kafka_security(kafka, lambda key: source("kafka", key))
    if not kafka.timeout_seconds > 0:
        raise ConfigError("kafka.timeout_seconds", kafka.timeout_seconds, "a number of seconds > 0",
                          source("kafka", "timeout_seconds"))
    if not _valid_starting_offsets(kafka.starting_offsets):
        raise ConfigError("kafka.starting_offsets", kafka.starting_offsets,
                          'earliest, latest, or a JSON object of partition -> offset such as {"0": 42}',
                          source("kafka", "starting_offsets"))
    lag = settings.lag
    if lag.intervals < 1:
        raise ConfigError("lag.intervals", lag.intervals, "a number >= 1 (commits per window)",
                          source("lag", "intervals"))
    if lag.min_distance_seconds < 0:
        raise ConfigError("lag.min_distance_seconds", lag.min_distance_seconds, "a number of seconds >= 0",
                          source("lag", "min_distance_seconds"))
    if lag.allowed_lag < 0:
        raise ConfigError("lag.allowed_lag", lag.allowed_lag, "a number of messages >= 0",
                          source("lag", "allowed_lag"))
    if not 0.0 <= lag.minimum_complete <= 1.0:
        raise ConfigError("lag.minimum_complete", lag.minimum_complete, "a fraction from 0.0 to 1.0",
                          source("lag", "minimum_complete"))
    for key in ("storm_rebalances", "storm_window_minutes"):
        if getattr(settings.gold, key) < 1:
            raise ConfigError(f"gold.{key}", getattr(settings.gold, key), "a number >= 1", source("gold", key))
    maintenance = settings.maintenance
    if maintenance.every_minutes < 0:
        raise ConfigError("maintenance.every_minutes", maintenance.every_minutes,
                          "a number of minutes >= 0 (0: no maintenance inside run)",
                          source("maintenance", "every_minutes"))
    if maintenance.vacuum_retention_hours < 0:
        raise ConfigError("maintenance.vacuum_retention_hours", maintenance.vacuum_retention_hours,
                          "a number of hours >= 0", source("maintenance", "vacuum_retention_hours"))
    if maintenance.vacuum_retention_hours < DELTA_SAFE_RETENTION_HOURS and not maintenance.allow_short_retention:
        raise ConfigError("maintenance.vacuum_retention_hours", maintenance.vacuum_retention_hours,
                          f"at least {DELTA_SAFE_RETENTION_HOURS} hours (Delta's retention safety check), or "
                          "maintenance.allow_short_retention = true to vacuum files that readers may still need",
                          source("maintenance", "vacuum_retention_hours"))
    _validate_quality(settings.quality, lambda key: source("quality", key))
    check_sql_endpoint(settings.sql_endpoint, lambda key: source("sql_endpoint", key))
    if not MIN_LEASE_SECONDS <= settings.writer.lease_seconds < float("inf"):
        raise ConfigError("writer.lease_seconds", settings.writer.lease_seconds,
                          f"a number of seconds >= {MIN_LEASE_SECONDS:g} (the lease is renewed every third of it)",
                          source("writer", "lease_seconds"))


#: Pass-through options naming a file the client reads (librdkafka's CONFIGURATION.md; the Java client's
#: SslConfigs). librdkafka's ssl.ca.location may also be a directory, or "probe" (the system's stores).
_LIBRDKAFKA_FILES = ("ssl.ca.location", "ssl.certificate.location", "ssl.key.location", "ssl.keystore.location",
                     "ssl.crl.location", "sasl.kerberos.keytab")
_JAVA_CLIENT_FILES = ("ssl.truststore.location", "ssl.keystore.location")


def _validate_kafka_security(kafka: KafkaSettings, source: Callable[[str], str]) -> None:
    """SASL and SSL settings that cannot work together, found when the settings load rather than by the first
    client that connects (librdkafka's or the JVM's, after Spark has started)."""
    protocol = kafka.security_protocol
    sasl, ssl = protocol.startswith("SASL_"), protocol in ("SSL", "SASL_SSL")
    credentials = [key for key in ("sasl_mechanism", "sasl_username", "sasl_password") if getattr(kafka, key)]
    if credentials and not sasl:
        raise ConfigError("kafka.security_protocol", protocol,
                          f"SASL_PLAINTEXT or SASL_SSL because kafka.{credentials[0]} is set ({protocol} sends no "
                          "SASL credentials)", source("security_protocol"))
    if sasl and not kafka.sasl_mechanism:
        raise ConfigError("kafka.sasl_mechanism", None, f"a SASL mechanism because security_protocol is {protocol}",
                          source("sasl_mechanism"))
    # The credentials may instead come through both pass-through maps (sasl.username and sasl.password for
    # librdkafka, sasl.jaas.config for the Java client), which reach the clients as they are.
    passed_through = ({"sasl.username", "sasl.password"} <= kafka.librdkafka.keys()
                      and "sasl.jaas.config" in kafka.java_client)
    if sasl and not passed_through:
        for key, what in (("sasl_username", "a user name"), ("sasl_password", "a password")):
            if not getattr(kafka, key):
                raise ConfigError(f"kafka.{key}", getattr(kafka, key),
                                  f"{what} because sasl_mechanism is {kafka.sasl_mechanism}", source(key))
    if kafka.ssl_ca_location:
        if not ssl:
            raise ConfigError("kafka.security_protocol", protocol,
                              f"SSL or SASL_SSL because kafka.ssl_ca_location is set ({protocol} does not use TLS)",
                              source("security_protocol"))
        if not os.path.isfile(kafka.ssl_ca_location):
            raise ConfigError("kafka.ssl_ca_location", kafka.ssl_ca_location,
                              "an existing PEM file of CA certificates", source("ssl_ca_location"))
    for key, options, files in (("librdkafka", kafka.librdkafka, _LIBRDKAFKA_FILES),
                                ("java_client", kafka.java_client, _JAVA_CLIENT_FILES)):
        for name in files:
            path = options.get(name)
            if path and not (name == "ssl.ca.location" and path == "probe") and not os.path.exists(path):
                raise ConfigError(f"kafka.{key}.{name}", path, "an existing file", source(key))


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


def _check_typed_spark_conf(extra_conf: dict[str, str], source: str) -> None:
    for key, value in extra_conf.items():
        kind = _TYPED_SPARK_CONF.get(key)
        text = value.strip()
        valid = (kind is None or (kind == "count" and text.isdigit() and int(text) >= 1)
                 or (kind == "memory" and _SPARK_MEMORY.match(text) is not None)
                 or (kind == "bool" and text.lower() in ("true", "false")))
        if not valid:
            raise ConfigError(f"spark.extra_conf.{key}", value, f"{_TYPED_SPARK_CONF_EXPECTED[kind]} (Spark's {key})",
                              source)


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


def _validate_quality(quality: QualitySettings, source: Any) -> None:
    import datetime as dt

    if not 0.0 <= quality.max_quarantine_rate <= 1.0:
        raise ConfigError("quality.max_quarantine_rate", quality.max_quarantine_rate, "a fraction from 0.0 to 1.0",
                          source("max_quarantine_rate"))
    try:
        dt.date.fromisoformat(quality.earliest_timestamp[:10])
    except ValueError:
        raise ConfigError("quality.earliest_timestamp", quality.earliest_timestamp, "a date such as 2011-01-01",
                          source("earliest_timestamp")) from None
    for key in ("future_slack_seconds", "commit_record_slack_seconds", "sample_rows"):
        if getattr(quality, key) < 0:
            raise ConfigError(f"quality.{key}", getattr(quality, key), "a number >= 0", source(key))
    for name, level in quality.severity.items():
        if level not in SEVERITIES:
            raise ConfigError(f"quality.severity.{name}", level, f"one of {', '.join(SEVERITIES)}",
                              source("severity"))


def check_sql_endpoint(endpoint: SqlEndpointSettings, source: Callable[[str], str]) -> None:
    """Raise ConfigError for a bad ``[sql_endpoint]`` value; ``source(key)`` says where it came from
    (public: ``offsetlake serve-sql --host/--port`` override these after loading)."""
    if not endpoint.host.strip() or any(c.isspace() or c in "/:" for c in endpoint.host):
        raise ConfigError("sql_endpoint.host", endpoint.host, "a host name or IP address such as 127.0.0.1",
                          source("host"))
    if not 1 <= endpoint.port <= 65535:
        raise ConfigError("sql_endpoint.port", endpoint.port, "a TCP port from 1 to 65535", source("port"))
    if endpoint.catalog_refresh_seconds < 0:
        raise ConfigError("sql_endpoint.catalog_refresh_seconds", endpoint.catalog_refresh_seconds,
                          "a number of seconds >= 0 (0: never look for new tables)",
                          source("catalog_refresh_seconds"))


def _jaas_quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
