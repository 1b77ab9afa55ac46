package dev.cudawatch.alerts.notify;

import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.taxonomy.IncidentClass;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * What a person needs to act on an alert, as annotations every receiver and template can use:
 * {@code incident_url} (the incident page), {@code runbook_url} (the class's section of the
 * taxonomy), {@code root_cause}, {@code next_step}, and {@code job}, {@code rank}, {@code host},
 * {@code gpu} wherever the alert's labels, its own annotations or its incident name them. The
 * processor's alerts name the incident three ways ({@code incident_id} label or annotation, a job
 * failure's {@code root_incident}); this gathers them in one place. Annotations only: labels, and
 * so fingerprints and routes, stay as they are.
 */
final class AlertLinks {
  static final Taxonomy TAXONOMY = Taxonomy.builtIn();
  private static final int MAX_STEP = 500;

  private final String externalUrl;
  private final String runbookBase;
  private final Function<String, Optional<Incident>> incidents;

  /**
   * @param externalUrl this service's base URL, without a trailing slash
   * @param runbookBase the taxonomy's page; null for this service's {@code /taxonomy}
   * @param incidents the incidents the service holds, by id (empty when not, or no longer, held)
   */
  AlertLinks(
      String externalUrl, String runbookBase, Function<String, Optional<Incident>> incidents) {
    this.externalUrl = externalUrl.replaceAll("/+$", "");
    this.runbookBase = runbookBase == null ? this.externalUrl + "/taxonomy" : runbookBase;
    this.incidents = incidents;
  }

  String externalUrl() {
    return externalUrl;
  }

  /** The incident page of this id. */
  String incidentUrl(String id) {
    return externalUrl + "/incident?id=" + URLEncoder.encode(id, StandardCharsets.UTF_8);
  }

  /** The alert's incident, or null when it is about no one incident (a fleet rule's count). */
  static String incidentId(Alert a) {
    String id = a.labels().get("incident_id");
    if (id == null) {
      id = a.annotations().get("incident_id");
    }
    if (id == null) {
      id = a.annotations().get("root_incident");
    }
    return id == null || id.isBlank() ? null : id;
  }

  /** The link for an alert: its incident's page, else the list of incidents. */
  String link(Alert a) {
    String id = incidentId(a);
    return id == null ? externalUrl + "/" : incidentUrl(id);
  }

  /** The alert with the annotations above added (its own values win where it has them). */
  Alert enrich(Alert a) {
    Map<String, String> ann = new LinkedHashMap<>(a.annotations());
    String id = incidentId(a);
    Incident i = id == null ? null : incidents.apply(id).orElse(null);
    ann.put("incident_url", link(a));
    String cls =
        first(a.labels().get("class"), ann.get("root_class"), i == null ? null : i.incidentClass());
    Optional<IncidentClass> known = cls == null ? Optional.empty() : TAXONOMY.find(cls);
    if (known.isPresent()) {
      ann.put("runbook_url", runbookBase + "#" + cls);
      ann.putIfAbsent("root_cause", known.get().title() + " (" + cls + ")");
    }
    putIfKnown(ann, "job", a.labels().get("job"), i == null ? null : i.job());
    putIfKnown(ann, "rank", a.labels().get("rank"), ann.get("root_rank"), field(i, "rank"));
    putIfKnown(
        ann, "host", a.labels().get("host"), ann.get("root_host"), i == null ? null : i.host());
    putIfKnown(ann, "gpu", a.labels().get("gpu"), ann.get("root_gpu"), field(i, "gpu"));
    String steps = ann.get("next_steps");
    String step =
        steps != null && !steps.isBlank()
            ? steps.strip().lines().findFirst().orElse(null)
            : i == null || i.nextSteps().isEmpty() ? null : i.nextSteps().get(0);
    if (step != null && !ann.containsKey("next_step")) {
      ann.put("next_step", step.length() > MAX_STEP ? step.substring(0, MAX_STEP) + "…" : step);
    }
    return new Alert(a.v(), a.fingerprint(), a.state(), a.labels(), ann, a.startsAt(), a.endsAt());
  }

  private static void putIfKnown(Map<String, String> ann, String key, String... candidates) {
    if (ann.containsKey(key)) {
      return;
    }
    String v = first(candidates);
    if (v != null) {
      ann.put(key, v);
    }
  }

  /** The first value that says something ("unknown" says nothing). */
  private static String first(String... values) {
    for (String v : values) {
      if (v != null && !v.isBlank() && !"unknown".equals(v)) {
        return v;
      }
    }
    return null;
  }

  private static String field(Incident i, String name) {
    Object v = i == null ? null : i.fields().get(name);
    return v == null ? null : v.toString();
  }
}
