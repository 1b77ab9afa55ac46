package dev.cudawatch.ingest.attribution;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;

/**
 * Whether a path a prolog sidecar names is the job's. The path is the job's user's to choose
 * ({@code sbatch -o}), and the agent may read what the user cannot, and any user may name anyone's
 * path: a sidecar speaks for a path only when it is a regular file (not a link) owned by the job's
 * user, so {@code -o /etc/shadow} ships nothing and {@code -o /home/alice/train.log} from bob's job
 * never makes alice's lines bob's.
 */
final class SidecarPaths {
  private SidecarPaths() {}

  /** A file's owner: uid and name; {@link #NOT_OURS} when it is no regular file we may look at. */
  record Owner(int uid, String name) {}

  static final Owner NOT_OURS = new Owner(-1, null);

  /** The owner of {@code path}; null when it does not exist yet (the job has not begun). */
  static Owner owner(String path) {
    Path p;
    try {
      p = Path.of(path);
    } catch (RuntimeException e) {
      return NOT_OURS;
    }
    if (!p.isAbsolute() || !p.normalize().equals(p)) {
      return NOT_OURS;
    }
    try {
      PosixFileAttributes at =
          Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      if (!at.isRegularFile()) {
        return NOT_OURS;
      }
      Object uid = Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
      return new Owner(uid instanceof Integer u ? u : -1, at.owner().getName());
    } catch (NoSuchFileException e) {
      return null;
    } catch (IOException | RuntimeException e) {
      return NOT_OURS; // not ours to look at
    }
  }

  /** Whether the file's owner is the sidecar's job's user: by uid, or by name from old prologs. */
  static boolean owns(SlurmSidecar side, Owner o) {
    if (o == null || o == NOT_OURS) {
      return false;
    }
    if (side.uid() != null) {
      return side.uid() == o.uid();
    }
    return side.user() != null && side.user().equals(o.name());
  }
}
