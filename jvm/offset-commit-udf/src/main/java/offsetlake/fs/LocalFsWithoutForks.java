package offsetlake.fs;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFs;
import org.apache.hadoop.fs.DelegateToFileSystem;
import org.apache.hadoop.fs.FsConstants;
import org.apache.hadoop.fs.FsServerDefaults;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.local.LocalConfigKeys;

/**
 * Hadoop's {@code org.apache.hadoop.fs.local.LocalFs} ({@code FileContext}'s {@code file:} implementation,
 * {@code fs.AbstractFileSystem.file.impl}) over {@link RawLocalFileSystemWithoutForks}.
 *
 * <p>{@code FileContext} is what Delta's {@code HDFSLogStore} and Spark's streaming checkpoints
 * ({@code FileContextBasedCheckpointFileManager}) write and rename with. Hadoop's {@code RawLocalFs} cannot
 * take another {@code RawLocalFileSystem} (its constructors are package-private), so its overrides
 * (hadoop-common 3.4.2) are repeated here: no default port, the local server defaults, every name valid.
 * Set with {@code spark.hadoop.fs.AbstractFileSystem.file.impl}.
 */
public class LocalFsWithoutForks extends ChecksumFs {
  public LocalFsWithoutForks(URI uri, Configuration conf) throws IOException, URISyntaxException {
    super(new Raw(uri, conf));
  }

  static final class Raw extends DelegateToFileSystem {
    Raw(URI uri, Configuration conf) throws IOException, URISyntaxException {
      super(uri, new RawLocalFileSystemWithoutForks(), conf, FsConstants.LOCAL_FS_URI.getScheme(), false);
    }

    @Override
    public int getUriDefaultPort() {
      return -1;
    }

    @Override
    @Deprecated
    public FsServerDefaults getServerDefaults() throws IOException {
      return LocalConfigKeys.getServerDefaults();
    }

    @Override
    public FsServerDefaults getServerDefaults(Path f) throws IOException {
      return LocalConfigKeys.getServerDefaults();
    }

    @Override
    public boolean isValidName(String src) {
      return true;  // as RawLocalFs: Hadoop's own check refuses names a local file system allows
    }
  }
}
