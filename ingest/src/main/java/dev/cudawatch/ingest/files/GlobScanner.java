package dev.cudawatch.ingest.files;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystems;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.EnumSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;

/** Finds the regular files matching a glob such as {@code /var/log/jobs/**}{@code /*.log}. */
public final class GlobScanner {
  private final Path base;
  private final PathMatcher matcher;
  private final int depth;
  private final AtomicLong unreadable = new AtomicLong();
  private final RefusedPaths refused;

  public GlobScanner(String glob, RefusedPaths refused) {
    this.refused = refused;
    Path abs = Path.of(glob).toAbsolutePath().normalize();
    Path b = abs.getRoot();
    int i = 0;
    for (; i < abs.getNameCount(); i++) {
      String seg = abs.getName(i).toString();
      if (seg.matches(".*[*?\\[{].*")) {
        break;
      }
      b = b.resolve(seg);
    }
    if (i == abs.getNameCount()) {
      // a plain path: the file itself
      this.base = b.getParent();
      this.depth = 1;
    } else {
      this.base = b;
      this.depth = glob.contains("**") ? Integer.MAX_VALUE : abs.getNameCount() - i;
    }
    this.matcher = FileSystems.getDefault().getPathMatcher("glob:" + abs);
  }

  /** True when {@code p} matches this glob. */
  public boolean matches(Path p) {
    return matcher.matches(p.toAbsolutePath().normalize());
  }

  public Set<Path> scan() {
    Set<Path> out = new TreeSet<>();
    if (!Files.isDirectory(base)) {
      return out;
    }
    try {
      Files.walkFileTree(
          base,
          EnumSet.noneOf(FileVisitOption.class),
          depth,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
              if (matcher.matches(file)) {
                if (attrs.isRegularFile()) {
                  out.add(file);
                } else {
                  // a link (to credentials, a token), a pipe, a device: never read
                  refused.refuse(
                      file, attrs.isSymbolicLink() ? "a symbolic link" : "not a regular file");
                }
              }
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
              if (e instanceof AccessDeniedException) {
                unreadable.incrementAndGet();
              }
              return FileVisitResult.CONTINUE; // one unreadable directory never stops the others
            }
          });
    } catch (IOException e) {
      unreadable.incrementAndGet();
    }
    return out;
  }

  /** Directories or files that could not be read, so far. */
  public long unreadable() {
    return unreadable.get();
  }
}
