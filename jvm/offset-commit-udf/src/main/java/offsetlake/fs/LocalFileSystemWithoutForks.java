package offsetlake.fs;

import org.apache.hadoop.fs.LocalFileSystem;

/**
 * Hadoop's {@link LocalFileSystem} (checksummed, {@code fs.file.impl}) over {@link RawLocalFileSystemWithoutForks}.
 *
 * <p>Used where Spark and Delta reach {@code file:} paths through {@code FileSystem}: Parquet files, Delta's
 * checkpoints, directory listings. Set with {@code spark.hadoop.fs.file.impl}.
 */
public class LocalFileSystemWithoutForks extends LocalFileSystem {
  public LocalFileSystemWithoutForks() {
    super(new RawLocalFileSystemWithoutForks());
  }
}
