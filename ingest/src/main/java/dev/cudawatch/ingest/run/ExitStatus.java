package dev.cudawatch.ingest.run;

/**
 * How a child process ended: an exit code, or the signal that killed it. {@code exact} is false
 * when only the shell-style code is known (128 + N can then be either).
 */
public record ExitStatus(Integer exitCode, Integer signal, boolean coreDumped, boolean exact) {

  /** From a raw {@code waitpid} status. */
  public static ExitStatus fromWaitStatus(int status) {
    int termSig = status & 0x7f;
    if (termSig == 0) {
      return new ExitStatus((status >> 8) & 0xff, null, false, true);
    }
    return new ExitStatus(null, termSig, (status & 0x80) != 0, true);
  }

  /** From a shell-style code alone (Java's Process API): 129-255 may be exits or signals. */
  public static ExitStatus fromShellCode(int code) {
    return new ExitStatus(code, null, false, false);
  }

  /** The status a shell would report: the exit code, or 128 + the signal. */
  public int shellCode() {
    return signal != null ? 128 + signal : exitCode;
  }

  /** For the exit record: {@code exit_code=7}, {@code signal=9 (SIGKILL)}. */
  public String describe() {
    if (signal != null) {
      return "signal="
          + signal
          + " ("
          + Signals.name(signal)
          + ")"
          + (coreDumped ? " core dumped" : "");
    }
    return exact || exitCode <= 128
        ? "exit_code=" + exitCode
        : "exit_code=" + exitCode + " (an exit, or signal " + (exitCode - 128) + ")";
  }
}
