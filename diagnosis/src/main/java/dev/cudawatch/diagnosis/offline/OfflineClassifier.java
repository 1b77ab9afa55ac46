package dev.cudawatch.diagnosis.offline;

import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.advice.Advisor;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.engine.ClassifierSettings;
import dev.cudawatch.diagnosis.engine.LineNormalizer;
import dev.cudawatch.diagnosis.engine.StreamClassifier;
import dev.cudawatch.diagnosis.engine.StreamContext;
import dev.cudawatch.diagnosis.engine.StreamState;
import dev.cudawatch.diagnosis.trend.MemoryTrendDetector;
import dev.cudawatch.diagnosis.trend.TrendIncidents;
import dev.cudawatch.diagnosis.trend.TrendSettings;
import java.io.IOException;
import java.io.InputStream;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongConsumer;

/**
 * Classifies one whole log (a file or stdin): what {@code bin/cudawatch classify} runs. An
 * nvidia-smi CSV's zone-less timestamps are read in the clock's zone (the command passes the
 * machine's own: such files are usually read where they were written).
 */
public final class OfflineClassifier {
  private final Catalog catalog;
  private final Advisor advisor;
  private final ClassifierSettings settings;
  private final TrendSettings trendSettings;
  private final Clock clock;

  public OfflineClassifier(Catalog catalog, Clock clock) {
    this(catalog, ClassifierSettings.defaults(), TrendSettings.defaults(), clock);
  }

  public OfflineClassifier(
      Catalog catalog, ClassifierSettings settings, TrendSettings trendSettings, Clock clock) {
    this.catalog = catalog;
    this.advisor = new Advisor(catalog.taxonomy());
    this.settings = settings;
    this.trendSettings = trendSettings;
    this.clock = clock;
  }

  Advisor advisor() {
    return advisor;
  }

  /**
   * @param in the log's bytes
   * @param source the name reported as the incidents' file
   * @param progress told the characters read so far, now and then
   * @return the incidents in the order of their first line
   */
  public List<Incident> classify(InputStream in, String source, LongConsumer progress)
      throws IOException {
    List<Incident> out = new ArrayList<>();
    try (LineReader reader = new LineReader(in, LineNormalizer.MAX_LINE_CHARS)) {
      String first = reader.next();
      // nvidia-smi -q starts with a blank line before its header
      List<String> blank = new ArrayList<>();
      while (first != null && first.isBlank() && blank.size() < 8) {
        blank.add(first);
        first = reader.next();
      }
      if (first == null) {
        return out;
      }
      if (NvidiaSmiReport.isHeader(first)) {
        return report(reader, blank.size() + 1, source);
      }
      if (blank.isEmpty() && NvidiaSmiCsv.isHeader(first)) {
        Optional<NvidiaSmiCsv> csv = NvidiaSmiCsv.fromHeader(first, clock.getZone());
        if (csv.isPresent()) {
          return trends(reader, csv.get(), source);
        }
      }
      StreamClassifier sc =
          new StreamClassifier(
              catalog, advisor, new StreamContext(null, null, source), settings, new StreamState());
      for (String line : blank) {
        out.addAll(sc.accept(line, null, clock.instant()));
      }
      long n = 0;
      for (String line = first; line != null; line = reader.next()) {
        out.addAll(sc.accept(line, null, clock.instant()));
        if ((++n & 0xFFFF) == 0 && progress != null) {
          progress.accept(reader.charsRead());
        }
      }
      out.addAll(sc.flush(clock.instant()));
    }
    out.sort(Comparator.comparingLong(Incident::line));
    return out;
  }

  /** An nvidia-smi -q report: its GPUs' ECC, retired-page and row-remapping health. */
  private List<Incident> report(LineReader reader, long headerLine, String source)
      throws IOException {
    NvidiaSmiReport report = new NvidiaSmiReport(advisor, source, clock.instant());
    long n = headerLine;
    for (String line = reader.next(); line != null; line = reader.next()) {
      report.accept(line, ++n);
    }
    return report.finish();
  }

  private List<Incident> trends(LineReader reader, NvidiaSmiCsv csv, String source)
      throws IOException {
    Map<Integer, MemoryTrendDetector> detectors = new HashMap<>();
    Set<Integer> reported = new HashSet<>();
    List<Incident> out = new ArrayList<>();
    long line = 1;
    for (String row = reader.next(); row != null; row = reader.next()) {
      line++;
      var sample = csv.parse(row);
      if (sample.isEmpty() || reported.contains(sample.get().gpu())) {
        continue;
      }
      var trend =
          detectors
              .computeIfAbsent(sample.get().gpu(), g -> new MemoryTrendDetector(trendSettings))
              .add(sample.get());
      if (trend.isPresent()) {
        reported.add(sample.get().gpu());
        out.add(TrendIncidents.of(trend.get(), advisor, null, source, line, clock.instant()));
      }
    }
    return out;
  }
}
