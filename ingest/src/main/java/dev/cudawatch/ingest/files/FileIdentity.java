package dev.cudawatch.ingest.files;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * A file's identity (device and inode on Unix): it survives a rename, and a new file gets another.
 */
public final class FileIdentity {
  private FileIdentity() {}

  /** The identity of the file at {@code p}, or null when there is none. */
  public static String of(Path p) throws IOException {
    try {
      Object key = Files.readAttributes(p, BasicFileAttributes.class).fileKey();
      return key == null
          ? p.toString()
          : key.toString()
              .replace("(", "")
              .replace(")", "")
              .replace("dev=", "")
              .replace(",ino=", ":");
    } catch (NoSuchFileException e) {
      return null;
    }
  }
}
