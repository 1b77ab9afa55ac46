package dev.cudawatch.ingest.attribution;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A log path pattern in sbatch's {@code --output} notation that names the job: {@code %j} (job id),
 * {@code %A} and {@code %a} (array job and task: the job is {@code A_a}), {@code %x} (job name),
 * {@code %u} (user), {@code %N} (node), {@code %t}/{@code %s} (task, step), {@code %%}; plus {@code
 * *} (within a path element) and {@code **} (any depth). Without a {@code /} it matches the file
 * name; with one, the end of the path (the whole path when it starts with {@code /}). The regular
 * expression is built from quoted literals and fixed wildcards only, so a configured pattern cannot
 * make matching costly.
 */
public final class SlurmPathPattern {
  private final String text;
  private final Pattern regex;
  private final boolean array;

  private SlurmPathPattern(String text, Pattern regex, boolean array) {
    this.text = text;
    this.regex = regex;
    this.array = array;
  }

  /** Compiles {@code pattern}; a clear error for one that cannot name a job. */
  public static SlurmPathPattern compile(String pattern) {
    StringBuilder re = new StringBuilder(pattern.startsWith("/") ? "" : "(?:^|.*/)");
    StringBuilder literal = new StringBuilder();
    boolean job = false;
    boolean arrayJob = false;
    boolean arrayTask = false;
    for (int i = 0; i < pattern.length(); i++) {
      char c = pattern.charAt(i);
      String wild = null;
      if (c == '%' && i + 1 < pattern.length()) {
        char k = pattern.charAt(++i);
        switch (k) {
          case 'j' -> {
            wild = job ? "\\k<j>" : "(?<j>[0-9]+)";
            job = true;
          }
          case 'A' -> {
            wild = arrayJob ? "\\k<A>" : "(?<A>[0-9]+)";
            arrayJob = true;
          }
          case 'a' -> {
            wild = arrayTask ? "\\k<a>" : "(?<a>[0-9]+)";
            arrayTask = true;
          }
          case 'x', 'u', 'N' -> wild = "[^/]+";
          case 't', 's', 'n' -> wild = "[0-9]+";
          case '%' -> literal.append('%');
          default ->
              throw new IllegalArgumentException(
                  "slurm path pattern " + pattern + ": unknown %" + k);
        }
      } else if (c == '*') {
        boolean deep = i + 1 < pattern.length() && pattern.charAt(i + 1) == '*';
        wild = deep ? ".*" : "[^/]*";
        i += deep ? 1 : 0;
      } else {
        literal.append(c);
      }
      if (wild != null) {
        flush(re, literal);
        re.append(wild);
      }
    }
    flush(re, literal);
    if (!job && !(arrayJob && arrayTask)) {
      throw new IllegalArgumentException(
          "slurm path pattern " + pattern + ": needs %j (or %A and %a) to name the job");
    }
    return new SlurmPathPattern(pattern, Pattern.compile(re.toString()), !job);
  }

  private static void flush(StringBuilder re, StringBuilder literal) {
    if (literal.length() > 0) {
      re.append(Pattern.quote(literal.toString()));
      literal.setLength(0);
    }
  }

  /** The job id that {@code path} names through this pattern, or null. */
  public String jobOf(String path) {
    Matcher m = regex.matcher(path);
    if (!m.matches()) {
      return null;
    }
    return array ? m.group("A") + "_" + m.group("a") : m.group("j");
  }

  @Override
  public String toString() {
    return text;
  }
}
