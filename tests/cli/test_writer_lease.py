"""cli/writer_lease.py: a second writer of a warehouse and cluster is refused in one line before Spark starts.

The fast tests hold the lease in this process and start the refused command as a process of its own (or call it
here, for the commands that would only start Spark after the refusal). The acceptance case (marked ``long``) is
two ``offsetlake run`` processes on the embedded broker, then a ``kill -9`` of the one that runs.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from cli.errors import CommandError
from cli.main import main
from cli.writer_lease import writer_lease_held
from conf.settings import Settings, WriterSettings
from pipelines.writer_lease import acquire, current_lease, hold, release

ROOT = Path(__file__).resolve().parents[2]

#: ``offsetlake ARGS...`` in this process, then whether it started a JVM (PySpark's gateway to one).
PROBE = """
import sys
from cli.main import main
status = main(sys.argv[1:])
pyspark = sys.modules.get("pyspark")
print("started a JVM" if pyspark is not None and pyspark.SparkContext._gateway is not None else "no JVM")
sys.exit(status)
"""


def refusal(settings: Settings, holder_pid: int, command: str) -> re.Pattern[str]:
    """The line a refused command prints, with the holder's pid and command."""
    return re.compile(
        rf"offsetlake: cluster {settings.cluster_name}'s tables in {re.escape(settings.warehouse_uri)} are being "
        rf"written by '{command}' \(pid {holder_pid} on {re.escape(socket.gethostname())}, since "
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\); stop that process, or, if it was killed, start this again once its "
        r"lease expires in \d+ s \(writer.lease_seconds\)")


def cli_env(settings: Settings, **more: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "OFFSETLAKE_WAREHOUSE": settings.warehouse,
            "OFFSETLAKE_CLUSTER_NAME": settings.cluster_name, **more}


def test_a_second_run_or_ingest_is_refused_in_one_line_before_spark_starts(tmp_path: Path) -> None:
    settings = Settings(warehouse=str(tmp_path / "warehouse"), cluster_name="east")
    with hold(settings, "offsetlake run"):
        for args in (["run"], ["ingest", "--once"]):
            started = time.monotonic()
            result = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=tmp_path, env=cli_env(settings),
                                    capture_output=True, text=True, timeout=60)
            elapsed = time.monotonic() - started
            assert result.returncode == 1, (args, result.stdout, result.stderr)
            assert refusal(settings, os.getpid(), "offsetlake run").fullmatch(result.stderr.strip()), args
            assert result.stdout.strip() == "no JVM", args
            assert elapsed < 10, f"offsetlake {' '.join(args)} took {elapsed:.1f}s to refuse"
    # Nothing half-made: the warehouse holds the lease table and nothing else (no table, no checkpoint).
    assert [p.name for p in (tmp_path / "warehouse").iterdir()] == ["_offsetlake"]


def test_gold_lag_and_validate_are_refused_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    settings = Settings(warehouse=str(tmp_path / "warehouse"), cluster_name="east")
    monkeypatch.setenv("OFFSETLAKE_WAREHOUSE", settings.warehouse)
    monkeypatch.setenv("OFFSETLAKE_CLUSTER_NAME", settings.cluster_name)
    scenario = str(ROOT / "conf" / "scenarios" / "join-errors.yaml")
    acquire(settings, "offsetlake ingest")
    for args in (["run", "--once"], ["gold"], ["lag"], ["lag", "--full"], ["validate", scenario]):
        assert main(args) == 1, args
        assert refusal(settings, os.getpid(), "offsetlake ingest").fullmatch(capsys.readouterr().err.strip()), args


def test_sigterm_stops_a_command_without_a_handler_of_its_own_and_releases_its_lease(tmp_path: Path) -> None:
    settings = Settings(warehouse=str(tmp_path / "warehouse"), cluster_name="east")
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    with pytest.raises(KeyboardInterrupt), writer_lease_held(settings, "gold"):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)  # interrupted at once
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    lease = current_lease(settings)
    assert lease is not None and lease.command == "offsetlake gold" and lease.released_at is not None


