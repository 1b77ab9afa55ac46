package dev.cudawatch.ingest;

import dev.cudawatch.ingest.lifecycle.StoppableSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the agent's source threads and remembers which of them died: a thread that ends with an
 * exception, or returns while the agent is running when it should not (every source but stdin),
 * makes the agent unhealthy under that source's name. A {@link StoppableSource} that returns after
 * it was told to stop finished its work: it is not dead.
 */
final class SourceHealth {
  private static final Logger LOG = LoggerFactory.getLogger(SourceHealth.class);

  private final Map<String, String> dead = new ConcurrentHashMap<>();
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean stopping;

  /** Starts {@code r} on a daemon thread named {@code cudawatch-NAME}. */
  void start(String name, Runnable r, boolean mayFinish) {
    Thread t =
        new Thread(
            () -> {
              try {
                r.run();
                if (!mayFinish && !stopping && !stoppedOnPurpose(r)) {
                  died(name, "stopped");
                }
              } catch (Throwable e) {
                if (!stopping) {
                  died(name, e.toString());
                }
              }
            },
            "cudawatch-" + name);
    t.setDaemon(true);
    t.start();
    synchronized (threads) {
      threads.add(t);
    }
  }

  private static boolean stoppedOnPurpose(Runnable r) {
    return r instanceof StoppableSource s && s.stopRequested();
  }

  /** Marks a source dead (also one that could not start). */
  void died(String name, String why) {
    dead.put(name, why);
    LOG.error("agent source {} died: {}", name, why);
  }

  /** Source name to why it died; empty when all are alive. */
  Map<String, String> deadSources() {
    return new TreeMap<>(dead);
  }

  /** From now on, threads ending are part of shutting down. */
  void stopping() {
    stopping = true;
  }
}
