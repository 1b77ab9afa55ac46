package dev.cudawatch.ingest.run;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Passes the signals that stop a job (SIGTERM from Slurm and Kubernetes, SIGINT, SIGHUP) on to the
 * child instead of letting them end `run` first: the child decides how to stop, and `run` stays to
 * record its exit. SIGQUIT is the JVM's own (a thread dump) and cannot be taken over by Java code;
 * from a terminal it reaches the child directly, as the child shares `run`'s process group.
 *
 * <p>{@code sun.misc.Signal} (module jdk.unsupported) is Java 17's only way to take a signal. It is
 * reached through method handles: javac warns on every direct use of it, warnings that no
 * {@code @SuppressWarnings} silences, and the build fails on any warning.
 */
public final class SignalForwarding implements AutoCloseable {
  static final List<String> FORWARDED = List.of("TERM", "INT", "HUP");

  private final List<Object> installed = new ArrayList<>();
  private final List<Object> previous = new ArrayList<>();
  private final AtomicInteger forwarded = new AtomicInteger();
  private volatile int last;

  private SignalForwarding() {}

  /** Installs forwarding to {@code child}; signals the JVM refuses to share are left alone. */
  public static SignalForwarding to(ChildProcess child) {
    SignalForwarding f = new SignalForwarding();
    for (String name : FORWARDED) {
      Object s = Api.signal(name);
      try {
        f.previous.add(
            Api.handle(
                s,
                sig -> {
                  f.last = sig;
                  f.forwarded.incrementAndGet();
                  child.signal(sig);
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
      Api.restore(installed.get(i), previous.get(i));
    }
  }

  /** {@code sun.misc.Signal} and {@code sun.misc.SignalHandler}, looked up once. */
  private static final class Api {
    private static final Class<?> SIGNAL;
    private static final Class<?> HANDLER;
    private static final MethodHandle NEW_SIGNAL;
    private static final MethodHandle HANDLE;
    private static final MethodHandle NUMBER;

    static {
      try {
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        SIGNAL = Class.forName("sun.misc.Signal");
        HANDLER = Class.forName("sun.misc.SignalHandler");
        NEW_SIGNAL =
            lookup.findConstructor(SIGNAL, MethodType.methodType(void.class, String.class));
        HANDLE =
            lookup.findStatic(SIGNAL, "handle", MethodType.methodType(HANDLER, SIGNAL, HANDLER));
        NUMBER = lookup.findVirtual(SIGNAL, "getNumber", MethodType.methodType(int.class));
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    static Object signal(String name) {
      try {
        return NEW_SIGNAL.invoke(name);
      } catch (RuntimeException | Error e) {
        throw e;
      } catch (Throwable e) {
        throw new IllegalStateException(e);
      }
    }

    /** Installs {@code onSignal} (given the signal's number); returns the previous handler. */
    static Object handle(Object signal, java.util.function.IntConsumer onSignal) {
      Object handler =
          Proxy.newProxyInstance(
              SignalForwarding.class.getClassLoader(),
              new Class<?>[] {HANDLER},
              (proxy, method, args) -> {
                if (method.getName().equals("handle")) {
                  onSignal.accept((int) NUMBER.invoke(args[0]));
                  return null;
                }
                return switch (method.getName()) {
                  case "hashCode" -> System.identityHashCode(proxy);
                  case "equals" -> proxy == args[0];
                  case "toString" -> "cudawatch signal forwarding";
                  default -> throw new UnsupportedOperationException(method.getName());
                };
              });
      return restore(signal, handler);
    }

    static Object restore(Object signal, Object handler) {
      try {
        return HANDLE.invoke(signal, handler);
      } catch (RuntimeException | Error e) {
        throw e;
      } catch (Throwable e) {
        throw new IllegalStateException(e);
      }
    }
  }
}
