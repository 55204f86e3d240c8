"""pipelines/ingest.py: __consumer_offsets into bronze and silver, exactly once, bad records quarantined."""

from __future__ import annotations

import datetime as dt
import os
import random
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from chispa import assert_df_equality

from broker.workload import create_topic
from decoders import DecodedRecord, DecodeError, decode_record, encode_record
from pipelines.delta_tables import read_table
from pipelines.ingest import IngestOptions, checkpoint_path, run_ingest, write_batch
from schemas.catalog import TABLES
from tests.spark_conf import as_env as spark_conf_env

pytestmark = [pytest.mark.broker, pytest.mark.spark]
ROOT = Path(__file__).resolve().parents[2]

BRONZE = TABLES["bronze.offsets_topic_records"]
OFFSET_COMMITS = TABLES["silver.offset_commits"]
GROUP_MEMBERS = TABLES["silver.group_members"]
GROUP_RECORDS = TABLES["silver.consumer_group_records"]
QUARANTINE = TABLES["silver.quarantine"]


def produce_raw(client: dict[str, str], topic: str, records: list[tuple[bytes | None, bytes | None]],
                partitions: int = 1) -> None:
    from confluent_kafka import Producer

    producer = Producer({**client, "linger.ms": 5})
    for i, (key, value) in enumerate(records):
        producer.produce(topic, key=key, value=value, partition=i % partitions)
    assert producer.flush(30) == 0


def ms(value: int | None) -> dt.datetime | None:
    if value is None:
        return None
    return dt.datetime.fromtimestamp(value / 1000, dt.UTC).replace(tzinfo=None)


def test_silver_holds_exactly_what_the_decoders_read_from_real_groups(spark, real_traffic_warehouse) -> None:  # type: ignore[no-untyped-def]
    """Every record real groups wrote (the shared real-traffic warehouse: classic groups of the range,
    roundrobin and cooperative-sticky assignors, static members, a crash, KIP-848 groups), decoded
    row by row with the pure decoder, is exactly what the ingest put in silver."""
    traffic = real_traffic_warehouse
    expected = assert_silver_matches_the_decoders(spark, traffic.settings)
    classic, modern = traffic.quality.classic, traffic.quality.modern
    assert any(c[2] == classic for c in expected["commits"])
    assert any(m[2] == classic and m[7] != "[]" for m in expected["members"])
    assert any(m[2] == traffic.demo.groups.cooperative and m[7] != "[]" for m in expected["members"])
    assert {r[2] for r in expected["group_records"] if r[3] == modern} >= {
        "consumer_group_metadata", "consumer_group_member_metadata", "consumer_group_current_member_assignment"}


def assert_silver_matches_the_decoders(spark, settings, source_topic: str | None = None) -> dict[str, list]:
    """Decode every bronze row with decoders.decode_record and compare with silver, table by table."""
    bronze = read_table(spark, settings, BRONZE)
    if source_topic:
        bronze = bronze.filter(bronze.source_topic == source_topic)
    decoded = {(r["source_partition"], r["source_offset"]): decode_record(r["key"], r["value"])
               for r in bronze.collect()}

    expected_commits = []
    expected_members = []
    expected_group_records = []
    for (partition, offset), record in decoded.items():
        assert isinstance(record, DecodedRecord)
        if record.type == "offset_commit":
            value = record.value or {}
            topic_id = value.get("topic_id")
            expected_commits.append((partition, offset, record.key["group"], record.key["topic"],
                                     record.key["partition"], value.get("offset"), value.get("leader_epoch"),
                                     value.get("metadata"), ms(value.get("commit_timestamp")),
                                     str(topic_id) if topic_id and any(topic_id) else None, record.is_tombstone))
        elif record.type == "group_metadata" and record.value is not None:
            for member in record.value["members"]:
                assigned = sorted((p["topic"], tuple(p["partitions"])) for p in member["assignment"]["partitions"])
                expected_members.append((partition, offset, record.key["group"], record.value["generation"],
                                         member["member_id"], member["client_id"],
                                         member["member_id"] == record.value["leader"], str(assigned)))
        elif record.type.startswith("consumer_group"):
            expected_group_records.append((partition, offset, record.type, record.key["group_id"],
                                           record.key.get("member_id"), record.is_tombstone))

    def silver(spec):  # type: ignore[no-untyped-def]
        frame = read_table(spark, settings, spec)
        return frame.filter(frame.source_topic == source_topic) if source_topic else frame

    commit_cols = ["source_partition", "source_offset", "group", "topic", "partition", "offset", "leader_epoch",
                   "metadata", "commit_timestamp", "topic_id", "is_tombstone"]
    actual = silver(OFFSET_COMMITS).select(*commit_cols)
    assert_df_equality(actual, spark.createDataFrame(expected_commits, actual.schema), ignore_row_order=True,
                       ignore_nullable=True)
    actual_members = sorted(
        (m["source_partition"], m["source_offset"], m["group"], m["generation"], m["member_id"], m["client_id"],
         m["is_leader"], str(sorted((p["topic"], tuple(p["partitions"])) for p in m["assigned_partitions"])))
        for m in silver(GROUP_MEMBERS).collect()
    )
    assert actual_members == sorted(expected_members)
    assert sorted((r["source_partition"], r["source_offset"], r["type"], r["group_id"], r["member_id"],
                   r["is_tombstone"]) for r in silver(GROUP_RECORDS).collect()) == sorted(expected_group_records)
    assert silver(QUARANTINE).count() == 0
    return {"commits": expected_commits, "members": expected_members, "group_records": expected_group_records}


