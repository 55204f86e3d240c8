"""The warehouse's streaming queries that are run to what is available, each time they are needed.

Silver's query over bronze (``pipelines.silver.derive_silver``) and gold's over silver's change data feeds
(``pipelines.gold.refresh``) are not left running: the ingest's micro-batch (or a command) runs each with
``Trigger.AvailableNow`` until it has read everything its sources hold, then it ends. On two cores, queries
running side by side fought for the CPU (``pipelines/main_job.py`` has the measurement); one after the other,
each layer is current when the next one starts. Their checkpoints are the layers' bookkeeping.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines.storage import Storage, join

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def topic_checkpoint(settings: Settings, topic: str, query: str) -> str:
    """``<warehouse>/_checkpoints/<cluster>/<topic>/<query>``: the checkpoint of one of a source topic's queries
    (``ingest``: Kafka -> bronze; ``silver``: bronze -> silver)."""
    return join(settings.warehouse_uri, "_checkpoints", settings.cluster_name, topic.replace("/", "_"), query)


def planned_any_batch(spark: SparkSession, checkpoint: str) -> bool:
    """Whether the query of ``checkpoint`` ever planned a batch (then its sources' options no longer count).

    Spark writes a batch's offsets (``<checkpoint>/offsets/<id>``) before running it; a checkpoint without any
    never read its sources (a query killed between its start and its first plan, or none at all). Only the
    presence of that directory's entries is looked at, never their content, which is Spark's to read.
    """
    return bool(Storage(spark).list(join(checkpoint, "offsets")))


def run_to_available(stream: DataFrame, checkpoint: str, name: str,
                     each_batch: Callable[[DataFrame, int], None]) -> None:
    """Run ``stream`` with ``each_batch`` as its ``foreachBatch`` until it has processed what its sources hold.

    An exception of ``each_batch`` is raised here as it was raised there (Spark wraps it in a
    ``StreamingQueryException`` whose message is the Python traceback), so that callers see their own errors.
    The query is named ``<name>-<8 hex digits of the checkpoint's path>``: Spark refuses a second active query
    of the same name in a session, which two warehouses' refreshes side by side (the test suite's background
    builds share one session) must not hit, while two runs of the same checkpoint at once must.
    """
    import hashlib

    name = f"{name}-{hashlib.sha1(checkpoint.encode()).hexdigest()[:8]}"
    failure: list[BaseException] = []

    def batch(frame: DataFrame, batch_id: int) -> None:
        try:
            each_batch(frame, batch_id)
        except BaseException as exc:  # noqa: BLE001 - raised below with its own message, not Spark's wrapping
            failure.append(exc)
            raise

    query = (stream.writeStream.foreachBatch(batch).option("checkpointLocation", checkpoint).queryName(name)
             .trigger(availableNow=True).start())
    try:
        query.awaitTermination()
    except Exception:
        if failure:
            raise failure[0] from None
        raise
