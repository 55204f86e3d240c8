"""Resolve offsetlake's JVM artifacts from Maven Central into a cache in the work tree.

Four sets, each described by a POM under ``conf/jvm/``:

* ``kafka``: the embedded broker (``kafka_2.13`` + a log4j2 backend) and Kafka's
  own tools, whose formatters serve as decoding oracles in tests;
* ``spark``: Delta Lake and Spark's Kafka source for the SparkSession;
* ``hdfs``: a single-node HDFS (NameNode + DataNode) for the cluster tests (jvm/hdfs.py);
* ``streams``: Kafka Streams (and its kafka-clients, with the share consumer and the Admin client) for the
  share-group and streams-group test clients (broker/group_clients.py), apart from the broker's class path;

and one jar built from source, ``jvm/offset-commit-udf`` (a Spark UDF calling Kafka's
generated offset-commit classes, shaded, and ``offsetlake.fs``, Hadoop's local file system without a
process per chmod; see its pom.xml), into ``.jvm/offset-commit-udf/``.

Maven copies each set's runtime closure into ``.jvm/<set>-libs/`` from Maven's usual
per-user local repository (``~/.m2/repository``, or ``OFFSETLAKE_MAVEN_REPO``), so a second clone
on the same machine downloads nothing (a repository per work tree would fetch the whole closure from
Maven Central again for every fresh clone). A stamp file
records a hash of the POM and the Maven settings; while it matches, nothing is run, so a second set-up downloads
nothing and works offline. We use Maven rather than Spark's ``spark.jars.packages``
because Ivy re-checks remote metadata at every session start.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
POM_DIR = PROJECT_ROOT / "conf" / "jvm"
MAVEN_SETTINGS = POM_DIR / "maven-settings.xml"
# maven-dependency-plugin is pinned: a bare "dependency:" prefix resolves
# "latest" from remote metadata, which makes set-up non-reproducible.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
ARTIFACT_SETS = {"kafka": "kafka-broker.pom.xml", "spark": "spark-packages.pom.xml", "hdfs": "hdfs.pom.xml",
                 "streams": "kafka-streams.pom.xml"}

_VERSION_SUFFIX = re.compile(r"-\d+(\.\d+)+([-.][A-Za-z0-9]+)*$")


class ArtifactError(RuntimeError):
    """JVM artifacts could not be resolved; the message says what to do."""


@dataclass(frozen=True)
class ArtifactSet:
    name: str
    pom: Path
    cache_dir: Path

    @property
    def libs_dir(self) -> Path:
        return self.cache_dir / f"{self.name}-libs"

    @property
    def stamp(self) -> Path:
        return self.cache_dir / f"{self.name}.stamp"

    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for path in (self.pom, MAVEN_SETTINGS):
            digest.update(path.read_bytes())
        digest.update(DEPENDENCY_PLUGIN.encode())
        return digest.hexdigest()

    def is_resolved(self) -> bool:
        return (
            self.stamp.exists()
            and self.stamp.read_text().strip() == self.fingerprint()
            and any(self.libs_dir.glob("*.jar"))
        )

    def jars(self) -> list[Path]:
        if not self.is_resolved():
            raise ArtifactError(
                f"JVM artifacts '{self.name}' are not resolved in {self.libs_dir}; "
                "run 'make setup' (or 'offsetlake jvm resolve')"
            )
        return sorted(self.libs_dir.glob("*.jar"))


def cache_dir() -> Path:
    return Path(os.environ.get("OFFSETLAKE_JVM_CACHE", PROJECT_ROOT / ".jvm")).resolve()


def maven_repository() -> Path:
    """Maven's local repository: shared by every clone of this user, as Maven's own default."""
    return Path(os.environ.get("OFFSETLAKE_MAVEN_REPO", Path.home() / ".m2" / "repository")).expanduser().resolve()


def artifact_set(name: str) -> ArtifactSet:
    if name not in ARTIFACT_SETS:
        raise ArtifactError(f"unknown artifact set {name!r}; expected one of {', '.join(ARTIFACT_SETS)}")
    return ArtifactSet(name, POM_DIR / ARTIFACT_SETS[name], cache_dir())


def resolve(name: str, *, quiet: bool = True) -> tuple[ArtifactSet, bool]:
    """Copy the set's runtime jars into its cache unless already there.

    Returns the set and whether Maven had to run.
    """
    target = artifact_set(name)
    if target.is_resolved():
        return target, False
    mvn = _mvn()
    fingerprint = target.fingerprint()  # before Maven runs, as for the UDF jar
    if target.libs_dir.exists():
        shutil.rmtree(target.libs_dir)
    target.cache_dir.mkdir(parents=True, exist_ok=True)
    command = [
        mvn, "-B", *(["-q"] if quiet else []),
        "-s", str(MAVEN_SETTINGS),
        "-f", str(target.pom),
        f"-Dmaven.repo.local={maven_repository()}",
        f"{DEPENDENCY_PLUGIN}:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={target.libs_dir}",
    ]
    _run_maven(command, f"Maven could not resolve '{name}' from {target.pom.name}")
    target.stamp.write_text(fingerprint + "\n")
    return target, True


UDF_PROJECT = PROJECT_ROOT / "jvm" / "offset-commit-udf"
OFFSET_COMMIT_EXPRESSION_CLASS = "offsetlake.decode.OffsetCommitExpression"
GROUP_METADATA_EXPRESSION_CLASS = "offsetlake.decode.GroupMetadataExpression"
RECORD_TYPE_EXPRESSION_CLASS = "offsetlake.decode.RecordTypeExpression"
GROUP_RECORD_EXPRESSION_CLASS = "offsetlake.decode.GroupRecordExpression"


def _udf_dir() -> Path:
    return cache_dir() / "offset-commit-udf"


def _udf_fingerprint(pyspark_jars: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted([UDF_PROJECT / "pom.xml", MAVEN_SETTINGS, *(UDF_PROJECT / "src").rglob("*.java")]):
        digest.update(path.name.encode() + path.read_bytes())
    digest.update(",".join(sorted(jar.name for jar in pyspark_jars.glob("spark-sql-api*.jar"))).encode())
    return digest.hexdigest()


def _pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def offset_commit_udf_jar() -> Path:
    """The built UDF jar; ArtifactError (saying how to build it) when missing or stale."""
    jar = _udf_dir() / "offset-commit-udf-1.jar"
    stamp = _udf_dir() / "udf.stamp"
    if not (jar.exists() and stamp.exists() and stamp.read_text().strip() == _udf_fingerprint(_pyspark_jars())):
        raise ArtifactError(f"the offset-commit UDF jar is not built in {_udf_dir()}; run 'make setup' "
                            "(or 'offsetlake jvm resolve')")
    return jar


def built_jars_cache() -> Path:
    """Where built UDF jars are kept per user, by fingerprint."""
    from conf.settings import user_cache_dir

    return user_cache_dir() / "offset-commit-udf"


def build_offset_commit_udf(*, quiet: bool = True) -> tuple[Path, str]:
    """Make the UDF jar current; returns (jar, how): ``"current"`` (nothing to do), ``"copied"`` or ``"built"``.

    Spark's API is compiled against the jars pyspark ships (their versions read from the file
    names), so the UDF always matches the Spark it runs in. A jar built from the same sources, POM
    and Spark (the same fingerprint) by another clone of this user is copied from ``built_jars_cache()``
    rather than built again: Maven's compile and shade took 18-20 s of every fresh clone's set-up.
    """
    try:
        return offset_commit_udf_jar(), "current"
    except ArtifactError:
        pass
    jars = _pyspark_jars()
    fingerprint = _udf_fingerprint(jars)
    target = _udf_dir()
    cached = built_jars_cache() / fingerprint / "offset-commit-udf-1.jar"
    if cached.is_file():
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        shutil.copyfile(cached, target / cached.name)
        (target / "udf.stamp").write_text(fingerprint + "\n")
        return offset_commit_udf_jar(), "copied"
    mvn = _mvn()
    versions = {}
    for prefix, key in (("spark-sql-api_2.13-", "spark.version"), ("scala-library-", "scala.version"),
                        ("kryo-shaded-", "kryo.version"), ("hadoop-client-api-", "hadoop.version")):
        found = sorted(jars.glob(f"{prefix}*.jar"))
        if not found:
            raise ArtifactError(f"pyspark ships no {prefix}*.jar in {jars}; reinstall pyspark ('make setup')")
        versions[key] = found[-1].name.removeprefix(prefix).removesuffix(".jar")
    # Taken before Maven runs (above): a source edited during the build must not be stamped as built.
    if target.exists():
        shutil.rmtree(target)
    command = [
        mvn, "-B", *(["-q"] if quiet else []), "-s", str(MAVEN_SETTINGS), "-f", str(UDF_PROJECT / "pom.xml"),
        f"-Dmaven.repo.local={maven_repository()}", f"-Dbuild.dir={target}", f"-Dpyspark.jars={jars}",
        *(f"-D{key}={value}" for key, value in versions.items()), "package",
    ]
    _run_maven(command, f"Maven could not build the offset-commit UDF ({UDF_PROJECT})")
    (target / "udf.stamp").write_text(fingerprint + "\n")
    jar = offset_commit_udf_jar()
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_suffix(".partial")
    shutil.copyfile(jar, partial)
    partial.replace(cached)  # whole or absent, for a clone building at the same time
    return jar, "built"


def _mvn() -> str:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ArtifactError("Maven ('mvn') is not on PATH; install it (apt-get install maven) and retry")
    return mvn


def _run_maven(command: list[str], failure: str) -> None:
    """Run Maven; on failure, one line: ``failure`` and Maven's first ERROR line."""
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        errors = [line for line in (result.stdout + result.stderr).splitlines() if "ERROR" in line]
        detail = errors[0] if errors else (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise ArtifactError(f"{failure}: {detail}")


def artifact_name(jar: Path) -> str:
    """``kafka-clients-3.9.1.jar`` -> ``kafka-clients``."""
    return _VERSION_SUFFIX.sub("", jar.name.removesuffix(".jar"))


def spark_extra_jars(pyspark_jars_dir: Path) -> list[Path]:
    """The ``spark`` set minus every artifact pyspark already ships.

    Maven's closure of delta-spark also lists Spark's own dependencies (Hadoop,
    Jackson 2.13, Parquet, Scala); putting a second, older copy on the class
    path breaks Spark, so pyspark's copy always wins. RoaringBitmap's ``shims``
    only belongs with the RoaringBitmap 0.9 that is dropped the same way.
    """
    shipped = {artifact_name(jar) for jar in pyspark_jars_dir.glob("*.jar")}
    if "RoaringBitmap" in shipped:
        shipped.add("shims")
    return [jar for jar in artifact_set("spark").jars() if artifact_name(jar) not in shipped]


def kafka_classpath() -> str:
    return os.pathsep.join(str(jar) for jar in artifact_set("kafka").jars())
