"""offsetlake on a real cluster (issue 15): the warehouse on HDFS, the job on a Spark standalone cluster.

A NameNode and a DataNode from Maven Central's Hadoop jars (jvm/hdfs.py), and a Spark master with two
workers from pyspark's own distribution (jvm/spark_cluster.py), all on 127.0.0.1, started once for the
module. Marked ``cluster`` (tests/conftest.py): ``make test-cluster`` runs this module, ``make test`` does
not (it would add minutes to a suite kept under ten); ``.ci/run`` runs both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from broker.embedded import free_port
from broker.workload import create_topic
from decoders import encode_record
from jvm.hdfs import EmbeddedHdfs
from jvm.spark_cluster import StandaloneCluster
from pipelines.delta_tables import WarehouseUnreachable, read_table, table_exists
from pipelines.storage import Storage, join


@pytest.fixture(scope="module")
def hdfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedHdfs]:
    with EmbeddedHdfs(tmp_path_factory.mktemp("hdfs")) as running:
        yield running


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    with StandaloneCluster(tmp_path_factory.mktemp("spark-standalone"), workers=2, cores=1, memory="1g") as running:
        yield running


def _rows(spark, settings, spec) -> list[str]:  # type: ignore[no-untyped-def]
    frame = read_table(spark, settings, spec)
    frame = frame.drop(*[f.name for f in frame.schema.fields if f.name.endswith("_at")])  # times of the run
    return sorted(repr(sorted(row.asDict(recursive=True).items())) for row in frame.collect())


def test_a_warehouse_on_hdfs_gets_the_same_silver_and_gold_as_one_on_the_local_disk(
        spark, settings_for, hdfs: EmbeddedHdfs, tmp_path: Path) -> None:
    """Batches written by ingest's batch writer, gold refreshed after each (the second refresh reads only the
    files silver's Delta log added, listed and read through Hadoop's FileSystem; the third replays a KIP-848 group
    on the executors), then maintained."""
    import datetime as dt

    from coordinator import simulate
    from pipelines.gold.refresh import GOLD, refresh_gold
    from pipelines.ingest import ensure_tables, write_batch
    from pipelines.maintenance import maintain
    from schemas import offset_commits
    from schemas.catalog import SILVER
    from tests.pipelines.maintained_warehouse import BATCHES, RAW_SCHEMA

    # The third batch: a KIP-848 group's records (the reference coordinator's scenario), which the refresh
    # replays on the executors.
    scenario = Path(__file__).resolve().parents[2] / "conf" / "scenarios" / "kip848-subscription-change.yaml"
    kip848 = [(r.key, r.value, dt.datetime.fromtimestamp(r.timestamp / 1000, dt.UTC).replace(tzinfo=None))
              for r in simulate(scenario).records]
    local = settings_for(warehouse=str(tmp_path / "local"))
    remote = settings_for(warehouse=f"{hdfs.uri}/warehouse-{uuid.uuid4().hex[:8]}")
    for settings in (local, remote):
        ensure_tables(spark, settings)
        offset = 0
        for batch_id, records in enumerate([*BATCHES[:2], kip848]):
            raw = spark.createDataFrame([(k, v, "__consumer_offsets", 0, offset + i, at)
                                         for i, (k, v, at) in enumerate(records)], RAW_SCHEMA)
            offset += len(records)
            write_batch(spark, settings, "__consumer_offsets", raw, batch_id)
            refresh_gold(spark, settings)
    for spec in (*SILVER, *GOLD):
        assert _rows(spark, remote, spec) == _rows(spark, local, spec), spec.name
    assert _rows(spark, remote, GOLD[0]), "gold.committed_offsets has the batches' commits"
    generations = read_table(spark, remote, GOLD[2])  # gold.group_generations
    assert generations.filter("group_type = 'consumer'").count() > 0, "the KIP-848 group's epochs are in gold"

    storage = Storage(spark)
    table = join(remote.warehouse_uri, offset_commits.TABLE.relative_path)
    assert {entry.name for entry in storage.list(table)} >= {"_delta_log"}
    [result] = maintain(spark, remote, [offset_commits.TABLE])  # OPTIMIZE; data files listed on HDFS
    assert result.files_on_disk_before >= result.live_files_before > result.live_files_after >= 1

    # Without Spark: delta-rs finds the tables on HDFS (the dashboard's, the SQL endpoint's catalog's path).
    from schemas.catalog import TABLES

    assert table_exists(remote, GOLD[0]) and not table_exists(remote, TABLES["gold.consumer_lag"])  # no lag run


def test_ingest_from_the_broker_keeps_its_streaming_checkpoint_on_hdfs(spark, settings_for, hdfs) -> None:
    """The streaming query's checkpoint and the offset log the batch audit reads are on HDFS too."""
    from pipelines.ingest import IngestOptions, checkpoint_path, run_ingest
    from schemas.ingest_batches import TABLE as INGEST_BATCHES
    from schemas.offset_commits import TABLE as OFFSET_COMMITS
    from tests.pipelines.test_ingest import produce_raw

    settings = settings_for(warehouse=f"{hdfs.uri}/ingest-{uuid.uuid4().hex[:8]}")
    client = settings.kafka.librdkafka_config()
    topic = f"on-hdfs-{uuid.uuid4().hex[:8]}"
    create_topic(client, topic, partitions=2)
    key, value = encode_record("offset_commit", {"group": "g", "topic": "t", "partition": 0},
                               {"offset": 1, "metadata": "", "commit_timestamp": 1}, 4)
    produce_raw(client, topic, [(key, value)] * 6, partitions=2)
    [report] = run_ingest(spark, settings, IngestOptions(topic=topic, once=True))
    assert report.records == 6 and report.lost_records == 0
    assert read_table(spark, settings, OFFSET_COMMITS).count() == 6
    audit = read_table(spark, settings, INGEST_BATCHES).collect()
    # The planned ranges came from the streaming query's offset log, read from HDFS.
    assert sorted((r["source_partition"], r["start_offset"], r["end_offset"], r["records"]) for r in audit) == [
        (0, 0, 3, 3), (1, 0, 3, 3)]
    storage = Storage(spark)
    assert checkpoint_path(settings, topic).startswith(hdfs.uri)
    assert [entry.name for entry in storage.list(join(checkpoint_path(settings, topic), "commits"))] == ["0"]


