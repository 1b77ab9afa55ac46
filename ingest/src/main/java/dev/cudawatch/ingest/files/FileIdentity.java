package dev.cudawatch.ingest.files;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * A file's identity (device and inode on Unix): it survives a rename, and a new file gets another.
 * Links are never followed: a symbolic link planted in a watched directory names the link itself,
 * never the file it points at, and is refused as not a regular file.
 */
public final class FileIdentity {
  private FileIdentity() {}

  /** The identity of the file at {@code p}, or null when there is none. */
  public static String of(Path p) throws IOException {
    Seen s = stat(p);
    return s == null ? null : s.identity();
  }

  /** What is at {@code p} itself (a link is not followed), or null when nothing is. */
  public static Seen stat(Path p) throws IOException {
    try {
      BasicFileAttributes a =
          Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      return new Seen(identity(p, a), a.size(), a.isRegularFile());
    } catch (NoSuchFileException e) {
      return null;
    }
  }

  private static String identity(Path p, BasicFileAttributes a) {
    Object key = a.fileKey();
    return key == null
        ? p.toString()
        : key.toString()
            .replace("(", "")
            .replace(")", "")
            .replace("dev=", "")
            .replace(",ino=", ":");
  }

  /**
   * Opens a regular file for reading without following a link in its last component ({@code
   * O_NOFOLLOW}), and checks that what was opened is a regular file with the expected identity
   * (when given): the name may have been swapped since it was scanned.
   *
   * @throws NotRegularFileException for a link, a pipe, a device, a directory or a swapped file
   */
  public static FileChannel openRegular(Path p, String expectedIdentity) throws IOException {
    Seen before = stat(p);
    if (before == null) {
      throw new NoSuchFileException(p.toString());
    }
    if (!before.regular()) {
      // never open it: a pipe would block the reader, a link leads out of the watched tree
      throw new NotRegularFileException(p, kind(p));
    }
    FileChannel ch;
    try {
      ch = FileChannel.open(p, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
    } catch (IOException e) {
      Seen now = stat(p);
      if (now != null && !now.regular()) {
        throw new NotRegularFileException(p, kind(p)); // swapped for a link since the check
      }
      throw e;
    }
    try {
      Seen s = stat(p);
      if (s == null || !s.regular()) {
        throw new NotRegularFileException(p, s == null ? "gone" : kind(p));
      }
      String expected = expectedIdentity != null ? expectedIdentity : before.identity();
      if (!expected.equals(s.identity())) {
        throw new NotRegularFileException(p, "replaced while it was opened");
      }
      return ch;
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e;
    }
  }

  private static String kind(Path p) {
    return Files.isSymbolicLink(p) ? "a symbolic link" : "not a regular file";
  }

  /**
   * What a scan saw at a path.
   *
   * @param identity device and inode
   * @param size bytes
   * @param regular a regular file (not a link, pipe, device or directory)
   */
  public record Seen(String identity, long size, boolean regular) {}

  /** A path the agent refuses to read: only regular files are followed. */
  public static final class NotRegularFileException extends IOException {
    private static final long serialVersionUID = 1L;

    NotRegularFileException(Path p, String why) {
      super("not following " + p + ": " + why + " (only regular files are read)");
    }
  }
}
