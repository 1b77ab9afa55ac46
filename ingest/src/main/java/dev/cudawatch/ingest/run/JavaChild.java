package dev.cudawatch.ingest.run;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;

/**
 * The fallback child, through Java's process API: its exit status is shell-style only, and only
 * SIGTERM and SIGKILL can be sent without a helper; other signals go through {@code kill}.
 */
final class JavaChild implements ChildProcess {
  private final Process p;

  private JavaChild(Process p) {
    this.p = p;
  }

  static JavaChild start(List<String> command, Map<String, String> added) throws IOException {
    ProcessBuilder b = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.INHERIT);
    if (!added.isEmpty()) {
      b.environment().putAll(added); // a copy of ours: untouched unless something is added
    }
    return new JavaChild(b.start());
  }

  @Override
  public long pid() {
    return p.pid();
  }

  @Override
  public InputStream stdout() {
    return p.getInputStream();
  }

  @Override
  public InputStream stderr() {
    return p.getErrorStream();
  }

  @Override
  public ExitStatus waitFor() throws InterruptedException {
    return ExitStatus.fromShellCode(p.waitFor());
  }

  @Override
  public boolean signal(int signal) {
    if (signal == Signals.SIGTERM) {
      return p.toHandle().destroy();
    }
    if (signal == Signals.SIGKILL) {
      return p.toHandle().destroyForcibly();
    }
    try {
      return new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid()))
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start()
              .waitFor()
          == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
