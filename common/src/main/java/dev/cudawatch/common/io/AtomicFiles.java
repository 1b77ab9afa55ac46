package dev.cudawatch.common.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;

/**
 * The one crash-safe way to replace a file: write a temporary file beside it, fsync it, rename it
 * over the target, fsync the directory. A crash leaves the old content or the new, never half; two
 * writers at once each rename a whole file of their own (the temporary name is unique per write),
 * so neither fails and the target holds one of them whole. Files are created {@code 0600}: they
 * hold job output and alert data.
 */
public final class AtomicFiles {
  /** Temporary files end so; {@link #clearTemps} removes those a crash left behind. */
  public static final String TEMP_SUFFIX = ".tmp";

  private static final boolean POSIX =
      FileSystems.getDefault().supportedFileAttributeViews().contains("posix");

  private AtomicFiles() {}

  /** Replaces {@code target} with {@code bytes}, durably. */
  public static void write(Path target, byte[] bytes) throws IOException {
    Path dir = target.toAbsolutePath().getParent();
    Files.createDirectories(dir);
    Path tmp =
        POSIX
            ? Files.createTempFile(dir, "." + target.getFileName() + ".", TEMP_SUFFIX, OWNER_ONLY)
            : Files.createTempFile(dir, "." + target.getFileName() + ".", TEMP_SUFFIX);
    try {
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
          ch.write(b);
        }
        ch.force(true);
      }
      try {
        Files.move(
            tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException | RuntimeException e) {
      Files.deleteIfExists(tmp); // a full disk must not also leak half-written temporaries
      throw e;
    }
    syncDirectory(dir);
  }

  /** Makes a rename or delete in {@code dir} durable. */
  public static void syncDirectory(Path dir) {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException ignored) {
      // some file systems cannot fsync a directory; the rename itself is still atomic
    }
  }

  /** True for a temporary file of {@link #write} (finished or cut short by a crash). */
  public static boolean isTemp(Path p) {
    String n = p.getFileName().toString();
    return n.startsWith(".") && n.endsWith(TEMP_SUFFIX);
  }

  /** Deletes the temporary files a crash left in {@code dir}; returns how many. */
  public static int clearTemps(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    int n = 0;
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : s.filter(AtomicFiles::isTemp).toList()) {
        if (Files.deleteIfExists(p)) {
          n++;
        }
      }
    }
    return n;
  }

  /** Creates {@code dir} (and parents) readable by its owner only, where the OS allows. */
  public static Path createPrivateDirectories(Path dir) throws IOException {
    if (POSIX && !Files.exists(dir)) {
      Files.createDirectories(
          dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } else {
      Files.createDirectories(dir);
    }
    return dir;
  }

  private static final FileAttribute<?> OWNER_ONLY =
      PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
}
