package dev.cudawatch.ingest.run;

import com.sun.jna.Library;
import com.sun.jna.Native;
import dev.cudawatch.common.io.AtomicFiles;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * Where `cudawatch run` leaves what it could not ship, and where the node agent finds it: {@code
 * ROOT/cudawatch-run-USER/RUN-ID/}.
 *
 * <p>The handoff between a job's user and the agent's user (the packaged {@code cudawatch}) is a
 * shared directory, not a socket: `run` must leave its output somewhere when the agent is absent
 * too, and a directory the agent lists later serves both cases with one mechanism. The package
 * creates the handoff root {@value #HANDOFF_ROOT} {@code root:cudawatch 3773} ({@code drwxrws-wt}):
 * any user may create an entry (others {@code -wx}: nobody lists the others'), the sticky bit keeps
 * users from removing each other's, and the setgid bit gives every directory and segment below it
 * the group {@code cudawatch}, whose members (the agent) may read them. `run` creates its
 * directories {@code 2770} and its files {@code 0640} whatever its umask: a chmod by a user outside
 * the group would drop the setgid bit (the kernel clears it), so directories are made with the
 * umask's group bits lifted for that one call instead. The agent trusts none of it: it checks the
 * owner of every directory and segment, never follows a link, and takes the host from its own
 * configuration (see {@code RunSpoolAdoption}).
 *
 * <p>Without the package (no handoff root) the default stays {@code /var/tmp}, world-writable,
 * sticky and kept across reboots on every Linux: a user's directory is created {@code 0700} there
 * and used only if it is a real directory owned by that user; an agent running as root reads it.
 */
public final class RunSpools {
  /**
   * {@code /var/tmp}; the test suites set {@code cudawatch.run_spool_root} so that an agent under
   * test never adopts the spools another program left on the machine.
   */
  public static final String DEFAULT_ROOT =
      System.getProperty("cudawatch.run_spool_root", "/var/tmp");

  /** The root the package (prolog, systemd unit) creates for the agent's group. */
  public static final String HANDOFF_ROOT = "/var/spool/cudawatch/run";

  public static final String PREFIX = "cudawatch-run-";

  private static final int S_ISGID = 02000;
  private static final LibC C = loadLibC();

  /** The one C call the handoff needs: lifting the umask's group bits for one mkdir. */
  interface LibC extends Library {
    int umask(int mask);
  }

  private RunSpools() {}

  /**
   * The root to use for a configured one: the default {@code /var/tmp} means the node's handoff
   * root where the package created it (so `run` without a config file meets the packaged agent).
   */
  public static Path effectiveRoot(Path configured) {
    if (configured.equals(Path.of(DEFAULT_ROOT)) && isShared(Path.of(HANDOFF_ROOT))) {
      return Path.of(HANDOFF_ROOT);
    }
    return configured;
  }

  /**
   * Creates this run's spool directory under {@code root} (this user's directory first, checked); a
   * {@link dev.cudawatch.ingest.spool.DiskSpool} opened on it locks it for as long as it runs.
   */
  public static Path runDir(Path root, String runId) throws IOException {
    Path r = effectiveRoot(root);
    boolean shared = isShared(r);
    Path run = userDir(r, shared).resolve(runId);
    createDirectory(run, shared);
    return run;
  }

  /** This user's spool directory under {@code root}, created if needed and checked. */
  public static Path userDir(Path root) throws IOException {
    return userDir(root, isShared(root));
  }

  private static Path userDir(Path root, boolean shared) throws IOException {
    Path dir = root.resolve(PREFIX + safe(System.getProperty("user.name")));
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      try {
        createDirectory(dir, shared);
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

  /**
   * A directory for the agent's group in a shared root ({@code rwxrws---}: the group and the setgid
   * bit come from the parent), else private. The umask's group bits are lifted only around the
   * mkdir, and only they: a thread creating a file meanwhile gets no more than its group bits.
   */
  private static void createDirectory(Path dir, boolean shared) throws IOException {
    if (!shared) {
      AtomicFiles.createPrivateDirectories(dir.getParent());
      Files.createDirectory(
          dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      return;
    }
    var perms = PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxrwx---"));
    if (C == null) {
      Files.createDirectory(dir, perms); // no native access: the umask decides (022 leaves r-x)
      return;
    }
    synchronized (RunSpools.class) {
      int old = C.umask(077);
      try {
        C.umask(old & 0707);
        Files.createDirectory(dir, perms);
      } finally {
        C.umask(old);
      }
    }
  }

  /** True for a handoff root: a real directory with the setgid bit (its group is the agent's). */
  static boolean isShared(Path root) {
    try {
      if (!Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) {
        return false;
      }
      int mode = (Integer) Files.getAttribute(root, "unix:mode", LinkOption.NOFOLLOW_LINKS);
      return (mode & S_ISGID) != 0;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** Every run's spool under {@code root}, of every user this process may read (tests, tools). */
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
          // another user's directory this process may not read
        }
      }
    }
    return runs;
  }

  /** The name of a user's directory: {@code cudawatch-run-} and the user name, made safe. */
  public static String userDirName(String user) {
    return PREFIX + safe(user);
  }

  private static String safe(String user) {
    String u = user == null ? "unknown" : user.replaceAll("[^A-Za-z0-9._-]", "_");
    return u.isEmpty() ? "unknown" : u;
  }

  private static LibC loadLibC() {
    try {
      return Native.load("c", LibC.class);
    } catch (UnsatisfiedLinkError | RuntimeException e) {
      return null; // no native access (noexec temp directory): directories follow the umask
    }
  }
}
