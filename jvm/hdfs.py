"""A single-node HDFS (one NameNode, one DataNode) on 127.0.0.1, from Maven Central's Hadoop jars.

The tests put the warehouse on a real distributed file system, started by the project's own code like
the embedded broker (broker/embedded.py). This is Hadoop's own start-up, minus
its shell scripts: ``NameNode -format`` in a JVM of its own, then the ``NameNode`` and ``DataNode``
daemons (``org.apache.hadoop.hdfs.server.*``), each a JVM configured by a ``core-site.xml`` and
``hdfs-site.xml`` written here. The jars are the ``hdfs`` artifact set (conf/jvm/hdfs.pom.xml): the
server side of the Hadoop version whose client pyspark ships (3.4.1), so Spark talks to it through its
own ``hadoop-client-runtime``, and delta-rs through its ``hdfs-native`` object store.

Everything lives in one directory::

    <data_dir>/conf/        core-site.xml, hdfs-site.xml, log4j.properties, webapps/ (see below)
    <data_dir>/name/ data/  the NameNode's image and the DataNode's blocks
    <data_dir>/namenode.log, datanode.log

Ready means the NameNode has left safe mode and counts one live DataNode (``dfsadmin -report``); a
write before the DataNode registered fails with "could only be written to 0 of the 1 minReplication
nodes". Every port but the NameNode's RPC port is chosen by the OS (``:0``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from broker.embedded import die_with_parent, free_port, stop_pid, tail

NAMENODE_CLASS = "org.apache.hadoop.hdfs.server.namenode.NameNode"
DATANODE_CLASS = "org.apache.hadoop.hdfs.server.datanode.DataNode"
DFSADMIN_CLASS = "org.apache.hadoop.hdfs.tools.DFSAdmin"

LOG4J_PROPERTIES = """\
log4j.rootLogger=INFO, console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{HH:mm:ss} %p %c{1}: %m%n
"""


class HdfsError(RuntimeError):
    """HDFS could not be started; the message says why (and where its logs are)."""


def _site_xml(properties: dict[str, str]) -> str:
    body = "".join(f"  <property><name>{k}</name><value>{v}</value></property>\n" for k, v in properties.items())
    return f"<?xml version=\"1.0\"?>\n<configuration>\n{body}</configuration>\n"


def hdfs_classpath(conf_dir: Path) -> str:
    from jvm.artifacts import artifact_set

    return os.pathsep.join([str(conf_dir), *(str(jar) for jar in artifact_set("hdfs").jars())])


@dataclass
class EmbeddedHdfs:
    """A NameNode and a DataNode JVM bound to ``data_dir``; ``uri`` is ``hdfs://127.0.0.1:<port>``."""

    data_dir: Path
    heap: str = "384m"
    port: int = 0
    _processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def uri(self) -> str:
        return f"hdfs://127.0.0.1:{self.port}"

    @property
    def conf_dir(self) -> Path:
        return self.data_dir / "conf"

    def start(self, timeout: float = 120.0) -> EmbeddedHdfs:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        self._write_conf()
        classpath = hdfs_classpath(self.conf_dir)
        formatted = subprocess.run(self._java(classpath, NAMENODE_CLASS, "-format", "-force", "-nonInteractive"),
                                   capture_output=True, text=True, timeout=timeout)
        if formatted.returncode != 0:
            raise HdfsError(f"HDFS: NameNode -format failed: {formatted.stdout[-2000:]}{formatted.stderr[-2000:]}")
        try:
            for name, main in (("namenode", NAMENODE_CLASS), ("datanode", DATANODE_CLASS)):
                with open(self.data_dir / f"{name}.log", "wb") as log:
                    self._processes.append(subprocess.Popen(
                        die_with_parent(self._java(classpath, main)), stdout=log, stderr=subprocess.STDOUT,
                        start_new_session=True))
            self._wait_until_ready(classpath, timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 20.0) -> None:
        for process in reversed(self._processes):
            with contextlib.suppress(Exception):
                stop_pid(process.pid, timeout, process)
        self._processes.clear()

    def __enter__(self) -> EmbeddedHdfs:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _java(self, classpath: str, main: str, *args: str) -> list[str]:
        # C1 only: these JVMs serve a test run of minutes; C2's compilations would cost more than they return.
        return ["java", f"-Xmx{self.heap}", "-XX:TieredStopAtLevel=1", "-cp", classpath, main, *args]

    def _write_conf(self) -> None:
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        (self.conf_dir / "core-site.xml").write_text(_site_xml({
            "fs.defaultFS": self.uri, "hadoop.tmp.dir": str(self.data_dir / "tmp")}))
        (self.conf_dir / "hdfs-site.xml").write_text(_site_xml({
            "dfs.namenode.name.dir": str(self.data_dir / "name"),
            "dfs.datanode.data.dir": str(self.data_dir / "data"),
            "dfs.replication": "1",
            "dfs.permissions.enabled": "false",
            "dfs.namenode.rpc-bind-host": "127.0.0.1",
            "dfs.namenode.http-address": "127.0.0.1:0",
            "dfs.datanode.address": "127.0.0.1:0",
            "dfs.datanode.http.address": "127.0.0.1:0",
            "dfs.datanode.ipc.address": "127.0.0.1:0",
            "dfs.namenode.datanode.registration.ip-hostname-check": "false",
            "dfs.namenode.safemode.extension": "0",
            "dfs.datanode.du.reserved": "0",
        }))
        (self.conf_dir / "log4j.properties").write_text(LOG4J_PROPERTIES)
        # The daemons' web UIs look up webapps/<name> on the class path; the Maven jars do not ship them
        # (Hadoop's distribution does, beside the jars). Empty ones are enough: the UIs are not used here.
        for webapp in ("hdfs", "datanode", "static", "secondary"):
            (self.conf_dir / "webapps" / webapp).mkdir(parents=True, exist_ok=True)

    def _wait_until_ready(self, classpath: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        report = ""
        while time.monotonic() < deadline:
            for process, name in zip(self._processes, ("namenode", "datanode"), strict=True):
                if process.poll() is not None:
                    raise HdfsError(f"HDFS: the {name} exited with {process.returncode}; last lines of "
                                    f"{self.data_dir / (name + '.log')}:\n{tail(self.data_dir / (name + '.log'), 15)}")
            result = subprocess.run(self._java(classpath, DFSADMIN_CLASS, "-report"), capture_output=True,
                                    text=True, timeout=60)
            report = result.stdout + result.stderr
            if result.returncode == 0 and "Live datanodes (1)" in report and "Safe mode is ON" not in report:
                return
            time.sleep(0.5)
        raise HdfsError(f"HDFS: not ready after {timeout:.0f} s (no live DataNode); last report:\n{report[-1500:]}")
