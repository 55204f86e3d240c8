"""offsetlake run: argument errors are one line; the continuous run waits for __consumer_offsets, rides out a broker
restart and keeps its terminal to its own lines (``--once`` is run by the offsets_ingest DAG's test, the continuous
form under kills by tests/pipelines/test_ingest.py's kill test)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from broker.workload import create_topic
from cli.main import main
from conf.settings import KafkaSettings

ROOT = Path(__file__).resolve().parents[2]


def test_a_negative_snapshot_interval_is_refused_before_spark_starts(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["run", "--snapshot-every", "-1"]) == 2
    assert capsys.readouterr().err.strip() == (
        "offsetlake run: error: argument --snapshot-every: '-1' is not a number of seconds >= 0 (0: no snapshots); "
        "see 'offsetlake run --help'")


def test_a_cap_below_one_record_per_batch_is_refused_before_spark_starts(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["run", "--once", "--max-offsets-per-trigger", "0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "offsetlake run: error: argument --max-offsets-per-trigger: '0' is not a whole number >= 1; "
        "see 'offsetlake run --help'")


# -- the continuous run as a service: a real `offsetlake run` process on a broker of its own ---------------------

#: offsetlake's own lines on stderr: its commands' progress, warnings and errors, each under the command's name.
OWN_STDERR = re.compile(r"^(run|ingest|offsetlake): ")
CYCLE = re.compile(r"^run: (no new batch|batch(?:es)? [\d-]+): ")


def commit_offsets(bootstrap: str, group: str, offsets: dict[int, int]) -> None:
    """One OffsetCommit of ``group`` (a simple consumer, no membership): the record that makes the broker create
    __consumer_offsets when it is the cluster's first."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        deadline = time.monotonic() + 120
        while True:  # the coordinator is not available until the topic it makes has a leader
            try:
                consumer.commit(offsets=[TopicPartition("orders", p, o) for p, o in offsets.items()],
                                asynchronous=False)
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
    finally:
        consumer.close()


