package dev.cudawatch.ingest.run;

import dev.cudawatch.common.io.AtomicFiles;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where `cudawatch run` leaves what it could not ship, and where the node agent finds it: {@code
 * ROOT/cudawatch-run-USER/RUN-ID/} with ROOT {@code /var/tmp} by default (world-writable, sticky
 * and kept across reboots on every Linux), so a job of any user spools where the agent (root)
 * looks. A user's directory is created {@code 0700} and used only if it is a real directory owned
 * by that user: one planted by someone else is refused, not written into.
 */
public final class RunSpools {
  public static final String DEFAULT_ROOT = "/var/tmp";
  static final String PREFIX = "cudawatch-run-";

  private RunSpools() {}

  /** This user's spool directory under {@code root}, created if needed and checked. */
  public static Path userDir(Path root) throws IOException {
    Path dir = root.resolve(PREFIX + safe(System.getProperty("user.name")));
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      try {
        AtomicFiles.createPrivateDirectories(dir);
      } catch (java.nio.file.FileAlreadyExistsException raced) {
        // another run of the same user created it first; it is checked below
      }
    }
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      throw new IOException(dir + " is not a directory (a link or a file is in its place)");
    }
    var owner = Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS).getName();
    if (!owner.equals(System.getProperty("user.name"))) {
      throw new IOException(dir + " belongs to " + owner + ", not to this user");
    }
    return dir;
  }

  /** Every run's spool under {@code root}, of every user, for the agent to ship. */
  public static List<Path> all(Path root) throws IOException {
    List<Path> runs = new ArrayList<>();
    if (!Files.isDirectory(root)) {
      return runs;
    }
    try (DirectoryStream<Path> users = Files.newDirectoryStream(root, PREFIX + "*")) {
      for (Path user : users) {
        if (!Files.isDirectory(user, LinkOption.NOFOLLOW_LINKS)) {
          continue; // never follow a link planted in a shared directory
        }
        try (DirectoryStream<Path> rs = Files.newDirectoryStream(user)) {
          for (Path r : rs) {
            if (Files.isDirectory(r, LinkOption.NOFOLLOW_LINKS)) {
              runs.add(r);
            }
          }
        } catch (IOException e) {
          // another user's directory the agent may not read (it runs as root in production)
        }
      }
    }
    return runs;
  }

  private static String safe(String user) {
    String u = user == null ? "unknown" : user.replaceAll("[^A-Za-z0-9._-]", "_");
    return u.isEmpty() ? "unknown" : u;
  }
}
