package dev.cudawatch.ingest.run;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import sun.misc.Signal;

/**
 * Passes the signals that stop a job (SIGTERM from Slurm and Kubernetes, SIGINT, SIGHUP) on to the
 * child instead of letting them end `run` first: the child decides how to stop, and `run` stays to
 * record its exit. SIGQUIT is the JVM's own (a thread dump) and cannot be taken over by Java code;
 * from a terminal it reaches the child directly, as the child shares `run`'s process group.
 */
public final class SignalForwarding implements AutoCloseable {
  static final List<String> FORWARDED = List.of("TERM", "INT", "HUP");

  private final List<Signal> installed = new ArrayList<>();
  private final List<sun.misc.SignalHandler> previous = new ArrayList<>();
  private final AtomicInteger forwarded = new AtomicInteger();
  private volatile int last;

  private SignalForwarding() {}

  /** Installs forwarding to {@code child}; signals the JVM refuses to share are left alone. */
  public static SignalForwarding to(ChildProcess child) {
    SignalForwarding f = new SignalForwarding();
    for (String name : FORWARDED) {
      Signal s = new Signal(name);
      try {
        f.previous.add(
            Signal.handle(
                s,
                sig -> {
                  f.last = sig.getNumber();
                  f.forwarded.incrementAndGet();
                  child.signal(sig.getNumber());
                }));
        f.installed.add(s);
      } catch (IllegalArgumentException e) {
        // the JVM runs with -Xrs or owns this signal: leave its default
      }
    }
    return f;
  }

  /** Signals passed on so far. */
  public int forwarded() {
    return forwarded.get();
  }

  /** The last signal passed on, or 0. */
  public int last() {
    return last;
  }

  @Override
  public void close() {
    for (int i = 0; i < installed.size(); i++) {
      Signal.handle(installed.get(i), previous.get(i));
    }
  }
}
