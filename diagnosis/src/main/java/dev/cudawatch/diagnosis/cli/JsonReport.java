package dev.cudawatch.diagnosis.cli;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code --json}: one object per incident per line, in the order of each incident's first line. */
final class JsonReport implements Report {
  private final PrintStream out;

  JsonReport(PrintStream out) {
    this.out = out;
  }

  @Override
  public void file(String file, List<Incident> incidents) {
    for (Incident i : incidents) {
      out.println(WireJson.toJson(toJson(file, i)));
    }
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
