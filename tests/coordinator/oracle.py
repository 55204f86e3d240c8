"""Kafka's own Java code as the oracle for the Python ports.

The programs in ``java/`` beside this file are compiled at test time into a pytest temporary
directory against the jars that the project's setup downloads to ``.jvm/kafka-libs/``
(kafka-clients 4.2.x and its neighbours); nothing compiled is written into the repository.
``AssignorOracle`` runs the four built-in assignors the way the consumer leader does;
``HashOrderOracle`` prints ``HashMap``/``HashSet``/``TimelineHashMap`` iteration orders;
``ProtocolOracle`` prints the consumer-protocol and sticky user-data bytes the Java client sends;
``RecordOracle`` reads records with Kafka's ``GroupCoordinatorRecordSerde`` and writes them back.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote

from coordinator.assignors import new_assignor
from coordinator.assignors.sticky import encode_sticky_user_data
from coordinator.consumer_protocol import Subscription, subscription
from coordinator.java_collections import JavaHashMap
from coordinator.topic_partition import TopicPartition
from jvm.artifacts import artifact_set

#: The broker's artifact set (``conf/jvm/kafka-broker.pom.xml``) holds kafka-clients 4.2.x and the
#: coordinator jars; OFFSETLAKE_KAFKA_LIBS points elsewhere (e.g. a directory of hand-picked jars).
KAFKA_LIBS = Path(os.environ.get("OFFSETLAKE_KAFKA_LIBS", artifact_set("kafka").libs_dir))
JAVA_SOURCES = Path(__file__).with_name("java")

#: Jars each oracle compiles against, by file-name prefix.
REQUIRED_JARS = {
    "AssignorOracle": ("kafka-clients-4.2",),
    "ProtocolOracle": ("kafka-clients-4.2",),
    "HashOrderOracle": ("kafka-clients-4.2", "kafka-server-common-4.2"),
    "RecordOracle": (
        "kafka-clients-4.2",
        "kafka-server-common-4.2",
        "kafka-coordinator-common-4.2",
        "kafka-group-coordinator-4.2",
    ),
}


def kafka_classpath() -> list[Path]:
    return sorted(KAFKA_LIBS.glob("*.jar")) if KAFKA_LIBS.is_dir() else []


def missing_reason(main_class: str) -> str | None:
    """Why ``main_class`` cannot run here, or None."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        return "javac/java not on PATH (a JDK 17 is required)"
    names = [j.name for j in kafka_classpath()]
    for prefix in REQUIRED_JARS[main_class]:
        if not any(n.startswith(prefix) for n in names):
            return f"no {prefix}.x jar in {KAFKA_LIBS} (fetched by `make setup` / `offsetlake jvm resolve`)"
    return None


def compile_oracle(out_dir: Path, main_class: str) -> list[str]:
    """Compile ``java/<main_class>.java`` into ``out_dir``; returns the command that runs it."""
    classpath = os.pathsep.join(str(j) for j in kafka_classpath())
    source = JAVA_SOURCES / f"{main_class}.java"
    subprocess.run(
        ["javac", "-nowarn", "-d", str(out_dir), "-cp", classpath, str(source)],
        check=True,
        capture_output=True,
        text=True,
    )
    return ["java", "-cp", os.pathsep.join([str(out_dir), classpath]), main_class]


def run_oracle(command: list[str], text: str) -> str:
    return subprocess.run(command, input=text, capture_output=True, text=True, check=True, timeout=300).stdout


@dataclass
class Member:
    member_id: str
    topics: list[str]
    instance_id: str | None = None
    generation: int = -1
    user_data: bytes | None = None
    owned: list[TopicPartition] = field(default_factory=list)

    def subscription(self) -> Subscription:
        return subscription(self.topics, self.user_data, self.owned, self.generation).with_instance_id(self.instance_id)


@dataclass
class Case:
    case_id: str
    instance: str  # one assignor instance per key, reused across cases (state carries over)
    assignor: str
    topics: dict[str, int]
    members: list[Member]  # JoinGroup-response order


def _tok(value: str | None) -> str:
    return "-" if value is None else quote(value, safe="")


def render(cases: list[Case]) -> str:
    lines = []
    for c in cases:
        lines.append(f"CASE {c.case_id} {_tok(c.instance)} {c.assignor}")
        for topic, count in c.topics.items():
            lines.append(f"TOPIC {_tok(topic)} {count}")
        for m in c.members:
            owned = ",".join(f"{_tok(tp.topic)}:{tp.partition}" for tp in m.owned) or "-"
            topics = ",".join(_tok(t) for t in m.topics) or "-"
            user = m.user_data.hex() if m.user_data is not None else "-"
            lines.append(f"MEMBER {_tok(m.member_id)} {_tok(m.instance_id)} {m.generation} {user} {topics} {owned}")
        lines.append("END")
    return "\n".join(lines) + "\n"


