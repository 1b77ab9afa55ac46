package dev.cudawatch.ingest.run;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.offline.OfflineClassifier;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.time.Clock;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The root cause of a failed job, from what `run` kept of its output ({@link OutputTail}), by the
 * engine of {@code cudawatch classify}. Each stream is classified on its own (interleaved chunks of
 * stdout and stderr would cut lines); the root incident that matters most wins.
 */
public final class RunDiagnosis {
  /** The root cause, in which stream and at which of its lines (1-based, the job's numbering). */
  public record Finding(Incident incident, String stream, long line) {}

  /** Most severe first; an {@code info} incident does not explain a failure. */
  private static final List<String> SEVERITIES = List.of("critical", "error", "warning");

  private RunDiagnosis() {}

  /**
   * @param windows each stream's kept output, by stream name, stderr first when it should win ties
   */
  public static Optional<Finding> diagnose(Map<String, OutputTail.Window> windows)
      throws IOException {
    OfflineClassifier classifier = new OfflineClassifier(Catalog.builtIn(), Clock.systemUTC());
    Finding best = null;
    for (Map.Entry<String, OutputTail.Window> w : windows.entrySet()) {
      List<Incident> found =
          classifier.classify(
              new ByteArrayInputStream(w.getValue().bytes()), "run:" + w.getKey(), null);
      Optional<Incident> root =
          found.stream()
              .filter(Incident::root)
              .filter(i -> SEVERITIES.contains(i.severity()))
              .min(
                  Comparator.comparingInt((Incident i) -> SEVERITIES.indexOf(i.severity()))
                      .thenComparingLong(Incident::line));
      if (root.isPresent()
          && (best == null
              || SEVERITIES.indexOf(root.get().severity())
                  < SEVERITIES.indexOf(best.incident().severity()))) {
        best =
            new Finding(root.get(), w.getKey(), w.getValue().firstLine() + root.get().line() - 1);
      }
    }
    return Optional.ofNullable(best);
  }

  /**
   * What `run` prints: the root cause (class and summary), its line, the first next steps and, when
   * the alerts service is known, where the job's incidents are.
   */
  public static List<String> report(Finding f, ExitStatus status, String incidentsLink) {
    Incident i = f.incident();
    List<String> out = new java.util.ArrayList<>();
    out.add("cudawatch run: the job failed (" + status.describe() + "); cudawatch's diagnosis:");
    out.add("  root cause: " + i.incidentClass() + ": " + cut(i.summary()));
    String text = i.excerpt().isEmpty() ? null : i.excerpt().get(0);
    out.add("  line " + f.line() + " of " + f.stream() + (text == null ? "" : ": " + cut(text)));
    for (String step : i.nextSteps().subList(0, Math.min(2, i.nextSteps().size()))) {
      out.add("  next: " + cut(step));
    }
    if (incidentsLink != null) {
      out.add("  incidents: " + incidentsLink);
    }
    return out;
  }

  /** The one-line verdict for places with room for one ({@code scontrol}'s Comment). */
  public static String verdict(Finding f) {
    return cut("cudawatch: " + f.incident().incidentClass() + ": " + f.incident().summary());
  }

  /** One screen line at most, no control characters (a job's text may carry escapes). */
  static String cut(String s) {
    String t = s == null ? "" : s.replaceAll("\\p{Cntrl}", " ").strip();
    return t.length() <= 200 ? t : t.substring(0, 199) + "…";
  }
}