def test_the_writer_lease_on_hdfs_refuses_a_second_writer_and_decides_races(hdfs: EmbeddedHdfs) -> None:
    """The lease is a Delta table on the warehouse's own storage, written with delta-rs (pipelines/writer_lease.py):
    HDFS's create-if-absent decides which of two commits of one version wins."""
    from conf.settings import Settings
    from pipelines.writer_lease import LeaseHeld, acquire, current_lease, release
    from tests.pipelines.test_writer_lease import race

    settings = Settings(warehouse=f"{hdfs.uri}/leases-{uuid.uuid4().hex[:8]}", cluster_name="east")
    first = acquire(settings, "offsetlake run")
    with pytest.raises(LeaseHeld, match=f"are being written by 'offsetlake run' \\(pid {os.getpid()} on "):
        acquire(settings, "offsetlake ingest")
    assert release(settings, first) and current_lease(settings).released_at is not None  # type: ignore[union-attr]
    for round in range(5):
        won, refused, errors = race(settings, 3)
        assert not errors and len(won) == 1 and len(refused) == 2, (round, won, refused, errors)
        release(settings, won[0])


def test_a_warehouse_on_an_hdfs_that_does_not_answer_is_named_in_one_line(settings_for) -> None:
    from schemas.catalog import TABLES

    settings = settings_for(warehouse=f"hdfs://127.0.0.1:{free_port()}/warehouse")
    with pytest.raises(WarehouseUnreachable) as raised:
        table_exists(settings, TABLES["gold.committed_offsets"])
    message = str(raised.value)
    assert "\n" not in message and message.startswith(f"warehouse {settings.warehouse_uri} cannot be read")
    assert "storage.delta_rs" in message