def test_reference_coordinator_records_produced_to_a_plain_topic_ingest_like_the_real_thing(
        spark, settings_for, tmp_path) -> None:
    from cli.main import main
    from coordinator import simulate

    settings = settings_for()
    client = settings.kafka.librdkafka_config()
    topic = f"simulated-{uuid.uuid4().hex[:8]}"
    scenario = ROOT / "conf" / "scenarios" / "cooperative-scale-out.yaml"
    # The plain topic needs the scenario's __consumer_offsets partitions, so each group keeps its partition.
    # retention.ms=-1: the scenario's timestamps are in the past and time-based retention would delete them.
    create_topic(client, topic, partitions=max(r.partition for r in simulate(scenario).records) + 1,
                 config={"retention.ms": "-1"})
    assert main(["simulate", str(scenario), "--out", str(tmp_path / "sim"), "--produce-to", topic,
                 "--bootstrap-servers", settings.kafka.bootstrap_servers]) == 0
    produced = (tmp_path / "sim" / "records.jsonl").read_text().splitlines()

    run_ingest(spark, settings, IngestOptions(topic=topic, once=True))
    assert read_table(spark, settings, BRONZE).count() == len(produced)
    expected = assert_silver_matches_the_decoders(spark, settings, topic)
    generations = {m[3] for m in expected["members"]}
    assert len(generations) >= 3, "the scale-out goes through several generations"
    assert len({m[5] for m in expected["members"]}) == 4, "all four workers reach silver.group_members"


def decode_error(key: bytes, value: bytes | None) -> str:
    try:
        decode_record(key, value)
    except DecodeError as exc:
        return str(exc)
    raise AssertionError("expected a DecodeError")


def test_corrupt_records_on_a_plain_topic_are_quarantined_and_the_stream_goes_on(spark, settings_for) -> None:
    settings = settings_for()
    client = settings.kafka.librdkafka_config()
    topic = f"offsets-copy-{uuid.uuid4().hex[:8]}"
    create_topic(client, topic, partitions=1)
    good_key, good_value = encode_record("offset_commit", {"group": "g", "topic": "t", "partition": 0},
                                         {"offset": 42, "metadata": "", "commit_timestamp": 1_000}, 4)
    truncated = (good_key, good_value[:-2])
    bad_utf8 = (good_key[:4] + b"\xfe" + good_key[5:], good_value)
    unknown = (b"\x00\x63" + good_key[2:], good_value)
    records = [truncated, (good_key, good_value), bad_utf8, unknown, (None, b"no key"), (good_key, None)]
    produce_raw(client, topic, records)

    run_ingest(spark, settings, IngestOptions(topic=topic, once=True))

    quarantined = {r["source_offset"]: r for r in read_table(spark, settings, QUARANTINE).collect()}
    assert sorted(quarantined) == [0, 2, 3, 4]
    assert quarantined[0]["reason"] == decode_error(*truncated)
    assert quarantined[2]["reason"] == decode_error(*bad_utf8)
    assert quarantined[3]["reason"] == "unknown record type 99" and quarantined[3]["record_type"] == 99
    assert quarantined[4]["reason"].startswith("null key")
    assert quarantined[0]["raw_value"] == truncated[1] and quarantined[0]["source_topic"] == topic
    commits = read_table(spark, settings, OFFSET_COMMITS).orderBy("source_offset").collect()
    assert [(c["source_offset"], c["offset"], c["is_tombstone"]) for c in commits] == [(1, 42, False), (5, None, True)]
    assert read_table(spark, settings, BRONZE).count() == len(records)


