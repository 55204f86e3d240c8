"""Real share-group (KIP-932) and streams-group (KIP-1071) members, and the Admin client's view of their groups.

librdkafka has no share consumer and no Kafka Streams, so the members are Kafka's own Java clients:
``clients/GroupClients.java`` beside this file (a ``KafkaShareConsumer`` that polls and acknowledges; a
Kafka Streams application with ``group.protocol=streams``; an Admin client answering describe/config/delete
commands as JSON lines), compiled at run time with ``javac`` against the ``streams`` artifact set
(``conf/jvm/kafka-streams.pom.xml``) into a directory the caller owns. Each member is a JVM of its own, so a
clean stop (``close`` on its stdin: the client leaves the group) and a crash (SIGKILL: the broker fences the
member when its session times out) are what a real application does.

>>> clients = GroupClients.compile(work_dir, broker.bootstrap_servers)   # doctest: +SKIP
>>> with clients.admin() as admin, clients.share_member("g", "a", "t") as member:   # doctest: +SKIP
...     admin.wait_for_share_group("g", lambda d: len(d["members"]) == 1)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from broker.embedded import die_with_parent
from jvm.artifacts import artifact_set

SOURCE = Path(__file__).with_name("clients") / "GroupClients.java"
MAIN_CLASS = "GroupClients"

#: Every client JVM logs to a file of its own (``-Doffsetlake.log``); without a configuration log4j2 would
#: print its errors to stdout, which carries the program's answers.
LOG4J2_PROPERTIES = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:offsetlake.log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
"""

Description = dict[str, Any]


class GroupClientError(RuntimeError):
    """A client could not be compiled, started or stopped, or a group never reached the awaited state."""


@dataclass(frozen=True)
class GroupClients:
    """The compiled program and where its members keep logs and state."""

    classes_dir: Path
    work_dir: Path
    bootstrap_servers: str

    @classmethod
    def compile(cls, work_dir: str | os.PathLike[str], bootstrap_servers: str) -> GroupClients:
        """``javac`` GroupClients.java into ``work_dir/classes`` (about 3 s)."""
        work = Path(work_dir).resolve()
        classes = work / "classes"
        classes.mkdir(parents=True, exist_ok=True)
        (work / "log4j2.properties").write_text(LOG4J2_PROPERTIES)
        result = subprocess.run(["javac", "-nowarn", "-d", str(classes), "-cp", _classpath(), str(SOURCE)],
                                capture_output=True, text=True)
        if result.returncode != 0:
            first = (result.stderr.strip().splitlines() or ["no output"])[0]
            raise GroupClientError(f"javac could not compile {SOURCE.name}: {first}")
        return cls(classes, work, bootstrap_servers)

    def command(self, log_name: str, *args: str) -> list[str]:
        log = self.work_dir / "logs" / f"{log_name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        return ["java", "-Xms32m", "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                f"-Dlog4j2.configurationFile={self.work_dir / 'log4j2.properties'}", f"-Doffsetlake.log={log}",
                "-cp", os.pathsep.join([str(self.classes_dir), _classpath()]), MAIN_CLASS, *args]

    def share_member(self, group_id: str, client_id: str, topic: str, *, rack: str | None = None) -> Member:
        """A KafkaShareConsumer of ``group_id`` subscribed to ``topic``, started (joins on its first poll);
        ``rack`` is its ``client.rack`` (the member's RackId)."""
        name = f"share-{group_id}-{client_id}"
        return Member(name, self.command(name, "share", self.bootstrap_servers, group_id, client_id, topic,
                                         rack or "")).start()

    def streams_member(self, application_id: str, client_id: str, input_topic: str, output_topic: str) -> Member:
        """A Kafka Streams instance of ``application_id`` (the streams group), started, with its own state dir."""
        state_dir = self.work_dir / "state" / f"{application_id}-{client_id}"
        state_dir.mkdir(parents=True, exist_ok=True)
        name = f"streams-{application_id}-{client_id}"
        return Member(name, self.command(name, "streams", self.bootstrap_servers, application_id, client_id,
                                         input_topic, output_topic, str(state_dir))).start()

    def admin(self) -> GroupAdmin:
        return GroupAdmin(self.command("admin", "admin", self.bootstrap_servers)).start()


def _classpath() -> str:
    return os.pathsep.join(str(jar) for jar in artifact_set("streams").jars())