ROOT = Path(__file__).resolve().parents[2]


def _executor_python() -> tuple[str, str]:
    """A Python for the executors' workers without offsetlake: the base interpreter (not this virtualenv's,
    whose .pth puts the checkout on the path) and, for its PYTHONPATH, the virtualenv's site-packages
    (pyarrow, numpy, pandas; a PYTHONPATH entry's .pth files are not read). The driver's PySpark picks the
    workers' interpreter from PYSPARK_PYTHON (pyspark/core/context.py), not from spark.pyspark.python."""
    return getattr(sys, "_base_executable", sys.executable), sysconfig.get_paths()["purelib"]


def _offsetlake(*args: str, env: dict[str, str], cwd: Path, exit_codes: tuple[int, ...] = (0,)) -> str:
    result = subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode in exit_codes, \
        f"offsetlake {' '.join(args)}:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    return result.stdout


def test_the_executors_python_has_no_offsetlake_of_its_own(tmp_path: Path) -> None:
    python, path = _executor_python()
    env = {"PYTHONPATH": path, "PATH": os.environ["PATH"]}
    probe = subprocess.run([python, "-c", "import pyarrow, pyspark; import decoders"],
                           cwd=tmp_path, env=env, capture_output=True, text=True)
    assert probe.returncode == 1 and "No module named 'decoders'" in probe.stderr


