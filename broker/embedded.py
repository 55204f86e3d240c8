"""Run a single-node KRaft Kafka broker (broker + controller in one JVM) on 127.0.0.1.

Used by ``make demo``, ``offsetlake kafka start|stop|status`` and the test
suite's session fixture. Everything the broker writes lives in one directory:

    <data_dir>/server.properties   generated config (ports chosen at start)
    <data_dir>/log4j2.properties   logging to <data_dir>/broker.log
    <data_dir>/kraft-logs/         the log dirs (incl. __consumer_offsets segments)
    <data_dir>/broker.json         pid and addresses, so another process can stop it

Start-up follows Kafka's quickstart: ``StorageTool format --standalone`` (in its
own JVM, because it calls ``Exit.exit``), then ``kafka.Kafka server.properties``.
Readiness is a real admin request (list topics) answered by the broker, not a
port probe. A start that fails or is interrupted kills the JVM before raising.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

from jvm.artifacts import kafka_classpath

STATE_FILE = "broker.json"

# Test-friendly settings for a single-node broker (replication factors of 1). Few
# __consumer_offsets partitions keep Spark's task count low; the KIP-848 timings are
# broker-side (GroupCoordinatorConfig.java) and default to a 45 s session minimum,
# far too slow for tests. Share groups (KIP-932) and streams groups (KIP-1071) need no switch
# here: Kafka 4.2's format finalizes share.version=1 and streams.version=1 (their default levels at
# MetadataVersion 4.2-IV1, server-common's Feature.java) and group.coordinator.rebalance.protocols
# defaults to classic,consumer,streams; their session and heartbeat timings are broker-side too
# (group.share.*, group.streams.*), with the same 45 s minimum. The share coordinator's state topic
# (__share_group_state) defaults to 50 partitions, created when the first share group initializes.
TEST_FRIENDLY_PROPERTIES: dict[str, str] = {
    "num.partitions": "1",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "3",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
    "group.consumer.min.heartbeat.interval.ms": "100",
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.session.timeout.ms": "2000",
    "group.consumer.session.timeout.ms": "6000",
    "share.coordinator.state.topic.num.partitions": "3",
    "group.share.min.heartbeat.interval.ms": "100",
    "group.share.heartbeat.interval.ms": "500",
    "group.share.min.session.timeout.ms": "2000",
    "group.share.session.timeout.ms": "6000",
    "group.streams.min.heartbeat.interval.ms": "100",
    "group.streams.heartbeat.interval.ms": "500",
    "group.streams.min.session.timeout.ms": "2000",
    "group.streams.session.timeout.ms": "6000",
    "group.streams.initial.rebalance.delay.ms": "0",
    "auto.create.topics.enable": "true",
    "log.segment.bytes": str(16 * 1024 * 1024),
}

LOG4J2_PROPERTIES = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log_file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.apache.name = org.apache.kafka
logger.apache.level = INFO
"""


class BrokerError(RuntimeError):
    """The broker could not be started, reached or stopped. The message says why."""


@dataclass(frozen=True)
class BrokerState:
    """What ``broker.json`` records about a running broker."""

    pid: int
    bootstrap_servers: str
    controller_port: int
    data_dir: str
    cluster_id: str
    log_file: str


def free_port() -> int:
    """An unused TCP port on 127.0.0.1 (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def new_cluster_id() -> str:
    """A Kafka cluster id: 16 random bytes in URL-safe base64 without padding, like ``Uuid``.

    Like Kafka's ``Uuid.randomUuid()`` it never starts with ``-``: ``kafka-storage format -t -xyz``
    would read the id as an option (one id in 64 did, and failed the broker's start).
    """
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not cluster_id.startswith("-"):
            return cluster_id


def server_properties(data_dir: Path, broker_port: int, controller_port: int,
                      overrides: dict[str, str] | None = None) -> dict[str, str]:
    """The broker's full configuration for a single-node combined-mode cluster."""
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller_port}",
        "controller.listener.names": "CONTROLLER",
        "listeners": f"PLAINTEXT://127.0.0.1:{broker_port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{broker_port},CONTROLLER://127.0.0.1:{controller_port}",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(data_dir / "kraft-logs"),
        **TEST_FRIENDLY_PROPERTIES,
    }
    props.update(overrides or {})
    return props