@dataclass
class Member:
    """One member's JVM. ``stop()`` closes it cleanly (it leaves the group); ``kill()`` is kill -9."""

    name: str
    command: list[str]
    lines: list[str] = field(default_factory=list)
    _process: subprocess.Popen[str] | None = None
    _ready: threading.Event = field(default_factory=threading.Event)

    def start(self, timeout: float = 90.0) -> Member:
        self._process = subprocess.Popen(die_with_parent(self.command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
        threading.Thread(target=self._read, name=f"{self.name}-stdout", daemon=True).start()
        if not self._ready.wait(timeout) or "ready" not in self.lines:
            try:
                self._process.wait(5)  # exited (its stdout ended): reap it for the exit code
            except subprocess.TimeoutExpired:
                self.kill()
            said = next((line for line in self.lines if "Exception" in line or "Error" in line),
                        self.lines[-1] if self.lines else "no output")
            raise GroupClientError(f"{self.name} did not start within {timeout:.0f}s (exit code "
                                   f"{self._process.poll()}): {said}")
        return self

    def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        for line in self._process.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.startswith("ready"):
                self._ready.set()
        self._ready.set()  # exited before "ready": start() reports it

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stop(self, timeout: float = 60.0) -> int:
        """Ask the client to close (a share consumer's leave heartbeat, Streams' LEAVE_GROUP); its exit code."""
        if not self.running:
            return self._process.returncode if self._process else 0
        assert self._process is not None and self._process.stdin is not None
        try:
            self._process.stdin.write("close\n")
            self._process.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise GroupClientError(f"{self.name} did not close within {timeout:.0f}s; killed") from None

    def kill(self) -> None:
        """SIGKILL: no leave request reaches the broker, which fences the member after its session timeout."""
        if self.running:
            assert self._process is not None
            os.kill(self._process.pid, signal.SIGKILL)
            self._process.wait(30)

    def __enter__(self) -> Member:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.running:
            try:
                self.stop()
            except GroupClientError:
                pass


class GroupAdmin:
    """Kafka's Java Admin client in a JVM of its own, one JSON answer per command.

    ``describeShareGroups`` / ``describeStreamsGroups`` are what ``kafka-share-groups.sh --describe`` and
    ``kafka-streams-groups.sh --describe`` print from; a group that does not exist answers
    ``{"state": "DEAD", "error": ...}``.
    """

    def __init__(self, command: list[str]) -> None:
        self.command = command
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    def start(self) -> GroupAdmin:
        self._process = subprocess.Popen(die_with_parent(self.command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        return self

    def ask(self, *words: str) -> Description:
        assert self._process is not None and self._process.stdin is not None and self._process.stdout is not None
        with self._lock:
            self._process.stdin.write(" ".join(words) + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        if not line:
            raise GroupClientError(f"the admin client exited (code {self._process.poll()}) on {' '.join(words)!r}")
        return json.loads(line)  # type: ignore[no-any-return]

    def describe_share_group(self, group_id: str) -> Description:
        return self.ask("describe-share", group_id)

    def describe_streams_group(self, group_id: str) -> Description:
        return self.ask("describe-streams", group_id)

    def set_group_config(self, group_id: str, **configs: str | int) -> None:
        """Dynamic group configs (GroupConfig.java), e.g. ``share_auto_offset_reset="earliest"``: underscores
        become dots."""
        answer = self.ask("set-config", group_id, *(f"{k.replace('_', '.')}={v}" for k, v in configs.items()))
        if not answer.get("ok"):
            raise GroupClientError(f"setting {configs} on group {group_id}: {answer.get('error')}")

    def delete_share_group(self, group_id: str) -> Description:
        return self.ask("delete-share", group_id)

    def delete_streams_group(self, group_id: str) -> Description:
        return self.ask("delete-streams", group_id)

    def wait_for_share_group(self, group_id: str, condition: Callable[[Description], bool],
                             timeout: float = 60.0) -> Description:
        return self._wait(self.describe_share_group, group_id, condition, timeout)

    def wait_for_streams_group(self, group_id: str, condition: Callable[[Description], bool],
                               timeout: float = 90.0) -> Description:
        return self._wait(self.describe_streams_group, group_id, condition, timeout)

    @staticmethod
    def _wait(describe: Callable[[str], Description], group_id: str, condition: Callable[[Description], bool],
              timeout: float) -> Description:
        deadline = time.monotonic() + timeout
        while True:
            description = describe(group_id)
            if condition(description):
                return description
            if time.monotonic() > deadline:
                raise GroupClientError(f"group {group_id} did not reach the awaited state within {timeout:.0f}s; "
                                       f"last described as {json.dumps(description)}")
            time.sleep(0.3)

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            try:
                self._process.wait(30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(10)

    def __enter__(self) -> GroupAdmin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def settled_share_group(members: int, partitions: set[tuple[str, int]]) -> Callable[[Description], bool]:
    """The share group has ``members`` members, each at the group's epoch (its assignment reconciled), and
    between them they are assigned ``partitions`` (share groups may assign one partition to several)."""

    def check(d: Description) -> bool:
        assigned = {(a["topic"], a["partition"]) for m in d.get("members", []) for a in m["assignment"]}
        return (len(d.get("members", [])) == members and d.get("state") == "STABLE"
                and all(m["member_epoch"] == d["group_epoch"] for m in d["members"])
                and (members == 0 or assigned == partitions))

    return check


def settled_streams_group(members: int) -> Callable[[Description], bool]:
    """The streams group has ``members`` members, each at the target assignment epoch with its current
    assignment equal to its target (no task pending revocation), and the group is STABLE (or EMPTY)."""

    def check(d: Description) -> bool:
        listed = d.get("members", [])
        if members == 0:
            return d.get("state") == "EMPTY" and not listed
        return (len(listed) == members and d.get("state") == "STABLE"
                and all(m["member_epoch"] == d["target_assignment_epoch"]
                        and m["assignment"] == m["target_assignment"] for m in listed))

    return check
