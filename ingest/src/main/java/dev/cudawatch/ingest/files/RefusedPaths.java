package dev.cudawatch.ingest.files;

import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Paths matching a glob that the agent refuses to read (links, pipes, devices): each is logged and
 * counted once, however often a scan meets it again. Remembers a bounded number of paths.
 */
public final class RefusedPaths {
  private static final Logger LOG = LoggerFactory.getLogger(RefusedPaths.class);
  private static final int REMEMBERED = 10_000;

  private final Set<String> seen = new LinkedHashSet<>();
  private final AtomicLong count = new AtomicLong();

  /** Notes a refusal of {@code p}; logs and counts it the first time. */
  public synchronized void refuse(Path p, String why) {
    if (seen.add(p.toString())) {
      count.incrementAndGet();
      LOG.warn("not following {}: {} (only regular files are read)", p, why);
      if (seen.size() > REMEMBERED) {
        var it = seen.iterator();
        it.next();
        it.remove();
      }
    }
  }

  /** Distinct paths refused so far. */
  public long count() {
    return count.get();
  }
}
