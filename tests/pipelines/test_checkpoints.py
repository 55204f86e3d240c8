"""Queries run to what is available (pipelines/checkpoints.py): what each run leaves behind in this process."""

from __future__ import annotations

import threading
import time
from pathlib import Path


def test_queries_run_one_after_the_other_leave_no_thread_behind(spark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Each query's batches reach Python through a py4j connection of the query's own JVM thread, served by a
    Python thread; ``offsetlake run`` starts a few such queries per batch, so any thread a query leaves behind
    grows with the running time."""
    from pipelines.checkpoints import run_to_available

    source = str(tmp_path / "source")
    seen: list[int] = []

    def run_once(n: int) -> None:
        spark.range(n, n + 1).write.format("delta").mode("append").save(source)
        stream = spark.readStream.format("delta").load(source)
        run_to_available(stream, str(tmp_path / "checkpoint"), "threads-test",
                         lambda batch, batch_id: seen.extend(r["id"] for r in batch.collect()))

    for n in range(2):
        run_once(n)
    after_first = threading.active_count()
    for n in range(2, 10):
        run_once(n)
    assert sorted(seen) == list(range(10))  # every query did read its new row through its own batch
    deadline = time.monotonic() + 10  # a connection's thread ends once it reads that its socket was shut down
    while threading.active_count() > after_first + 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    # Eight more queries, not eight more threads.
    assert threading.active_count() <= after_first + 1, [t.name for t in threading.enumerate()]
