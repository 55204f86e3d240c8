package offsetlake.fs;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's {@link RawLocalFileSystem} without a process per chmod and per symlink check.
 *
 * <p>Without Hadoop's native library (pyspark ships none), {@code RawLocalFileSystem.setPermission} runs
 * {@code chmod} in a child process, and {@code getFileLinkStatus} runs {@code readlink} through
 * {@code FileUtil.readLink} (hadoop-common 3.4, {@code deprecatedGetFileLinkStatusInternal}). Every Delta
 * commit and every streaming checkpoint file is written to a temporary file and renamed
 * ({@code FileContext.rename} looks at both paths' link status), and every file created or directory made
 * is chmod-ed: the test suite's JVM starts thousands of such child processes, and each costs a fork and
 * an exec of a large JVM, far more than the file operation itself (recorded in CHANGELOG.md).
 *
 * <p>The same answers through {@code java.nio}: a path that is not a symbolic link has the status
 * {@link #getFileStatus} gives (what Hadoop's own method returns for it, after learning from
 * {@code readlink} that it is not a link); a link is left to Hadoop's method. Modes with only the nine
 * permission bits are set with {@link Files#setPosixFilePermissions}; any other (sticky, setuid) goes to
 * Hadoop's {@code chmod}.
 */
public class RawLocalFileSystemWithoutForks extends RawLocalFileSystem {
  private static final PosixFilePermission[] BITS = {
      PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
      PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
      PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ};

  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    short mode = permission.toShort();
    if ((mode & ~0777) != 0) {
      super.setPermission(p, permission);
      return;
    }
    Set<PosixFilePermission> bits = EnumSet.noneOf(PosixFilePermission.class);
    for (int i = 0; i < BITS.length; i++) {
      if ((mode & (1 << i)) != 0) {
        bits.add(BITS[i]);
      }
    }
    Files.setPosixFilePermissions(pathToFile(p).toPath(), bits);
  }

  @Override
  public FileStatus getFileLinkStatus(Path f) throws IOException {
    File file = pathToFile(f);
    if (!Files.isSymbolicLink(file.toPath())) {
      return getFileStatus(f);  // FileNotFoundException for a missing path, as Hadoop's method
    }
    return super.getFileLinkStatus(f);
  }
}
