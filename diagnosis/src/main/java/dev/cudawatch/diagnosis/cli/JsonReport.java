package dev.cudawatch.diagnosis.cli;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.diagnosis.jobs.Culprit;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code --json}: one object per incident per line, in the order of each incident's first line. */
final class JsonReport implements Report {
  private final PrintStream out;

  JsonReport(PrintStream out) {
    this.out = out;
  }

  /** Above this many incidents a file's lines are rendered on every core (a large log's tail). */
  private static final int PARALLEL_FROM = 256;

  /** Lines rendered while the file was still being read, by incident (identity). */
  private final Map<Incident, byte[]> early = new IdentityHashMap<>();

  @Override
  public void settled(String file, List<Incident> incidents) {
    for (Incident i : incidents) {
      early.put(i, line(file, i));
    }
  }

  @Override
  public void file(String file, List<Incident> incidents) {
    var stream =
        incidents.size() >= PARALLEL_FROM ? incidents.parallelStream() : incidents.stream();
    // rendered in the list's order (toList keeps it); the map is only read while in parallel
    List<byte[]> lines =
        stream
            .map(
                i -> {
                  byte[] b = early.get(i);
                  return b != null ? b : line(file, i);
                })
            .toList();
    early.clear();
    for (byte[] line : lines) {
      out.write(line, 0, line.length);
    }
  }

  /** With {@code --job}: one more line, the job's root cause. */
  @Override
  public void job(String name, Culprit c, int incidents) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("job", name);
    m.put("cause", c.cause().id());
    m.put("ranks", c.ranks());
    m.put("host", c.root().host());
    m.put("gpu", c.gpu());
    m.put("gpu_inferred", c.gpuInferred());
    m.put("root_id", c.root().id());
    m.put("root_class", c.root().incidentClass());
    m.put("summary", c.headline());
    m.put("evidence", c.evidence());
    m.put("next_steps", c.cause().nextSteps());
    m.put("incidents", incidents);
    byte[] b = (WireJson.toJson(m) + "\n").getBytes(StandardCharsets.UTF_8);
    out.write(b, 0, b.length);
  }

  private static byte[] line(String file, Incident i) {
    return (WireJson.toJson(toJson(file, i)) + "\n").getBytes(StandardCharsets.UTF_8);
  }

  static Map<String, Object> toJson(String file, Incident i) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("file", file);
    m.put("line", i.line());
    m.put("class", i.incidentClass());
    m.put("root", i.root());
    if (i.rootId() != null) {
      m.put("root_id", i.rootId());
    }
    m.put("id", i.id());
    m.put("count", i.count());
    m.put("severity", i.severity());
    m.put("suspect", i.suspect());
    m.put("signature", i.signature());
    m.put("fields", i.fields());
    m.put("summary", i.summary());
    m.put("explanation", i.explanation());
    m.put("next_steps", i.nextSteps());
    return m;
  }
}
