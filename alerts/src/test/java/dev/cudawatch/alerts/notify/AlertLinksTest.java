package dev.cudawatch.alerts.notify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Every alert links its incident page and its class's runbook, and names what it can. */
class AlertLinksTest {
  private static final Incident OOM =
      Incident.builder("run:train-7:0#12", "cuda_oom")
          .host("gpu-node-3")
          .job("train-7")
          .fields(Map.of("rank", 0, "gpu", 3))
          .nextSteps(List.of("Reduce the batch size.", "Use activation checkpointing."))
          .summary("CUDA out of memory")
          .build();
  private final AlertLinks links =
      new AlertLinks(
          "https://cw.example/",
          null,
          id -> id.equals(OOM.id()) ? Optional.of(OOM) : Optional.empty());

  private static Alert alert(Map<String, String> labels, Map<String, String> ann) {
    return new Alert(
        1, Alert.fingerprintOf(labels), Alert.State.FIRING, labels, ann, Instant.EPOCH, null);
  }

  @Test
  void anIncidentAlertLinksItsPageAndRunbookWithItsFirstStep() {
    Alert a =
        links.enrich(
            alert(
                Map.of(
                    "alertname", "GpuJobFailure",
                    "class", "cuda_oom",
                    "host", "gpu-node-3",
                    "gpu", "3",
                    "incident_id", OOM.id()),
                Map.of("summary", "OOM", "next_steps", "Reduce the batch size.\nMore.")));
    Map<String, String> ann = a.annotations();
    assertEquals("https://cw.example/incident?id=run%3Atrain-7%3A0%2312", ann.get("incident_url"));
    assertEquals("https://cw.example/taxonomy#cuda_oom", ann.get("runbook_url"));
    assertEquals("CUDA out of memory (cuda_oom)", ann.get("root_cause"));
    assertEquals("Reduce the batch size.", ann.get("next_step"));
    assertEquals("train-7", ann.get("job"), "from the incident");
    assertEquals("0", ann.get("rank"), "from the incident");
    assertEquals("gpu-node-3", ann.get("host"));
    assertEquals("3", ann.get("gpu"));
    assertEquals(Alert.fingerprintOf(a.labels()), a.fingerprint(), "labels untouched");
  }

  @Test
  void aJobFailureTakesItsRootIncidentsFactsAndStep() {
    AlertLinks docs =
        new AlertLinks("http://h:7460", "https://docs.example/taxonomy.md", id -> Optional.of(OOM));
    Map<String, String> ann =
        docs.enrich(
                alert(
                    Map.of("alertname", "JobFailure", "job", "train-7", "severity", "critical"),
                    Map.of(
                        "root_incident", OOM.id(),
                        "root_class", "cuda_oom",
                        "root_rank", "0",
                        "root_host", "gpu-node-3",
                        "root_gpu", "unknown")))
            .annotations();
    assertTrue(ann.get("incident_url").startsWith("http://h:7460/incident?id="), ann.toString());
    assertEquals("https://docs.example/taxonomy.md#cuda_oom", ann.get("runbook_url"));
    assertEquals("Reduce the batch size.", ann.get("next_step"), "the root incident's first step");
    assertEquals("3", ann.get("gpu"), "\"unknown\" gives way to the incident's GPU");
    assertEquals("0", ann.get("rank"));
  }

  @Test
  void aFleetRuleAlertLinksTheListAndNoRunbookForAnUnknownClass() {
    Alert a =
        links.enrich(
            alert(Map.of("alertname", "FleetErrorSpike", "class", "no_such_class"), Map.of()));
    assertEquals("https://cw.example/", a.annotations().get("incident_url"));
    assertFalse(a.annotations().containsKey("runbook_url"));
    assertNull(AlertLinks.incidentId(a));
  }

  /** The runbook anchor is the class id: docs/taxonomy.md has a section of that name per class. */
  @Test
  void everyClassHasItsAnchorInTheTaxonomyDoc() throws Exception {
    String doc = Files.readString(Path.of("../docs/taxonomy.md"));
    for (String id : AlertLinks.TAXONOMY.ids()) {
      assertTrue(doc.contains("\n## " + id + "\n"), "docs/taxonomy.md has no section " + id);
    }
  }
}