def run_java(command: list[str], cases: list[Case]) -> dict[str, dict[str, list[TopicPartition]] | str]:
    """Kafka's assignors on the cases, via ``AssignorOracle``."""
    results: dict[str, dict[str, list[TopicPartition]] | str] = {}
    for line in run_oracle(command, render(cases)).splitlines():
        kind, case_id, *rest = line.split(" ", 3)
        if kind == "RESULT":
            member, parts = rest[0], rest[1]
            assignment = (
                []
                if parts == "-"
                else [TopicPartition(unquote(p.rsplit(":", 1)[0]), int(p.rsplit(":", 1)[1])) for p in parts.split(",")]
            )
            results.setdefault(case_id, {})[unquote(member)] = assignment
        elif kind == "ERROR":
            results[case_id] = "error: " + " ".join(rest)
        elif kind == "DONE":
            results.setdefault(case_id, {})
    return results


def run_python(cases: list[Case]) -> dict[str, dict[str, list[TopicPartition]] | str]:
    instances: dict[str, object] = {}
    results: dict[str, dict[str, list[TopicPartition]] | str] = {}
    for c in cases:
        assignor = instances.setdefault(f"{c.instance}/{c.assignor}", new_assignor(c.assignor))
        subs: JavaHashMap[str, Subscription] = JavaHashMap()
        for m in c.members:
            subs[m.member_id] = m.subscription()
        try:
            out = assignor.assign(c.topics, subs)
            results[c.case_id] = {member: list(out[member]) for member in out}
        except Exception as exc:  # the Java side reports its exceptions the same way
            results[c.case_id] = f"error: {type(exc).__name__}"
    return results


# -- random inputs -------------------------------------------------------------------------


def _member_id(rng: random.Random, client: str) -> str:
    return f"{client}-{uuid.UUID(int=rng.getrandbits(128), version=4)}"


def random_cases(
    seed: int, count: int, assignors: tuple[str, ...], max_members: int = 7, max_partitions: int = 9
) -> list[Case]:
    """Sequences of rebalances led by one assignor instance: each round feeds the previous round's
    result back as owned partitions (cooperative-sticky: subscription fields; sticky: user data),
    then churns members, subscriptions and partition counts. A few rounds add conflicting claims
    (two members owning one partition, in the same or in different generations)."""
    rng = random.Random(seed)
    cases: list[Case] = []
    sequence = 0
    while len(cases) < count:
        assignor = rng.choice(assignors)
        instance = f"seq{sequence}"
        sequence += 1
        scratch = new_assignor(assignor)  # computes "previous" results to build the next round
        topic_names = rng.sample(["orders", "payments", "t0", "t1", "clicks", "a", "b.c", "logs-x"], rng.randint(1, 4))
        topics = {t: rng.randint(1, max_partitions) for t in topic_names}
        same = rng.random() < 0.5

        def new_member(index: int, topic_names: list[str] = topic_names, same: bool = same) -> Member:
            subs = list(topic_names) if same else rng.sample(topic_names, rng.randint(1, len(topic_names)))
            static = rng.random() < 0.3
            return Member(_member_id(rng, f"consumer-{index}"), subs, f"instance-{index}" if static else None)

        members = [new_member(i) for i in range(rng.randint(1, max_members))]
        previous: dict[str, list[TopicPartition]] = {}
        generation = 0
        for _round in range(rng.randint(1, 4)):
            for m in members:
                owned = list(previous.get(m.member_id, []))
                m.owned, m.generation, m.user_data = [], -1, None
                if assignor == "cooperative-sticky" and m.member_id in previous:
                    m.owned, m.generation = owned, generation
                elif assignor == "sticky" and m.member_id in previous:
                    m.user_data = encode_sticky_user_data(owned, generation)
            if assignor in ("sticky", "cooperative-sticky") and len(members) > 1 and rng.random() < 0.15:
                a, b = rng.sample(members, 2)
                claimed = TopicPartition(*rng.choice([(t, p) for t, n in topics.items() for p in range(n)]))
                if assignor == "cooperative-sticky":
                    b.owned = b.owned + [claimed]
                    b.generation = rng.choice([a.generation, a.generation + 1, max(-1, a.generation - 1)])
                else:
                    b.user_data = encode_sticky_user_data([claimed], rng.choice([generation, generation - 1]))
            case = Case(f"c{len(cases)}", instance, assignor, dict(topics), [Member(**vars(m)) for m in members])
            cases.append(case)
            subs: JavaHashMap[str, Subscription] = JavaHashMap()
            for m in case.members:
                subs[m.member_id] = m.subscription()
            try:
                result = scratch.assign(case.topics, subs)
                previous = {member: list(result[member]) for member in result}
            except Exception:
                previous = {}
            generation += 1
            if rng.random() < 0.4 and len(members) > 1:
                members.pop(rng.randrange(len(members)))
            if rng.random() < 0.5:
                members.insert(rng.randrange(len(members) + 1), new_member(len(members) + rng.randint(10, 99)))
            if rng.random() < 0.2:
                topics[rng.choice(topic_names)] += rng.randint(1, 3)
            if rng.random() < 0.3:
                rng.shuffle(members)
            if len(cases) >= count:
                break
    return cases