@pytest.mark.timeout(1800)  # ten CLI processes: 585 s at load ~2 (2026-11-27); the suite's 900 s is too close
def test_the_main_job_on_a_standalone_cluster_with_the_warehouse_on_hdfs_gives_the_tables_of_local_2(
        spark, settings_for, hdfs: EmbeddedHdfs, spark_cluster: StandaloneCluster, tmp_path: Path) -> None:
    """The main job as processes (``ingest --once``, ``gold``, ``snapshot-end-offsets``, ``lag``, ``check``, then
    ``sql`` and ``dashboard``), once on ``local[2]`` with a local warehouse, once on ``spark://`` (two workers,
    executors without offsetlake: the driver ships its code) with the warehouse on HDFS. The topic holds a
    group's history, a group behind on the topic itself (for lag), and two records only the Python decoders
    handle (a truncated commit, an unknown record type), so the executors' Python workers must import the
    shipped ``decoders``."""
    from pipelines.gold.refresh import GOLD
    from schemas.catalog import SILVER
    from tests.pipelines.maintained_warehouse import BATCHES
    from tests.pipelines.test_ingest import produce_raw

    base = settings_for()
    client = base.kafka.librdkafka_config()
    topic = f"cluster-{uuid.uuid4().hex[:8]}"
    create_topic(client, topic, partitions=2)
    commit_key, commit_value = encode_record("offset_commit", {"group": "g", "topic": "t", "partition": 0},
                                             {"offset": 5, "metadata": "", "commit_timestamp": 5}, 3)
    records = [(k, v) for batch in BATCHES for k, v, _ in batch]
    records += [(commit_key, commit_value[:-3]), (b"\x00\x63" + commit_key[2:], commit_value)]
    # A group behind on the test's own topic, for lag: it exists on the broker, so snapshots have its ends.
    records += [encode_record("offset_commit", {"group": "lag-group", "topic": topic, "partition": p},
                              {"offset": 1, "metadata": "", "commit_timestamp": 5}, 3) for p in range(2)]
    produce_raw(client, topic, records, partitions=2)

    local = settings_for(warehouse=str(tmp_path / "local"))
    remote = settings_for(warehouse=f"{hdfs.uri}/on-cluster-{uuid.uuid4().hex[:8]}")
    common = {"PYTHONPATH": str(ROOT), "OFFSETLAKE_KAFKA__BOOTSTRAP_SERVERS": base.kafka.bootstrap_servers,
              "OFFSETLAKE_CLUSTER_NAME": base.cluster_name, "OFFSETLAKE_SPARK__LOG_LEVEL": "ERROR"}
    python, path = _executor_python()
    on_cluster = {"spark.executor.memory": "512m", "spark.cores.max": "2", "spark.executorEnv.PYTHONPATH": path}
    runs = (
        {**os.environ, **common, "OFFSETLAKE_WAREHOUSE": local.warehouse},
        {**os.environ, **common, "OFFSETLAKE_WAREHOUSE": remote.warehouse, "PYSPARK_PYTHON": python,
         "OFFSETLAKE_SPARK__MASTER": spark_cluster.master_url,
         "OFFSETLAKE_SPARK__EXTRA_CONF": ",".join(f"{k}={v}" for k, v in on_cluster.items())},
    )
    checks = []
    for n, env in enumerate(runs):
        _offsetlake("ingest", "--topic", topic, "--once", env=env, cwd=tmp_path)
        _offsetlake("gold", env=env, cwd=tmp_path)
        _offsetlake("snapshot-end-offsets", "--topics", topic, env=env, cwd=tmp_path)
        _offsetlake("lag", env=env, cwd=tmp_path)
        report = tmp_path / f"check-{n}.json"
        _offsetlake("check", "--json", str(report), env=env, cwd=tmp_path, exit_codes=(0, 1))  # 1: critical failed
        checks.append(json.loads(report.read_text(encoding="utf-8")))
    from pipelines.gold import consumer_lag
    from schemas import offsets_topic_records

    assert read_table(spark, remote, offsets_topic_records.TABLE).count() == len(records)
    # Lag from each run's own snapshot (taken at different times): the same offsets, lags and statuses.
    same = ["group", "topic", "partition", "committed_offset", "earliest_offset", "latest_offset", "lag",
            "partition_status", "group_status"]

    def lag_rows(settings) -> list[tuple]:  # type: ignore[no-untyped-def, type-arg]
        return sorted(tuple(row) for row in read_table(spark, settings, consumer_lag.TABLE).select(*same).collect())

    assert lag_rows(remote) == lag_rows(local) and [r[:3] for r in lag_rows(local)] == [
        ("lag-group", topic, 0), ("lag-group", topic, 1)]
    assert all(r[6] > 0 for r in lag_rows(local)), "the group is behind on both partitions"
    verdicts = [sorted((r["suite"], r["expectation"], r["status"]) for r in report["results"]) for report in checks]
    assert verdicts[0] == verdicts[1] and checks[0]["ok"] == checks[1]["ok"] and verdicts[0]
    for spec in (*SILVER, *GOLD):
        assert _rows(spark, remote, spec) == _rows(spark, local, spec), spec.name
    from schemas import quarantine

    reasons = [row["reason"] for row in read_table(spark, remote, quarantine.TABLE).collect()]
    assert len(reasons) == 2 and all(reasons), "both odd records quarantined with the Python decoders' reasons"
    # The readers without Spark, on the HDFS warehouse: SQL and the dashboard through delta-rs.
    hdfs_env = runs[1]
    answer = _offsetlake("sql", "--engine", "delta-rs", "--format", "json",
                         "SELECT count(*) AS n FROM gold.committed_offsets", env=hdfs_env, cwd=tmp_path)
    assert json.loads(answer.splitlines()[0]) == {"n": read_table(spark, local, GOLD[0]).count()}
    _offsetlake("dashboard", "--engine", "delta-rs", "--out", str(tmp_path / "dashboard.html"), env=hdfs_env,
                cwd=tmp_path)
    assert "maint-group" in (tmp_path / "dashboard.html").read_text(encoding="utf-8")
    executors = list((spark_cluster.data_dir).glob("worker-*/app-*/*/stderr"))
    assert len({path.parts[-4] for path in executors}) == 2, "both workers ran executors"
