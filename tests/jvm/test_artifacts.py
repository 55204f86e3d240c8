"""jvm/artifacts.py: the JVM jars are resolved once, and never shadow pyspark's own."""

from __future__ import annotations

from pathlib import Path

import pyspark
import pytest

from jvm.artifacts import artifact_name, artifact_set, resolve, spark_extra_jars

PYSPARK_JARS = Path(pyspark.__file__).parent / "jars"


def test_a_resolved_set_is_not_resolved_again() -> None:
    # `make test` resolved both sets already; resolving again must not run Maven.
    for name in ("kafka", "spark"):
        target, ran = resolve(name)
        assert not ran
        assert target.jars()


def test_artifact_names_drop_the_version() -> None:
    assert artifact_name(Path("kafka-clients-3.9.1.jar")) == "kafka-clients"
    assert artifact_name(Path("delta-spark_4.1_2.13-4.4.0.jar")) == "delta-spark_4.1_2.13"
    assert artifact_name(Path("zstd-jni-1.5.7-3.jar")) == "zstd-jni"
    assert artifact_name(Path("spark-sql-kafka-0-10_2.13-4.1.1.jar")) == "spark-sql-kafka-0-10_2.13"
    assert artifact_name(Path("javassist-3.30.2-GA.jar")) == "javassist"


def test_spark_gets_delta_and_the_kafka_source_but_no_second_copy_of_pyspark_jars() -> None:
    extra = {artifact_name(jar) for jar in spark_extra_jars(PYSPARK_JARS)}
    assert {"delta-spark_4.1_2.13", "delta-storage", "spark-sql-kafka-0-10_2.13", "kafka-clients"} <= extra
    shipped = {artifact_name(jar) for jar in PYSPARK_JARS.glob("*.jar")}
    assert not extra & shipped
    assert "scala-library" not in extra and "jackson-databind" not in extra


def test_the_broker_set_carries_kafka_and_a_log4j2_backend() -> None:
    names = {artifact_name(jar) for jar in artifact_set("kafka").jars()}
    assert {"kafka_2.13", "kafka-clients", "log4j-core", "log4j-slf4j-impl"} <= names


def test_the_offset_commit_udf_is_built_once_and_shades_kafka_away_from_sparks_kafka_clients() -> None:
    import zipfile

    from jvm.artifacts import build_offset_commit_udf

    jar, how = build_offset_commit_udf()
    assert how == "current"  # set-up built (or copied) it; an unchanged source builds nothing
    names = zipfile.ZipFile(jar).namelist()
    assert "offsetlake/decode/OffsetCommitExpression.class" in names
    assert "offsetlake/shaded/org/apache/kafka/coordinator/group/generated/OffsetCommitValue.class" in names
    assert "offsetlake/decode/GroupMetadataExpression.class" in names
    assert "offsetlake/shaded/org/apache/kafka/coordinator/group/generated/GroupMetadataValue.class" in names
    assert "offsetlake/shaded/org/apache/kafka/common/message/ConsumerProtocolSubscription.class" in names
    assert not [name for name in names if name.startswith("org/apache/kafka/")]


def test_another_clone_copies_the_udf_jar_this_user_built_from_the_same_sources_without_maven(
        monkeypatch, tmp_path) -> None:
    import jvm.artifacts as artifacts

    built = artifacts.offset_commit_udf_jar()  # this clone's, from set-up
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.setenv("OFFSETLAKE_JVM_CACHE", str(tmp_path / "other-clone" / ".jvm"))
    fingerprint = (built.parent / "udf.stamp").read_text().strip()
    kept = artifacts.built_jars_cache() / fingerprint / built.name
    kept.parent.mkdir(parents=True)
    kept.write_bytes(built.read_bytes())

    def no_maven() -> str:
        raise AssertionError("Maven ran although a jar of the same fingerprint was cached")

    monkeypatch.setattr(artifacts, "_mvn", no_maven)
    jar, how = artifacts.build_offset_commit_udf()
    assert how == "copied"
    assert jar.is_relative_to(tmp_path / "other-clone") and jar.read_bytes() == built.read_bytes()
    assert artifacts.build_offset_commit_udf() == (jar, "current")
    (tmp_path / "other-clone" / ".jvm" / "offset-commit-udf" / "udf.stamp").write_text("another source\n")
    kept.unlink()  # a stale stamp and no jar of this fingerprint cached: Maven would have to build
    with pytest.raises(AssertionError, match="Maven ran"):
        artifacts.build_offset_commit_udf()


def test_a_missing_udf_jar_is_one_line_naming_the_fix(monkeypatch, tmp_path) -> None:
    from jvm.artifacts import ArtifactError, offset_commit_udf_jar

    monkeypatch.setenv("OFFSETLAKE_JVM_CACHE", str(tmp_path))
    with pytest.raises(ArtifactError, match="make setup") as caught:
        offset_commit_udf_jar()
    assert "\n" not in str(caught.value)


def test_the_streams_set_carries_kafka_streams_on_the_brokers_kafka_clients_and_stays_off_the_broker() -> None:
    streams = {jar.name for jar in artifact_set("streams").jars()}
    broker = {jar.name for jar in artifact_set("kafka").jars()}
    assert any(name.startswith("kafka-streams-") for name in streams)
    clients = {name for name in streams | broker if name.startswith("kafka-clients-")}
    assert len(clients) == 1  # one kafka-clients version: the clients speak the broker's protocol versions
    assert not any(name.startswith("kafka-streams-") for name in broker)