#: Run in a fresh Python (``-I -S``) between the fork and the broker's JVM: ask Linux to SIGTERM this process when
#: the thread that started it dies (PR_SET_PDEATHSIG, prctl(2)), then exec the JVM, which keeps that setting.
#: Exits 75 without starting the JVM if that thread is already gone (argv[1] is its process's pid).
_DIE_WITH_PARENT = """
import ctypes, os, signal, sys
try:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)
except (OSError, AttributeError):
    pass
if os.getppid() != int(sys.argv[1]):
    sys.exit(75)
os.execvp(sys.argv[2], sys.argv[2:])
"""


def die_with_parent(command: list[str]) -> list[str]:
    """``command`` wrapped so that Linux SIGTERMs it when the thread that started it dies.

    This is what keeps a killed pytest run (or a crashed demo) from leaving an orphan JVM behind.
    Detached brokers (``offsetlake kafka start``) skip it. Linux's "parent" here is the *thread*
    that started the broker (prctl(2)): an attached broker started from a worker thread gets SIGTERM
    when that thread ends, so start it from a thread that lives as long as the broker should
    (tests/background.py keeps its thread alive for this reason).

    Why a launcher and not ``subprocess.Popen(preexec_fn=...)``: a ``preexec_fn`` runs Python code in
    the forked child of a multi-threaded process (the test run has Spark's, librdkafka's and its own
    threads), which Python's documentation calls unsafe ("the child process could deadlock before exec
    is called"); the parent then waits for that child forever, in ``os.read`` of the exec-status pipe
    (python/cpython#120998 shows both processes stuck there); a CI run hung so, starting the session
    broker while another thread was busy. Without ``preexec_fn``
    Python spawns with vfork and runs no Python code in the child; ``start_new_session`` does the
    ``setsid`` in C.
    """
    return [sys.executable, "-I", "-S", "-c", _DIE_WITH_PARENT, str(os.getpid()), *command]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead for our purposes.
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


