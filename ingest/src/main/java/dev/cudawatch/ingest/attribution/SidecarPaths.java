package dev.cudawatch.ingest.attribution;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;

/**
 * Whether an output path a prolog sidecar names may be followed. The path is the job's user's to
 * choose ({@code sbatch -o}), and the agent may read what the user cannot: only a regular file (not
 * a link) owned by the job's user is followed, so {@code -o /etc/shadow} ships nothing.
 */
final class SidecarPaths {
  private SidecarPaths() {}

  /** True to follow, false never, null when the file does not exist yet (the job has not begun). */
  static Boolean followable(String path, SlurmSidecar side) {
    Path p;
    try {
      p = Path.of(path);
    } catch (RuntimeException e) {
      return false;
    }
    if (!p.isAbsolute() || !p.normalize().equals(p)) {
      return false;
    }
    try {
      if (side.uid() != null) {
        Object uid = Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        return Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) && side.uid().equals(uid);
      }
      PosixFileAttributes at =
          Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      return at.isRegularFile() && side.user() != null && side.user().equals(at.owner().getName());
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException | RuntimeException e) {
      return false; // not ours to look at: not followed
    }
  }
}
