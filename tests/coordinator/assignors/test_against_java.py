"""The Python assignors give exactly the Java assignors' results, list order included.

Random inputs (members, static ids, subscriptions, partition counts, owned partitions with
generations, conflicting claims, several rebalances led by one assignor instance) are fed to both
Kafka 4.2's assignors (``java/AssignorOracle.java``) and the ports; lists must be identical since the
order is what ``ConsumerProtocol.serializeAssignment`` writes.
"""

from __future__ import annotations

import pytest

from tests.coordinator import oracle

ALL = ("range", "roundrobin", "sticky", "cooperative-sticky")


@pytest.mark.parametrize(
    ("seed", "count", "max_members", "max_partitions"),
    [(1, 500, 7, 9), (2, 250, 20, 40), (3, 120, 30, 64)],
    ids=["small", "medium", "large"],
)
def test_python_assignments_equal_kafkas_java_assignors(
    assignor_oracle: list[str], seed: int, count: int, max_members: int, max_partitions: int
) -> None:
    cases = oracle.random_cases(seed, count, ALL, max_members, max_partitions)
    java = oracle.run_java(assignor_oracle, cases)
    python = oracle.run_python(cases)
    differing = [c for c in cases if java.get(c.case_id) != python.get(c.case_id)]
    if differing:
        first = differing[0]
        pytest.fail(
            f"{len(differing)}/{len(cases)} cases differ; first {first.case_id} "
            f"({first.assignor}, topics {first.topics}):\n"
            f"java:   {java.get(first.case_id)}\npython: {python.get(first.case_id)}"
        )
    assert {c.assignor for c in cases} == set(ALL)
