package dev.cudawatch.ingest.run;

import java.util.Map;

/** Linux signal numbers and names for the signals `run` meets. */
public final class Signals {
  public static final int SIGHUP = 1;
  public static final int SIGINT = 2;
  public static final int SIGQUIT = 3;
  public static final int SIGKILL = 9;
  public static final int SIGTERM = 15;

  private static final Map<Integer, String> NAMES =
      Map.ofEntries(
          Map.entry(1, "SIGHUP"),
          Map.entry(2, "SIGINT"),
          Map.entry(3, "SIGQUIT"),
          Map.entry(4, "SIGILL"),
          Map.entry(5, "SIGTRAP"),
          Map.entry(6, "SIGABRT"),
          Map.entry(7, "SIGBUS"),
          Map.entry(8, "SIGFPE"),
          Map.entry(9, "SIGKILL"),
          Map.entry(10, "SIGUSR1"),
          Map.entry(11, "SIGSEGV"),
          Map.entry(12, "SIGUSR2"),
          Map.entry(13, "SIGPIPE"),
          Map.entry(14, "SIGALRM"),
          Map.entry(15, "SIGTERM"),
          Map.entry(24, "SIGXCPU"),
          Map.entry(25, "SIGXFSZ"));

  private Signals() {}

  public static String name(int signal) {
    return NAMES.getOrDefault(signal, "signal " + signal);
  }
}