def test_a_replayed_batch_writes_no_table_twice(spark, settings_for) -> None:
    settings = settings_for()
    key, value = encode_record("offset_commit", {"group": "g", "topic": "t", "partition": 1},
                               {"offset": 7, "metadata": "", "commit_timestamp": 5}, 3)
    batch = spark.createDataFrame(
        [(key, value, "replay-topic", 0, 0, dt.datetime(2026, 1, 1)), (b"\x00\x07", b"", "replay-topic", 0, 1,
                                                                        dt.datetime(2026, 1, 1))],
        "key binary, value binary, topic string, partition int, offset long, timestamp timestamp")
    from pipelines.ingest import ensure_tables

    ensure_tables(spark, settings)
    write_batch(spark, settings, "replay-topic", batch, 0)
    write_batch(spark, settings, "replay-topic", batch, 0)  # as after a crash before the checkpoint commit
    assert read_table(spark, settings, BRONZE).count() == 2
    assert read_table(spark, settings, OFFSET_COMMITS).count() == 1
    assert read_table(spark, settings, QUARANTINE).count() == 1
    write_batch(spark, settings, "replay-topic", batch, 1)  # a new batch id is a new write
    assert read_table(spark, settings, BRONZE).count() == 4


def test_a_batch_reports_the_end_of_every_partition_it_planned_even_one_with_nothing_new(spark, settings_for) -> None:
    """Issue 12, item 7: ``ingest --once`` printed "22 records behind the topic's end" with nothing
    behind; the 22 were a partition with no new records in that batch, missing from the batch's ends."""
    from pipelines.offsets_topic_source import topic_end_offsets

    settings = settings_for()
    client = settings.kafka.librdkafka_config()
    topic = f"quiet-partition-{uuid.uuid4().hex[:8]}"
    create_topic(client, topic, partitions=2)
    key, value = encode_record("offset_commit", {"group": "g", "topic": "t", "partition": 0},
                               {"offset": 1, "metadata": "", "commit_timestamp": 1}, 4)
    produce_raw(client, topic, [(key, value)] * 6, partitions=2)  # three records in each partition
    first = run_ingest(spark, settings, IngestOptions(topic=topic, once=True))
    assert first and first[-1].end_offsets == {0: 3, 1: 3}
    produce_raw(client, topic, [(key, value)] * 2, partitions=1)  # partition 0 only: partition 1 is quiet
    [second] = run_ingest(spark, settings, IngestOptions(topic=topic, once=True))
    assert second.records == 2
    assert second.end_offsets == {0: 5, 1: 3} == topic_end_offsets(settings, topic)


def test_two_clusters_share_a_warehouse_with_their_own_checkpoints_and_tagged_rows(spark, settings_for) -> None:
    east, west = settings_for(cluster_name="east"), settings_for(cluster_name="west")
    client = east.kafka.librdkafka_config()
    topic = f"shared-{uuid.uuid4().hex[:8]}"
    create_topic(client, topic, partitions=1)
    key, value = encode_record("offset_commit", {"group": "g", "topic": "t", "partition": 0},
                               {"offset": 1, "metadata": "", "commit_timestamp": 1}, 4)
    produce_raw(client, topic, [(key, value)] * 3)
    run_ingest(spark, east, IngestOptions(topic=topic, once=True))
    run_ingest(spark, west, IngestOptions(topic=topic, once=True))
    assert checkpoint_path(east, topic) != checkpoint_path(west, topic)
    rows = read_table(spark, east, OFFSET_COMMITS).groupBy("cluster_name").count().collect()
    assert {r["cluster_name"]: r["count"] for r in rows} == {"east": 3, "west": 3}