def topic_records(bootstrap: str, topic: str) -> set[tuple[int, int, bytes | None, bytes | None]]:
    """Every record of ``topic`` as (partition, offset, key, value), read to its end with an assigned consumer."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
                         "isolation.level": "read_committed"})
    try:
        partitions = sorted(consumer.list_topics(topic, timeout=30).topics[topic].partitions)
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in partitions}
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions if ends[p] > 0])
        found: set[tuple[int, int, bytes | None, bytes | None]] = set()
        deadline = time.monotonic() + 60
        while any(max((o for q, o, _, _ in found if q == p), default=-1) < ends[p] - 1 for p in partitions):
            assert time.monotonic() < deadline, "the topic could not be read to its end"
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                found.add((message.partition(), message.offset(), message.key(), message.value()))
        return found
    finally:
        consumer.close()


class RunProcess:
    """``offsetlake run`` (``python -m cli.main``) with its stdout and stderr in files of their own."""

    def __init__(self, directory: Path, env: dict[str, str], *arguments: str) -> None:
        self.stdout, self.stderr = directory / "stdout.txt", directory / "stderr.txt"
        directory.mkdir(parents=True, exist_ok=True)
        with open(self.stdout, "w") as out, open(self.stderr, "w") as err:
            self.process = subprocess.Popen([sys.executable, "-m", "cli.main", "run", *arguments], cwd=directory,
                                            env=env, stdout=out, stderr=err, start_new_session=True)

    def lines(self, which: str = "stderr") -> list[str]:
        return (self.stdout if which == "stdout" else self.stderr).read_text().splitlines()

    def wait_for(self, pattern: str, which: str = "stderr", timeout: float = 300.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [line for line in self.lines(which) if re.search(pattern, line)]
            if found:
                return found[0]
            assert self.process.poll() is None, self.tail()
            time.sleep(0.5)
        raise AssertionError(f"no line matching {pattern!r} in {which} within {timeout:g} s\n{self.tail()}")

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=180)
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)

    def tail(self) -> str:
        return f"stdout:\n{self.stdout.read_text()[-3000:]}\nstderr:\n{self.stderr.read_text()[-3000:]}"


@pytest.mark.long
def test_run_waits_for_the_offsets_topic_rides_out_a_broker_restart_and_ends_with_gold_equal_to_a_rebuild(
        spark, base_settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A broker of its own, where no group has committed yet: ``run`` (JSON lines) says once that it waits for
    __consumer_offsets, starts when a group's commit makes it, and across a broker restart (down for longer than a
    stalled query is tolerated) says "broker unreachable" and "connected again" once each and goes on. Then a
    second ``run`` (text) on the same warehouse: an idle cycle says "gold current as of <time>". stdout holds the
    cycle lines, stderr only offsetlake's own lines, and bronze holds the topic, gold a rebuild from bronze."""
    from broker.embedded import EmbeddedBroker
    from pipelines.delta_tables import read_table
    from pipelines.gold.refresh import GOLD, rebuild_differences
    from pipelines.silver import tables_from_bronze
    from schemas.catalog import BRONZE
    from tests.spark_conf import as_env as spark_conf_env

    with EmbeddedBroker(tmp_path / "broker") as broker:
        bootstrap = broker.bootstrap_servers
        settings = base_settings.model_copy(update={
            "cluster_name": "service", "warehouse": str(tmp_path / "warehouse"),
            "kafka": KafkaSettings(bootstrap_servers=bootstrap, timeout_seconds=5.0)})
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OFFSETLAKE_WAREHOUSE": settings.warehouse,
               "OFFSETLAKE_CLUSTER_NAME": settings.cluster_name, "OFFSETLAKE_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
               "OFFSETLAKE_KAFKA__TIMEOUT_SECONDS": "5", "OFFSETLAKE_SPARK__SHUFFLE_PARTITIONS": "1",
               "OFFSETLAKE_DEBUG_LOG": str(tmp_path / "debug.log"), "OFFSETLAKE_WRITER__LEASE_SECONDS": "5",
               **spark_conf_env()}
        create_topic({"bootstrap.servers": bootstrap}, "orders", partitions=2)

        first = RunProcess(tmp_path / "first", env, "--trigger-interval", "1 second", "--snapshot-every", "0",
                           "--log-format", "json")
        try:
            first.wait_for("waiting for __consumer_offsets to appear", timeout=120)
            commit_offsets(bootstrap, "before-restart", {0: 3, 1: 4})
            first.wait_for(r'"records": [1-9]', which="stdout", timeout=400)
            broker.restart(down_seconds=30)
            first.wait_for("connected again", timeout=300)
            commit_offsets(bootstrap, "after-restart", {0: 5, 1: 6})
            deadline = time.monotonic() + 300
            while sum(json.loads(line)["records"] for line in first.lines("stdout")
                      if '"records"' in line and json.loads(line)["logger"] == "offsetlake.run") < 4:
                assert time.monotonic() < deadline and first.process.poll() is None, first.tail()
                time.sleep(0.5)
        finally:
            assert first.stop() == 0, first.tail()
        stdout = [json.loads(line) for line in first.lines("stdout")]
        stderr = [json.loads(line) for line in first.lines("stderr")]
        assert all(line["logger"].startswith("offsetlake") and {"time", "level", "message"} <= set(line)
                   for line in stdout + stderr)
        assert all(OWN_STDERR.match(line["message"]) for line in stderr), stderr
        said = [line["message"] for line in stderr]
        assert [m for m in said if "waiting for" in m] == [
            f"run: waiting for __consumer_offsets to appear on {bootstrap} (no group has committed yet)"]
        assert len([m for m in said if m.startswith("run: broker unreachable (")]) == 1, said
        assert said.count("run: connected again") == 1, said
        cycles = [line for line in stdout if CYCLE.match(line["message"])]
        assert cycles and all({"records", "rows", "freshness_seconds", "gold_current_as_of"} <= set(c) for c in cycles)
        in_topic = topic_records(bootstrap, "__consumer_offsets")
        assert sum(c["records"] for c in cycles) == len(in_topic)  # each record read once, none after a restart again

        second = RunProcess(tmp_path / "second", env, "--trigger-interval", "1 second", "--snapshot-every", "5")
        try:
            idle = second.wait_for(r"; gold current as of \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", which="stdout",
                                   timeout=400)
        finally:
            assert second.stop() == 0, second.tail()
        assert idle.startswith("run: no new batch: 0 records")
        assert all(CYCLE.match(line) or line.startswith("ingested ") for line in second.lines("stdout"))
        assert second.lines("stderr") and all(OWN_STDERR.match(line) for line in second.lines("stderr")), \
            second.lines("stderr")

        bronze = read_table(spark, settings, BRONZE).filter("source_topic = '__consumer_offsets'")
        landed = [(r["source_partition"], r["source_offset"], r["key"], r["value"])
                  for r in bronze.select("source_partition", "source_offset", "key", "value").collect()]
        assert len(landed) == len(set(landed))
        assert {(p, o, bytes(k) if k is not None else None, bytes(v) if v is not None else None)
                for p, o, k, v in landed} == in_topic
    differences = rebuild_differences(spark, settings, tables_from_bronze(spark, settings))
    assert differences == {spec.name: (0, 0) for spec in GOLD}
