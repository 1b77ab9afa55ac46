package dev.cudawatch.it.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every dashboard imports into a Grafana whose Prometheus has another uid: every datasource
 * reference goes through the {@code datasource} variable, every variable a query uses is defined,
 * and rates take {@code $__rate_interval} rather than a fixed window.
 */
class DashboardImportTest {
  private static final Pattern VARIABLE = Pattern.compile("\\$\\{?(\\w+)");
  private static final Pattern RATE_WINDOW =
      Pattern.compile("(?:rate|irate)\\([^\\[]*\\[([^\\]]+)\\]");

  private static List<Path> dashboards() throws Exception {
    try (Stream<Path> s = Files.list(Repo.path("deploy/grafana/dashboards"))) {
      List<Path> out = s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
      assertFalse(out.isEmpty());
      return out;
    }
  }

  @Test
  void everyDatasourceReferenceGoesThroughTheVariable() throws Exception {
    for (Path f : dashboards()) {
      JsonNode d = new ObjectMapper().readTree(f.toFile());
      JsonNode dsVar = variable(d, "datasource");
      assertEquals("datasource", dsVar.path("type").asText(), f + ": a datasource variable");
      assertEquals("prometheus", dsVar.path("query").asText(), f.toString());
      assertTrue(d.path("__inputs").isMissingNode(), f + ": no import-time inputs needed");
      List<String> refs = new ArrayList<>();
      collect(d, "", refs);
      assertFalse(refs.isEmpty(), f.toString());
      for (String r : refs) {
        assertTrue(
            r.endsWith("=${datasource}"), f + ": a datasource not through the variable: " + r);
      }
    }
  }

  @Test
  void everyVariableAQueryUsesIsDefinedAndRatesUseTheRateInterval() throws Exception {
    for (Path f : dashboards()) {
      JsonNode d = new ObjectMapper().readTree(f.toFile());
      Set<String> defined = new HashSet<>();
      d.path("templating").path("list").forEach(v -> defined.add(v.path("name").asText()));
      for (JsonNode p : panels(d)) {
        for (JsonNode t : p.path("targets")) {
          String expr = t.path("expr").asText();
          Matcher m = VARIABLE.matcher(expr);
          while (m.find()) {
            String name = m.group(1);
            assertTrue(
                name.startsWith("__") || defined.contains(name),
                f + " / " + p.path("title").asText() + ": undefined variable $" + name);
          }
          Matcher w = RATE_WINDOW.matcher(expr);
          while (w.find()) {
            assertEquals(
                "$__rate_interval",
                w.group(1),
                f + " / " + p.path("title").asText() + ": a fixed rate window in " + expr);
          }
        }
      }
    }
  }

  private static JsonNode variable(JsonNode d, String name) {
    for (JsonNode v : d.path("templating").path("list")) {
      if (v.path("name").asText().equals(name)) {
        return v;
      }
    }
    throw new AssertionError(d.path("title").asText() + ": no variable " + name);
  }

  private static List<JsonNode> panels(JsonNode d) {
    List<JsonNode> out = new ArrayList<>();
    d.path("panels").forEach(out::add);
    d.path("panels").forEach(p -> p.path("panels").forEach(out::add)); // rows
    return out;
  }

  /** Every "datasource" anywhere (panels, targets, variables) as path=uid. */
  private static void collect(JsonNode n, String path, List<String> out) {
    if (n.isObject()) {
      n.properties()
          .forEach(
              e -> {
                if (e.getKey().equals("datasource")) {
                  JsonNode ds = e.getValue();
                  String uid = ds.isObject() ? ds.path("uid").asText() : ds.asText();
                  if (!(path.isEmpty() && ds.isMissingNode())) {
                    out.add(path + "/datasource=" + uid);
                  }
                } else {
                  collect(e.getValue(), path + "/" + e.getKey(), out);
                }
              });
    } else if (n.isArray()) {
      for (int i = 0; i < n.size(); i++) {
        collect(n.get(i), path + "[" + i + "]", out);
      }
    }
  }
}
