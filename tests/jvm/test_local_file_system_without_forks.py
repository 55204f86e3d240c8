"""offsetlake.fs (jvm/offset-commit-udf): the tests' local file system answers as Hadoop's own, without forking.

Each answer is compared with Hadoop's ``RawLocalFileSystem`` on the same paths, in the session's JVM
(the tests' Spark settings, tests/spark_conf.py, make it the ``file:`` file system there).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from py4j.protocol import Py4JJavaError


@pytest.fixture(scope="module")
def jvm(spark):  # type: ignore[no-untyped-def]
    return spark.sparkContext._jvm


@pytest.fixture(scope="module")
def file_systems(spark, jvm):  # type: ignore[no-untyped-def]
    """(Hadoop's RawLocalFileSystem, offsetlake's), both initialized with the session's Hadoop settings."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    uri = jvm.java.net.URI("file:///")
    hadoops, ours = jvm.org.apache.hadoop.fs.RawLocalFileSystem(), jvm.offsetlake.fs.RawLocalFileSystemWithoutForks()
    hadoops.initialize(uri, conf)
    ours.initialize(uri, conf)
    return hadoops, ours


def _link_status(jvm, fs, path: Path):  # type: ignore[no-untyped-def]
    """What getFileLinkStatus says of ``path``, or the name of the exception it throws."""
    try:
        status = fs.getFileLinkStatus(jvm.org.apache.hadoop.fs.Path(str(path)))
    except Py4JJavaError as error:
        return error.java_exception.getClass().getName()
    target = status.getSymlink().toString() if status.isSymlink() else None
    return (status.getPath().toString(), status.isFile(), status.isDirectory(), status.isSymlink(), target,
            status.getLen(), status.getModificationTime())


def test_the_sessions_local_file_systems_are_offsetlakes(spark, jvm) -> None:  # type: ignore[no-untyped-def]
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    path = jvm.org.apache.hadoop.fs.Path("file:///tmp")
    assert path.getFileSystem(conf).getClass().getName() == "offsetlake.fs.LocalFileSystemWithoutForks"
    assert jvm.org.apache.hadoop.fs.FileContext.getFileContext(conf).getDefaultFileSystem().getClass().getName() \
        == "offsetlake.fs.LocalFsWithoutForks"


def test_a_file_a_directory_a_link_a_dangling_link_and_nothing_have_hadoops_link_status(
        jvm, file_systems, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "file").write_bytes(b"twelve bytes")
    (tmp_path / "directory").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "file")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    hadoops, ours = file_systems
    for name in ("file", "directory", "link", "dangling", "missing"):
        assert _link_status(jvm, ours, tmp_path / name) == _link_status(jvm, hadoops, tmp_path / name), name
    assert _link_status(jvm, ours, tmp_path / "link")[3:5] == (True, f"file:{tmp_path / 'file'}")
    assert _link_status(jvm, ours, tmp_path / "missing") == "java.io.FileNotFoundException"


@pytest.mark.parametrize("mode", [0o644, 0o600, 0o755, 0o700, 0o000, 0o1777])
def test_a_permission_is_set_as_hadoops_chmod_sets_it(jvm, file_systems, tmp_path: Path, mode: int) -> None:  # type: ignore[no-untyped-def]
    permission = jvm.org.apache.hadoop.fs.permission.FsPermission(mode)
    modes = []
    for fs, name in zip(file_systems, ("hadoops", "ours"), strict=True):
        path = tmp_path / name
        path.mkdir()
        fs.setPermission(jvm.org.apache.hadoop.fs.Path(str(path)), permission)
        modes.append(stat.S_IMODE(os.stat(path).st_mode))
        path.chmod(0o700)  # so that pytest can remove it
    assert modes == [mode, mode]


def test_a_missing_path_cannot_be_given_a_permission(jvm, file_systems, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, ours = file_systems
    with pytest.raises(Py4JJavaError) as refused:
        ours.setPermission(jvm.org.apache.hadoop.fs.Path(str(tmp_path / "missing")),
                           jvm.org.apache.hadoop.fs.permission.FsPermission(0o644))
    assert refused.value.java_exception.getClass().getName() == "java.nio.file.NoSuchFileException"


def test_file_context_writes_renames_over_and_reads_back_with_checksums(spark, jvm, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The write-then-rename that Delta's log and Spark's checkpoints do, through the session's FileContext."""
    hadoop = jvm.org.apache.hadoop.fs
    context = hadoop.FileContext.getFileContext(spark.sparkContext._jsc.hadoopConfiguration())
    flags = jvm.java.util.EnumSet.of(hadoop.CreateFlag.CREATE, hadoop.CreateFlag.OVERWRITE)
    gateway = spark.sparkContext._gateway
    create_options = gateway.new_array(hadoop.Options.CreateOpts, 0)
    rename_options = gateway.new_array(hadoop.Options.Rename, 1)
    rename_options[0] = hadoop.Options.Rename.OVERWRITE
    (tmp_path / "target").write_bytes(b"old")
    temporary, target = hadoop.Path(f"file:{tmp_path}/.target.tmp"), hadoop.Path(f"file:{tmp_path}/target")
    stream = context.create(temporary, flags, create_options)
    stream.write(bytearray(b"new contents"))
    stream.close()
    context.rename(temporary, target, rename_options)
    assert (tmp_path / "target").read_bytes() == b"new contents"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".target.crc", "target"]  # the checksum moved with it
    assert context.getFileStatus(target).getLen() == len(b"new contents")
