package dev.cudawatch.ingest.run;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;

/** The wrapped command: its output pipes, its end, and a way to pass it a signal. */
public interface ChildProcess {
  long pid();

  InputStream stdout();

  InputStream stderr();

  /** Blocks until the child ends. */
  ExitStatus waitFor() throws InterruptedException;

  /** Sends {@code signal} to the child; false when it could not be sent. */
  boolean signal(int signal);

  /**
   * Starts {@code command} with this process's stdin, working directory and environment: through
   * posix_spawn where the C library can be reached (exact exit status and any signal), through
   * Java's process API otherwise.
   */
  static ChildProcess start(List<String> command) throws IOException {
    return start(command, Map.of());
  }

  /**
   * As above, with {@code added} variables set (replacing any of the same name) in the child's
   * environment; the rest of it is this process's, unchanged.
   */
  static ChildProcess start(List<String> command, Map<String, String> added) throws IOException {
    if (PosixChild.available()) {
      return PosixChild.start(command, added);
    }
    return JavaChild.start(command, added);
  }
}
