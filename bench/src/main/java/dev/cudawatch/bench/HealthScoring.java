package dev.cudawatch.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Scores the simulator's health scenarios: each injected slow rank (by job and rank, with host and
 * GPU checked), job slowdown (by job, with its change point) and repair-ladder escalation (by host
 * and PCI address), found or missed, every other finding of those kinds spurious, and the detection
 * delay: event time of the finding minus the injection's. {@link Scoring} leaves these to it.
 */
final class HealthScoring {
  /** Incident classes and alert names scored here, not in {@link Scoring}. */
  static final Set<String> OWNED =
      Set.of("slow_rank", "job_slowdown", "SlowRank", "JobSlowdown", "GpuRepairLadder");

  private HealthScoring() {}

  static boolean owns(JsonNode truth) {
    return OWNED.contains(truth.get("name").asText());
  }

  /** One row per kind: injected, found, missed, spurious, delays. */
  static String report(List<JsonNode> truth, List<Incident> incidents, List<Alert> alerts) {
    List<JsonNode> slow = new ArrayList<>();
    List<JsonNode> slowdowns = new ArrayList<>();
    List<JsonNode> ladders = new ArrayList<>();
    for (JsonNode e : truth) {
      switch (e.get("name").asText()) {
        case "slow_rank" -> slow.add(e);
        case "job_slowdown" -> slowdowns.add(e);
        case "GpuRepairLadder" -> ladders.add(e);
        default -> {}
      }
    }
    StringBuilder md = new StringBuilder();
    md.append("| finding | injected | found | missed | spurious | detection delay |\n");
    md.append("|---|---:|---:|---:|---:|---|\n");
    List<String> notes = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    List<Incident> slowFound = new ArrayList<>();
    List<Incident> downFound = new ArrayList<>();
    for (Incident i : incidents) {
      if (i.verdict() != null || !seen.add(i.id())) {
        continue; // the same finding again
      }
      if (i.incidentClass().equals("slow_rank")) {
        slowFound.add(i);
      } else if (i.incidentClass().equals("job_slowdown")) {
        downFound.add(i);
      }
    }
    md.append(
        match(
            "slow_rank",
            slow,
            slowFound,
            (e, i) ->
                e.at("/labels/job").asText().equals(i.job())
                    && e.at("/labels/rank").asText().equals(String.valueOf(i.fields().get("rank")))
                    && e.at("/labels/host").asText().equals(i.host())
                    && e.at("/labels/gpu").asText().equals(String.valueOf(i.fields().get("gpu"))),
            i -> i.eventTime(),
            notes));
    md.append(
        match(
            "job_slowdown",
            slowdowns,
            downFound,
            (e, i) -> e.at("/labels/job").asText().equals(i.job()),
            i -> i.eventTime(),
            notes));
    List<Alert> fired = new ArrayList<>();
    Set<String> fingerprints = new HashSet<>();
    for (Alert a : alerts) {
      if (a.state() == Alert.State.FIRING
          && a.alertName().equals("GpuRepairLadder")
          && fingerprints.add(a.fingerprint() + "|" + a.annotations().get("ladder_level"))) {
        fired.add(a);
      }
    }
    md.append(
        match(
            "repair ladder escalation",
            ladders,
            fired,
            (e, a) ->
                e.at("/labels/host").asText().equals(a.labels().get("host"))
                    && e.at("/labels/pci").asText().equals(a.labels().get("pci")),
            Alert::startsAt,
            notes));
    for (Incident i : downFound) {
      notes.add("job_slowdown " + i.job() + ": change point " + i.fields().get("change_point"));
    }
    md.append('\n');
    for (String n : notes) {
      md.append("- ").append(n).append('\n');
    }
    return md.toString();
  }

  private static <T> String match(
      String name,
      List<JsonNode> expected,
      List<T> found,
      java.util.function.BiPredicate<JsonNode, T> same,
      java.util.function.Function<T, Instant> when,
      List<String> notes) {
    List<T> left = new ArrayList<>(found);
    List<String> delays = new ArrayList<>();
    int hit = 0;
    for (JsonNode e : expected) {
      T m = null;
      for (T f : left) {
        if (same.test(e, f)) {
          m = f;
          break;
        }
      }
      if (m == null) {
        notes.add("missed " + name + " " + e.get("labels"));
        continue;
      }
      left.remove(m);
      hit++;
      long delay = when.apply(m).toEpochMilli() - e.get("at_millis").asLong();
      delays.add(String.format(Locale.ROOT, "%.1f s", delay / 1000.0));
    }
    for (T f : left) {
      notes.add("spurious " + name + ": " + f);
    }
    return String.format(
        Locale.ROOT,
        "| %s | %d | %d | %d | %d | %s |%n",
        name,
        expected.size(),
        hit,
        expected.size() - hit,
        left.size(),
        delays.isEmpty() ? "–" : String.join(", ", delays));
  }
}
