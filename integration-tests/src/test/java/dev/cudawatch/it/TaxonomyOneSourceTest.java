package dev.cudawatch.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.cudawatch.alerts.AlertsSettings;
import dev.cudawatch.alerts.metrics.AlertsMetrics;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.offline.OfflineClassifier;
import dev.cudawatch.diagnosis.taxonomy.IncidentClass;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.diagnosis.taxonomy.XidInfo;
import dev.cudawatch.diagnosis.taxonomy.XidRole;
import dev.cudawatch.processor.functions.CorrelateXid;
import dev.cudawatch.processor.functions.XidVerdicts;
import dev.cudawatch.processor.rules.RuleSet;
import dev.cudawatch.processor.rules.RuleSpec;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * taxonomy.yaml is the one source: every Xid of its catalog, classified from a kernel-log line,
 * gets the severity and suspect its entry states, gives the correlation verdict its entry states,
 * and is counted by the alerts metrics under those labels; the lemon-GPU score and rule count
 * exactly the classes it marks, and the Xid correlation takes exactly the classes it names.
 */
class TaxonomyOneSourceTest {
  private static final Taxonomy TAXONOMY = Taxonomy.builtIn();
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");
  private static final OfflineClassifier CLASSIFIER =
      new OfflineClassifier(Catalog.builtIn(), Clock.fixed(T0, ZoneOffset.UTC));

  @Test
  void everyXidOfTheCatalogFlowsFromTheFileToTheCorrelationAndTheMetrics() throws IOException {
    AlertsMetrics metrics = new AlertsMetrics(AlertsSettings.defaults().metricLimits());
    Map<String, Integer> expectedSeries = new TreeMap<>();
    IncidentClass xidClass = TAXONOMY.get(XidVerdicts.xidClass());
    for (XidInfo x : TAXONOMY.xids()) {
      String line =
          "Nov 22 03:00:00 node-1 kernel: NVRM: Xid (PCI:0000:3b:00): "
              + x.xid()
              + ", pid=4242, name=python, test";
      List<Incident> found =
          CLASSIFIER.classify(
              new ByteArrayInputStream(line.getBytes(StandardCharsets.UTF_8)), "kern.log", null);
      assertEquals(1, found.size(), "Xid " + x.xid());
      Incident i = found.get(0);
      assertEquals(xidClass.id(), i.incidentClass());
      String suspect =
          switch (x.verdict()) {
            case INFORMATIONAL -> xidClass.suspect();
            default -> x.verdict().id();
          };
      assertEquals(x.severity(), i.severity(), "severity of Xid " + x.xid());
      assertEquals(suspect, i.suspect(), "suspect of Xid " + x.xid());

      String verdict =
          switch (x.verdict()) {
            case APPLICATION -> CorrelateXid.APPLICATION_FAULT;
            case HARDWARE -> CorrelateXid.HARDWARE_SUSPECT;
            case DRIVER -> CorrelateXid.DRIVER_SUSPECT;
            case INFORMATIONAL -> null;
          };
      assertEquals(verdict, XidVerdicts.verdict(List.of(x.xid())), "verdict of Xid " + x.xid());

      metrics.incident(onNode(i, "node-1", "job-" + x.xid(), 0), T0);
      expectedSeries.merge(
          "cudawatch_incidents_total{class=\"gpu_xid\",host=\"node-1\",severity=\""
              + x.severity()
              + "\",suspect=\""
              + suspect
              + "\"}",
          1,
          Integer::sum);
    }
    String scraped = scrape(metrics);
    Map<String, Integer> actual = new TreeMap<>();
    for (String l : scraped.lines().toList()) {
      if (l.startsWith("cudawatch_incidents_total{class=\"gpu_xid\"")) {
        int sp = l.lastIndexOf(' ');
        actual.put(l.substring(0, sp), (int) Double.parseDouble(l.substring(sp + 1)));
      }
    }
    assertEquals(expectedSeries, actual);
  }

  @Test
  void theLemonScoreAndTheLemonRuleCountExactlyTheClassesTheFileMarks() throws IOException {
    Set<String> scored = new HashSet<>();
    for (IncidentClass c : TAXONOMY.classes()) {
      AlertsMetrics metrics = new AlertsMetrics(AlertsSettings.defaults().metricLimits());
      for (String job : List.of("job-a", "job-b")) {
        metrics.incident(onNode(incident(c.id()), "node-1", job, 3), T0);
      }
      if (scrape(metrics)
          .lines()
          .anyMatch(
              l ->
                  l.startsWith("cudawatch_gpu_lemon_score{")
                      && l.contains("gpu=\"3\"")
                      && l.endsWith(" 2.0"))) {
        scored.add(c.id());
      }
    }
    assertEquals(TAXONOMY.lemonClasses(), scored);

    RuleSpec lemon =
        RuleSet.load(Map.of()).rules().stream()
            .filter(r -> r.name().equals("LemonGpu"))
            .findFirst()
            .orElseThrow();
    assertEquals(TAXONOMY.lemonClasses(), Set.copyOf(lemon.classes()));
  }

  @Test
  void theXidCorrelationJoinsExactlyTheClassesTheFileNames() {
    for (IncidentClass c : TAXONOMY.classes()) {
      Incident i = onNode(incident(c.id()), "node-1", "job-a", 0);
      assertEquals(
          c.xidCorrelation() != XidRole.NONE, CorrelateXid.relevant(i), "correlation of " + c.id());
    }
  }

  private static Incident incident(String cls) {
    IncidentClass c = TAXONOMY.get(cls);
    return Incident.builder("id-" + cls, cls)
        .severity(c.severity())
        .suspect(c.suspect())
        .summary(c.title())
        .source("/logs/x.log")
        .line(1)
        .eventTime(T0)
        .detectedTime(T0)
        .build();
  }

  /** The incident as it arrives from a node: host, job and GPU known. */
  private static Incident onNode(Incident i, String host, String job, long gpu) {
    Map<String, Object> f = new LinkedHashMap<>(i.fields());
    f.put("gpu", gpu);
    return Incident.builder(i.id() + "@" + job, i.incidentClass())
        .severity(i.severity())
        .suspect(i.suspect())
        .fields(f)
        .summary(i.summary())
        .host(host)
        .job(job)
        .source(i.source())
        .line(i.line())
        .eventTime(T0)
        .detectedTime(T0)
        .build();
  }

  private static String scrape(AlertsMetrics m) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.builder()
        .setIncludeCreatedTimestamps(false)
        .build()
        .write(out, m.registry().scrape());
    return out.toString(StandardCharsets.UTF_8);
  }
}
