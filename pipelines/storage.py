"""The warehouse's files through Hadoop's FileSystem API, so that any URI Spark can write works.

Delta tables are read and written by Spark and Delta, which take URIs; what offsetlake does to the
warehouse's files beside them (list a table's data files, read a streaming checkpoint's offset log,
read a Delta commit, empty the demo's warehouse) goes through here, never ``pathlib``: Hadoop's
``FileSystem`` for the URI's scheme (``file``, ``hdfs``, ``s3a``, ``abfss``, ``gs``), configured by the
session's Hadoop configuration (``spark.hadoop.*``, ``storage.hadoop`` in the settings). Where there is
no Spark session (the dashboard, the SQL endpoint's catalog, existence checks), delta-rs reads the
tables with ``storage.delta_rs`` (``pipelines.delta_tables.table_exists``).

Paths are joined as text (``join``): a URI is not a ``pathlib.Path`` (``Path("s3a://b/w")`` collapses
the double slash).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def join(base: str, *parts: str) -> str:
    """``base/part/...`` for a URI or a local path; empty parts are skipped."""
    out = base.rstrip("/")
    for part in parts:
        part = part.strip("/")
        if part:
            out = f"{out}/{part}"
    return out


@dataclass(frozen=True)
class Entry:
    """One entry of a directory listing."""

    name: str
    uri: str
    is_dir: bool


class Storage:
    """Hadoop's file systems, as the Spark session's JVM sees them (its Hadoop configuration and jars)."""

    def __init__(self, spark: SparkSession) -> None:
        self._jvm = spark.sparkContext._jvm
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()

    def _fs(self, uri: str) -> tuple[Any, Any]:
        path = self._jvm.org.apache.hadoop.fs.Path(uri)
        return path.getFileSystem(self._conf), path

    def exists(self, uri: str) -> bool:
        fs, path = self._fs(uri)
        return bool(fs.exists(path))

    def is_dir(self, uri: str) -> bool:
        fs, path = self._fs(uri)
        return bool(fs.exists(path) and fs.getFileStatus(path).isDirectory())

    def list(self, uri: str) -> list[Entry]:
        """The entries of directory ``uri``, by name; [] when it does not exist."""
        fs, path = self._fs(uri)
        if not fs.exists(path):
            return []
        statuses = fs.listStatus(path)
        entries = [Entry(s.getPath().getName(), join(uri, s.getPath().getName()), bool(s.isDirectory()))
                   for s in statuses]
        return sorted(entries, key=lambda entry: entry.name)

    def read_bytes(self, uri: str) -> bytes | None:
        """The whole file ``uri``; None when it does not exist."""
        fs, path = self._fs(uri)
        if not fs.exists(path):
            return None
        stream = fs.open(path)
        try:
            return bytes(self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()

    def read_text(self, uri: str) -> str | None:
        data = self.read_bytes(uri)
        return None if data is None else data.decode("utf-8", errors="replace")

    def delete(self, uri: str) -> bool:
        """Delete ``uri`` and everything under it; False when there was nothing."""
        fs, path = self._fs(uri)
        return bool(fs.delete(path, True))

    def mkdirs(self, uri: str) -> None:
        fs, path = self._fs(uri)
        fs.mkdirs(path)
