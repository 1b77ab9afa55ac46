package dev.cudawatch.testkit;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * A real small file system ({@code mount -t tmpfs}), to be filled to the last byte: a real full
 * disk. Needs root (as here and in CI): where mounting is not permitted the test fails when {@code
 * CI=true} and is skipped otherwise.
 */
public final class Tmpfs implements AutoCloseable {
  private final Path dir;
  private Path filler;

  private Tmpfs(Path dir) {
    this.dir = dir;
  }

  public static Tmpfs mount(Path dir, String size) throws Exception {
    Files.createDirectories(dir);
    Process p =
        new ProcessBuilder(
                List.of("mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", dir.toString()))
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    if (p.waitFor() != 0) {
      String why = "cannot mount a tmpfs at " + dir + " (" + out + "): run as root";
      if ("true".equals(System.getenv("CI"))) {
        fail(why);
      }
      Assumptions.abort(why);
    }
    return new Tmpfs(dir);
  }

  /** Writes a filler file until not one more byte fits; returns its size. */
  public long fill() throws IOException {
    filler = dir.resolve("filler");
    long written = 0;
    byte[] chunk = new byte[64 * 1024];
    try (OutputStream o = Files.newOutputStream(filler, StandardOpenOption.CREATE_NEW)) {
      while (true) {
        try {
          o.write(chunk);
          written += chunk.length;
        } catch (IOException e) {
          break; // ENOSPC
        }
      }
    } catch (IOException ignored) {
      // the close may fail too on a full disk
    }
    written = Files.size(filler);
    while (true) { // the last partial page, byte by byte
      try {
        Files.write(filler, new byte[1], StandardOpenOption.APPEND);
        written++;
      } catch (IOException e) {
        break;
      }
    }
    return written;
  }

  /** Frees the space {@link #fill} took. */
  public void free() throws IOException {
    Files.deleteIfExists(filler);
  }

  /** Remounts it read-only ({@code true}) or read-write: writes and deletes then fail (EROFS). */
  public void readOnly(boolean ro) throws Exception {
    Process p =
        new ProcessBuilder("mount", "-o", "remount," + (ro ? "ro" : "rw"), dir.toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IOException("remount " + dir + ": " + out);
    }
  }

  public long usableBytes() throws IOException {
    return Files.getFileStore(dir).getUsableSpace();
  }

  @Override
  public void close() throws IOException {
    Process p = new ProcessBuilder("umount", dir.toString()).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    try {
      if (p.waitFor() != 0) {
        new ProcessBuilder("umount", "-l", dir.toString()).start().waitFor(); // busy: detach it
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while unmounting " + dir, e);
    }
  }
}
