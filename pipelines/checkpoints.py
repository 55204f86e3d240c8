"""The warehouse's streaming queries that are run to what is available, each time they are needed.

Silver's query over bronze (``pipelines.silver.derive_silver``) and gold's over silver's change data feeds
(``pipelines.gold.refresh``) are not left running: the ingest's micro-batch (or a command) runs each with
``Trigger.AvailableNow`` until it has read everything its sources hold, then it ends. On two cores, queries
running side by side fought for the CPU (``pipelines/main_job.py`` has the measurement); one after the other,
each layer is current when the next one starts. Their checkpoints are the layers' bookkeeping.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

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
    served: list[Any] = []  # the py4j connections the query's batches came through (callback_connection)

    def batch(frame: DataFrame, batch_id: int) -> None:
        connection = callback_connection(frame.sparkSession)
        if connection is not None and all(connection is not seen for seen in served):
            served.append(connection)
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
    finally:
        if not query.isActive:  # its thread is gone: nothing will come through its connection again
            for connection in served:
                end_connection(connection)


def callback_connection(spark: SparkSession) -> Any:
    """The py4j connection through which the JVM thread calling this Python code (a ``foreachBatch`` call) reached
    it, or None outside such a call (or with py4j's older gateway, which has no per-thread connections).

    Why it matters: in PySpark's pinned-thread mode (py4j's ClientServer) each JVM thread that calls into Python
    opens a connection of its own, served by a Python thread (and a JVM thread reading Python's calls), and the
    JVM keeps it in its pool for good (``py4j.PythonClient``: "we don't need a cleaner"). A streaming query's
    batches run on its own JVM thread, which ends with the query, so every query started and run to what is
    available left one connection and two threads behind: ``offsetlake run`` starts a few per batch.
    Closing the connection once its query has ended ends both threads (the JVM's reader sees the socket close
    and drops the connection from its pool).
    """
    client = spark.sparkContext._gateway._gateway_client  # type: ignore[union-attr]
    get_thread_connection = getattr(client, "get_thread_connection", None)
    return get_thread_connection() if get_thread_connection is not None else None


def end_connection(connection: Any) -> None:
    """End a py4j connection that the JVM no longer uses: its socket shut down, its serving thread (blocked reading
    it) reads the end and closes the connection itself. Not ``close()`` from here: closing the stream that thread
    is reading waits for the lock the reading holds."""
    import socket

    if connection.socket is not None:
        with contextlib.suppress(OSError):
            connection.socket.shutdown(socket.SHUT_RDWR)
