"""broker/embedded.py: a real KRaft broker that starts, answers, and leaves nothing behind."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from broker.embedded import BrokerError, EmbeddedBroker, new_cluster_id, pid_alive, read_state, server_properties

ROOT = Path(__file__).resolve().parents[2]


def broker_jvms_for(data_dir: Path) -> list[int]:
    """PIDs of any java process whose command line mentions ``data_dir``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "kafka.Kafka" in cmdline and str(data_dir) in cmdline and pid_alive(int(entry.name)):
            pids.append(int(entry.name))
    return pids


def test_the_session_broker_answers_admin_requests_with_test_friendly_settings(kafka_broker: EmbeddedBroker) -> None:
    from confluent_kafka.admin import AdminClient, ConfigResource

    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers})
    metadata = admin.list_topics(timeout=10)
    assert list(metadata.brokers) == [1]
    assert kafka_broker.bootstrap_servers.startswith("127.0.0.1:")
    resource = ConfigResource(ConfigResource.Type.BROKER, "1")
    configs = admin.describe_configs([resource])[resource].result(timeout=10)
    assert configs["offsets.topic.num.partitions"].value == "3"
    assert configs["group.initial.rebalance.delay.ms"].value == "0"
    assert kafka_broker.log_file.stat().st_size > 0, "the broker logs to its file"


def test_server_properties_put_both_listeners_on_loopback(tmp_path: Path) -> None:
    props = server_properties(tmp_path, 1234, 5678, {"num.partitions": "7"})
    assert props["listeners"] == "PLAINTEXT://127.0.0.1:1234,CONTROLLER://127.0.0.1:5678"
    assert props["process.roles"] == "broker,controller"
    assert props["log.dirs"] == str(tmp_path / "kraft-logs")
    assert props["num.partitions"] == "7"


@pytest.mark.jvm_process
def test_a_broker_started_and_stopped_in_process_leaves_no_jvm(tmp_path: Path) -> None:
    broker = EmbeddedBroker(tmp_path / "b")
    with broker:
        pid = broker.state.pid if broker.state else -1
        assert pid_alive(pid)
        assert read_state(tmp_path / "b") is not None
    assert not pid_alive(pid)
    assert broker_jvms_for(tmp_path / "b") == []
    assert read_state(tmp_path / "b") is None


STARTER = """
import subprocess, sys, time
from broker.embedded import die_with_parent
child = subprocess.Popen(die_with_parent(["sleep", "300"]), start_new_session=True)
print(child.pid, flush=True)
time.sleep(300)
"""


def test_a_process_started_attached_becomes_the_command_and_dies_when_its_starter_is_killed() -> None:
    starter = subprocess.Popen([sys.executable, "-c", STARTER], stdout=subprocess.PIPE, text=True,
                               cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert starter.stdout is not None
        pid = int(starter.stdout.readline())
        deadline = time.monotonic() + 10
        while Path(f"/proc/{pid}/cmdline").read_bytes() != b"sleep\x00300\x00" and time.monotonic() < deadline:
            time.sleep(0.02)  # the launcher execs the command in place: same pid, the command's own cmdline
        assert Path(f"/proc/{pid}/cmdline").read_bytes() == b"sleep\x00300\x00"
        starter.kill()  # SIGKILL: no Python cleanup runs; only the kernel's parent-death signal can stop it
        starter.wait()
        deadline = time.monotonic() + 10
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not pid_alive(pid)
    finally:
        starter.kill()


@pytest.mark.jvm_process
def test_a_failed_start_reports_the_reason_and_leaves_no_jvm(tmp_path: Path) -> None:
    # The broker listener's port is already taken, so the JVM exits during start-up.
    import socket

    from broker.embedded import free_port

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port, controller = taken.getsockname()[1], free_port()
        listeners = f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}"
        broker = EmbeddedBroker(tmp_path / "bad", start_timeout=60, overrides={
            "listeners": listeners, "advertised.listeners": listeners,
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller}",
        })
        reason = r"exited with code \d+ during start-up: .*(bind|[Aa]ddress already in use)"
        with pytest.raises(BrokerError, match=reason):
            broker.start()
    assert broker_jvms_for(tmp_path / "bad") == []


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=180, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.jvm_process
def test_cli_start_prints_the_address_status_reports_it_and_stop_leaves_no_process(tmp_path: Path) -> None:
    data_dir = tmp_path / "cli-broker"
    started = cli("kafka", "start", "--data-dir", str(data_dir), cwd=tmp_path)
    try:
        assert started.returncode == 0, started.stderr
        address = started.stdout.strip()
        assert address.startswith("127.0.0.1:")
        status = cli("kafka", "status", "--data-dir", str(data_dir), cwd=tmp_path)
        assert status.returncode == 0 and f"bootstrap={address}" in status.stdout
        # The broker outlives the `start` command: it still answers afterwards.
        from confluent_kafka.admin import AdminClient

        assert AdminClient({"bootstrap.servers": address}).list_topics(timeout=10).brokers
    finally:
        stopped = cli("kafka", "stop", "--data-dir", str(data_dir), cwd=tmp_path)
    assert stopped.returncode == 0, stopped.stderr
    assert broker_jvms_for(data_dir) == []
    status = cli("kafka", "status", "--data-dir", str(data_dir), cwd=tmp_path)
    assert status.returncode == 3 and status.stdout.strip() == "stopped"


def test_cli_stop_without_a_broker_says_so(tmp_path: Path) -> None:
    result = cli("kafka", "stop", "--data-dir", str(tmp_path / "none"), cwd=tmp_path)
    assert result.returncode == 0
    assert "no broker is recorded" in result.stdout


def test_a_new_cluster_id_is_sixteen_bytes_and_never_reads_as_an_option() -> None:
    ids = [new_cluster_id() for _ in range(5000)]  # about 78 would start with "-" if drawn freely
    assert not [cluster_id for cluster_id in ids if cluster_id.startswith("-")]
    assert all(len(base64.urlsafe_b64decode(cluster_id + "==")) == 16 for cluster_id in ids)