class EmbeddedBroker:
    """One KRaft broker JVM bound to ``data_dir``.

    ``with EmbeddedBroker(path) as broker:`` starts it and stops it on exit.
    ``attached=False`` lets it outlive this Python process (the CLI's ``start``).
    """

    def __init__(self, data_dir: str | os.PathLike[str], *, heap: str = "512m",
                 overrides: dict[str, str] | None = None, attached: bool = True,
                 start_timeout: float = 90.0) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.heap = heap
        self.overrides = dict(overrides or {})
        self.attached = attached
        self.start_timeout = start_timeout
        self.state: BrokerState | None = None
        self._process: subprocess.Popen[bytes] | None = None

    # -- public API -----------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        if self.state is None:
            raise BrokerError("the broker is not started")
        return self.state.bootstrap_servers

    @property
    def log_file(self) -> Path:
        return self.data_dir / "broker.log"

    @property
    def log_dirs(self) -> Path:
        return self.data_dir / "kraft-logs"

    def start(self, *, ports: tuple[int, int] | None = None) -> EmbeddedBroker:
        """Start the broker; ``ports``: its (broker, controller) ports, else free ones."""
        existing = read_state(self.data_dir)
        if existing is not None and pid_alive(existing.pid):
            raise BrokerError(
                f"a broker is already running from {self.data_dir} (pid {existing.pid}, "
                f"{existing.bootstrap_servers}); stop it first"
            )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        classpath = kafka_classpath()
        broker_port, controller_port = ports or (free_port(), free_port())
        while controller_port == broker_port:
            controller_port = free_port()
        props = server_properties(self.data_dir, broker_port, controller_port, self.overrides)
        props_file = self.data_dir / "server.properties"
        props_file.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        log4j_file = self.data_dir / "log4j2.properties"
        log4j_file.write_text(LOG4J2_PROPERTIES.format(log_file=self.log_file))

        cluster_id = self._format_storage(classpath, props_file)
        command = [
            "java", "-Xms128m", f"-Xmx{self.heap}", "-XX:+UseG1GC", "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={log4j_file}",
            "-cp", classpath, "kafka.Kafka", str(props_file),
        ]
        stdout = open(self.data_dir / "broker.stdout", "ab")
        try:
            self._process = subprocess.Popen(
                die_with_parent(command) if self.attached else command, stdout=stdout,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )
        finally:
            stdout.close()
        self.state = BrokerState(
            pid=self._process.pid,
            bootstrap_servers=f"127.0.0.1:{broker_port}",
            controller_port=controller_port,
            data_dir=str(self.data_dir),
            cluster_id=cluster_id,
            log_file=str(self.log_file),
        )
        try:
            (self.data_dir / STATE_FILE).write_text(json.dumps(asdict(self.state), indent=2))
            self._wait_until_ready()
        except BaseException:
            # Failed start or Ctrl-C while waiting: never leave the JVM behind.
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM (Kafka shuts down cleanly), then SIGKILL after ``timeout`` seconds."""
        state = self.state or read_state(self.data_dir)
        if state is None:
            return
        stop_pid(state.pid, timeout, self._process)
        with contextlib.suppress(FileNotFoundError):
            (self.data_dir / STATE_FILE).unlink()
        self.state = None
        self._process = None

    def restart(self, down_seconds: float = 0.0) -> EmbeddedBroker:
        """Stop the broker (SIGTERM: a clean shutdown), leave it down ``down_seconds``, then start it again on the
        same ports and log dirs: to its clients, the same broker come back, its topics and offsets kept."""
        if self.state is None:
            raise BrokerError("the broker is not started")
        ports = (int(self.state.bootstrap_servers.rsplit(":", 1)[1]), self.state.controller_port)
        self.stop()
        time.sleep(down_seconds)
        return self.start(ports=ports)

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- internals ------------------------------------------------------------------
    def _format_storage(self, classpath: str, props_file: Path) -> str:
        meta = self.log_dirs / "meta.properties"
        if meta.exists():
            # Restarting on existing data: keep its cluster id, skip formatting.
            for line in meta.read_text().splitlines():
                if line.startswith("cluster.id="):
                    return line.split("=", 1)[1].strip()
        cluster_id = new_cluster_id()
        result = subprocess.run(
            ["java", "-Xmx256m", "-cp", classpath, "kafka.tools.StorageTool", "format",
             "--standalone", "-t", cluster_id, "-c", str(props_file)],
            capture_output=True, text=True, timeout=120,
        )
        if result.returncode != 0:
            detail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1:] or ["no output"]
            raise BrokerError(f"formatting KRaft storage in {self.log_dirs} failed: {detail[0]}")
        return cluster_id

    def _wait_until_ready(self) -> None:
        from confluent_kafka.admin import AdminClient

        assert self.state is not None and self._process is not None
        admin = AdminClient({"bootstrap.servers": self.state.bootstrap_servers, "log_level": 0,
                             "logger": _silent_logger()})
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise BrokerError(
                    f"the broker exited with code {self._process.returncode} during start-up: "
                    f"{failure_reason(self.log_file)} (full log: {self.log_file})"
                )
            try:
                metadata = admin.list_topics(timeout=1)
                if metadata.brokers:
                    return
            except Exception:  # KafkaException while the broker is coming up
                time.sleep(0.25)
        raise BrokerError(
            f"the broker did not answer an admin request within {self.start_timeout:.0f}s; "
            f"see {self.log_file}:\n{tail(self.log_file, 15)}"
        )


def stop_pid(pid: int, timeout: float, process: subprocess.Popen[bytes] | None = None) -> None:
    if not pid_alive(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            return
        if process is None and not pid_alive(pid):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    if process is not None:
        process.wait(timeout=10)
    else:
        for _ in range(100):
            if not pid_alive(pid):
                break
            time.sleep(0.1)


def read_state(data_dir: str | os.PathLike[str]) -> BrokerState | None:
    path = Path(data_dir) / STATE_FILE
    try:
        return BrokerState(**json.loads(path.read_text()))
    except (FileNotFoundError, ValueError, TypeError):
        return None


def failure_reason(log_file: Path) -> str:
    """The first ERROR line of a broker log and the exception message under it."""
    try:
        lines = log_file.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return "no log was written"
    for index, line in enumerate(lines):
        if "] ERROR " in line or "] FATAL " in line:
            reason = line.split("] ", 1)[-1].strip()
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if "Exception" in following or "Error" in following:
                reason += f": {following.strip()}"
            return reason
    return "no ERROR line in the log"


def tail(path: Path, lines: int) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return "(no log file)"


def _silent_logger():  # type: ignore[no-untyped-def]
    import logging

    logger = logging.getLogger("offsetlake.broker.admin")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    return logger