def wait_for_a_killed_writers_lease(settings) -> None:  # type: ignore[no-untyped-def]
    """Until the lease a ``kill -9`` left expires, which keeps the next writer out (pipelines/writer_lease.py)."""
    from pipelines.writer_lease import current_lease

    lease = current_lease(settings)
    if lease is not None and lease.released_at is None:
        time.sleep(max(0.0, (lease.expires_at - dt.datetime.now(dt.UTC)).total_seconds()) + 0.1)


@pytest.mark.long
def test_killing_the_ingest_and_the_main_job_mid_batch_loses_and_duplicates_nothing_and_gold_ends_level(
        spark, settings_for, tmp_path) -> None:
    """Two ``kill -9``s of the ingest (one before any batch is committed, one after), one of the main job while
    gold's query has a batch in flight, then the main job run continuously to the end.

    The last run is ``offsetlake run`` (no ``--once``: the ingest streaming, gold and lag refreshed after its
    batches): once gold has absorbed the batch that reached the topic's end it gets SIGTERM and must stop
    cleanly, with its totals, leaving gold equal to a full rebuild from bronze (issue 14, item 2). Folded in
    here so the suite starts one CLI JVM fewer (issue 11); each run is a real ``python -m cli.main`` process.
    """
    settings = settings_for(cluster_name="crashy")
    client = settings.kafka.librdkafka_config()
    topic = f"crash-{uuid.uuid4().hex[:8]}"
    partitions = 3
    create_topic(client, topic, partitions=partitions)
    records = []
    for i in range(600):  # three batches of 200: killed in the first, killed in the second, the rest at the end
        group = f"group-{i % 17}"
        records.append(encode_record("offset_commit", {"group": group, "topic": "orders", "partition": i % 5},
                                     {"offset": i, "metadata": "", "commit_timestamp": 1_700_000_000_000 + i}, 4))
    produce_raw(client, topic, records, partitions=partitions)

    env = {**os.environ, "PYTHONPATH": str(ROOT), "OFFSETLAKE_WAREHOUSE": settings.warehouse,
           "OFFSETLAKE_CLUSTER_NAME": settings.cluster_name,
           "OFFSETLAKE_KAFKA__BOOTSTRAP_SERVERS": settings.kafka.bootstrap_servers,
           "OFFSETLAKE_SPARK__SHUFFLE_PARTITIONS": "1", "OFFSETLAKE_SPARK__LOG_LEVEL": "ERROR",
           # Each killed process's writer lease keeps the next out until it expires: a short one.
           "OFFSETLAKE_WRITER__LEASE_SECONDS": "3", **spark_conf_env()}
    command = [sys.executable, "-m", "cli.main", "ingest", "--topic", topic, "--max-offsets-per-trigger", "200"]
    checkpoint = Path(checkpoint_path(settings, topic))  # a local warehouse in this test
    rng = random.Random(7)
    kills = 0
    for attempt in range(2):  # kill while batch 0 runs (nothing committed yet), then while batch 1 runs
        log = open(tmp_path / f"ingest-{attempt}.log", "w")
        wait_for_a_killed_writers_lease(settings)
        process = subprocess.Popen([*command, "--once"], cwd=tmp_path, env=env, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            # Wait until a batch is planned (offset log written) but not committed, then kill -9.
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline and process.poll() is None:
                planned = {int(p.name) for p in (checkpoint / "offsets").glob("[0-9]*")}
                done = {int(p.name) for p in (checkpoint / "commits").glob("[0-9]*")}
                if planned - done and len(done) >= attempt:
                    time.sleep(rng.uniform(0.0, 1.5))
                    break
                time.sleep(0.1)
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                kills += 1
        finally:
            process.wait(timeout=60)
            log.close()
    assert kills == 2, "the ingest finished before it could be killed; produce more records"

    # Then `run` itself, killed while gold's query has a batch planned but not committed (its offsets written,
    # its gold writes under way): the restart below runs that batch again (issue 14, item 2, for gold).
    gold_checkpoint = Path(settings.warehouse) / "_checkpoints" / "gold"
    log = open(tmp_path / "run-killed.log", "w")
    wait_for_a_killed_writers_lease(settings)
    process = subprocess.Popen([sys.executable, "-m", "cli.main", "run", "--topic", topic, "--trigger-interval",
                                "1 second", "--snapshot-every", "0", "--max-offsets-per-trigger", "100"],
                               cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    seen_in_flight = False
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and process.poll() is None:
            planned = {int(p.name) for p in (gold_checkpoint / "offsets").glob("[0-9]*")}
            done = {int(p.name) for p in (gold_checkpoint / "commits").glob("[0-9]*")}
            if planned - done and len(planned) >= 2:  # past the catch-up's first batch: one the ingest's made
                seen_in_flight = True
                time.sleep(rng.uniform(0.0, 1.0))
                break
            time.sleep(0.05)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=60)
        log.close()
    assert seen_in_flight, (tmp_path / "run-killed.log").read_text()[-2000:]

    def gold_level(output: str) -> bool:  # gold has absorbed the batch that reached the topic's end
        at_end = re.search(r"^ingest: batch (\d+): .* 0 records behind the topic's end$", output, re.MULTILINE)
        absorbed = re.findall(r"^run: batch(?:es \d+-| )(\d+): .*; freshness [\d.,]+s$", output, re.MULTILINE)
        return at_end is not None and any(int(last) >= int(at_end.group(1)) for last in absorbed)

    log_path = tmp_path / "run-continuous.log"
    with open(log_path, "w") as log:
        # No --max-offsets-per-trigger: what the kills left is one batch, and gold is refreshed once for it.
        main_job = [sys.executable, "-m", "cli.main", "run", "--topic", topic, "--trigger-interval", "1 second",
                    "--snapshot-every", "0"]
        wait_for_a_killed_writers_lease(settings)
        process = subprocess.Popen(main_job, cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            deadline = time.monotonic() + 300
            while not gold_level(log_path.read_text()) and time.monotonic() < deadline:
                assert process.poll() is None, log_path.read_text()[-2000:]
                time.sleep(0.2)
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=120) == 0, log_path.read_text()[-2000:]
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
    output = log_path.read_text()
    assert "stopping after the current batch" in output
    batches = [int(n.replace(",", "")) for n in re.findall(r"ingest: batch \d+: ([\d,]+) records in", output)]
    [(total, count)] = re.findall(r"ingested ([\d,]+) records in (\d+) batches", output)
    assert batches and sum(batches) > 0
    assert (int(total.replace(",", "")), int(count)) == (sum(batches), len(batches))

    bronze = read_table(spark, settings, BRONZE).filter(f"source_topic = '{topic}'")
    rows = bronze.select("source_partition", "source_offset", "key", "value").collect()
    positions = [(r["source_partition"], r["source_offset"]) for r in rows]
    assert len(positions) == len(set(positions)), "a record was landed twice"
    per_partition = {p: sorted(o for q, o in positions if q == p) for p in range(partitions)}
    for p in range(partitions):
        expected = list(range(len(records[p::partitions])))
        assert per_partition[p] == expected, f"partition {p} has gaps or extras"
    # Offset by offset, bronze holds exactly the bytes that were produced.
    by_position = {(r["source_partition"], r["source_offset"]): (r["key"], r["value"]) for r in rows}
    for p in range(partitions):
        for offset, record in enumerate(records[p::partitions]):
            assert by_position[(p, offset)] == record
    commits = read_table(spark, settings, OFFSET_COMMITS).filter(f"source_topic = '{topic}'")
    assert commits.count() == len(records)
    assert commits.select("source_partition", "source_offset").distinct().count() == len(records)

    # Gold as the main job left it is gold rebuilt from the raw records in bronze, table by table.
    from pipelines.gold.refresh import GOLD, rebuild_differences
    from pipelines.silver import tables_from_bronze

    assert read_table(spark, settings, TABLES["gold.committed_offsets"]).count() == 17 * 5  # groups x partitions
    differences = rebuild_differences(spark, settings, tables_from_bronze(spark, settings))
    assert differences == {spec.name: (0, 0) for spec in GOLD}