def test_a_lost_lease_stops_the_command_after_its_batch_and_exits_1(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    settings = Settings(warehouse=str(tmp_path / "warehouse"), cluster_name="east",
                        writer=WriterSettings(lease_seconds=3.0))
    stop = threading.Event()
    with pytest.raises(CommandError) as raised, writer_lease_held(settings, "ingest", stop):
        held = current_lease(settings)
        release(settings, held)  # type: ignore[arg-type]  # as if it had expired during a pause ...
        acquire(settings.model_copy(update={"writer": WriterSettings()}), "offsetlake run")  # ... and been taken
        assert stop.wait(10), "the command was not told to stop"
    assert str(raised.value).startswith(f"lost the writer lease of cluster east in {settings.warehouse_uri}: ")
    [warning] = capsys.readouterr().err.splitlines()
    assert warning == f"offsetlake: warning: {raised.value}; stopping after the current batch"


@pytest.mark.long
@pytest.mark.jvm_process
def test_two_runs_started_together_one_runs_and_after_its_kill_the_next_starts_once_its_lease_expires(
        settings_for, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 54, item 7's acceptance case, on the embedded broker with a 6-second lease."""
    from broker.workload import create_topic
    from decoders import encode_record
    from tests.pipelines.test_ingest import produce_raw
    from tests.spark_conf import as_env as spark_conf_env

    settings = settings_for(cluster_name="leased")
    client = settings.kafka.librdkafka_config()
    topic = f"leased-{uuid.uuid4().hex[:8]}"
    create_topic(client, topic, partitions=1)
    produce_raw(client, topic, [encode_record("offset_commit", {"group": "g", "topic": "t", "partition": 0},
                                              {"offset": i, "metadata": "", "commit_timestamp": i}, 4)
                                for i in range(20)])
    env = cli_env(settings, OFFSETLAKE_KAFKA__BOOTSTRAP_SERVERS=settings.kafka.bootstrap_servers,
                  OFFSETLAKE_WRITER__LEASE_SECONDS="6", OFFSETLAKE_SPARK__SHUFFLE_PARTITIONS="1",
                  OFFSETLAKE_SPARK__LOG_LEVEL="ERROR", **spark_conf_env())
    command = [sys.executable, "-m", "cli.main", "run", "--topic", topic, "--trigger-interval", "1 second",
               "--snapshot-every", "0"]

    def start(name: str) -> tuple[subprocess.Popen[bytes], Path]:
        log = tmp_path / f"{name}.log"
        with open(log, "w") as out:
            return subprocess.Popen(command, cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True), log

    def refused_within_ten_seconds(process: subprocess.Popen[bytes], log: Path, started: float) -> str:
        while process.poll() is None and time.monotonic() - started < 10:
            time.sleep(0.05)
        assert process.poll() is not None, f"not refused within 10 s: {log.read_text()[-2000:]}"
        assert process.returncode == 1, log.read_text()[-2000:]
        return log.read_text().strip()

    def wait_for(log: Path, pattern: str, process: subprocess.Popen[bytes], seconds: float = 300) -> None:
        deadline = time.monotonic() + seconds
        while not re.search(pattern, log.read_text(), re.MULTILINE):
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)

    processes: list[subprocess.Popen[bytes]] = []
    try:
        started = time.monotonic()
        (first, first_log), (second, second_log) = start("first"), start("second")
        processes += [first, second]
        while first.poll() is None and second.poll() is None and time.monotonic() - started < 10:
            time.sleep(0.05)
        [(refused, refused_log)] = [(p, log) for p, log in ((first, first_log), (second, second_log))
                                    if p.poll() is not None]
        (running, running_log) = (second, second_log) if refused is first else (first, first_log)
        line = refused_within_ten_seconds(refused, refused_log, started)
        assert refusal(settings, running.pid, "offsetlake run").fullmatch(line), line
        wait_for(running_log, r"^ingest: batch \d+: [1-9][\d,]* records", running)

        os.killpg(running.pid, signal.SIGKILL)
        running.wait(timeout=60)
        killed = current_lease(settings)
        assert killed is not None and killed.pid == running.pid and killed.released_at is None
        started = time.monotonic()
        early, early_log = start("early")
        processes.append(early)
        assert refusal(settings, running.pid, "offsetlake run").fullmatch(
            refused_within_ten_seconds(early, early_log, started))

        time.sleep(max(0.0, (killed.expires_at - dt.datetime.now(dt.UTC)).total_seconds()) + 0.2)
        successor, successor_log = start("successor")
        processes.append(successor)
        wait_for(successor_log, r"^run: (no new batch|batch)", successor)
        successor.send_signal(signal.SIGTERM)
        assert successor.wait(timeout=120) == 0, successor_log.read_text()[-3000:]
    finally:
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    ended = current_lease(settings)
    assert ended is not None and ended.pid == successor.pid and ended.released_at is not None  # released at its end
    assert ended.acquired_at >= killed.expires_at

