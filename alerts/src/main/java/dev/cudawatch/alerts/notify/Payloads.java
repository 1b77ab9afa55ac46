package dev.cudawatch.alerts.notify;

import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.WireJson;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The bodies receivers expect: Alertmanager's API v2, its webhook (version 4), and Slack's. */
final class Payloads {
  /** Alertmanager's "no end" time in webhook payloads. */
  static final String ZERO_TIME = "0001-01-01T00:00:00Z";

  private Payloads() {}

  /**
   * {@code POST /api/v2/alerts}: firing alerts end at {@code firingEndsAt} unless sent again (as
   * Prometheus does, so Alertmanager resolves them itself if this service goes away).
   */
  static byte[] alertmanager(List<Alert> alerts, Instant firingEndsAt, AlertLinks links) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Alert a : alerts) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("labels", a.labels());
      m.put("annotations", a.annotations());
      m.put("startsAt", a.startsAt().toString());
      m.put("endsAt", alertmanagerEnd(a, firingEndsAt).toString());
      m.put("generatorURL", links.link(a)); // Alertmanager's "Source" link: the incident page
      out.add(m);
    }
    return WireJson.toBytes(out);
  }

  /**
   * The end Alertmanager is told: a resolution or an alert that expires by itself keeps its end;
   * others end at {@code firingEndsAt} unless re-sent.
   */
  static Instant alertmanagerEnd(Alert a, Instant firingEndsAt) {
    return a.endsAt() == null
        ? firingEndsAt
        : a.state() == Alert.State.RESOLVED || a.endsAt().isBefore(firingEndsAt)
            ? a.endsAt()
            : firingEndsAt;
  }

  /** Alertmanager's webhook payload, version 4, so existing receivers work unchanged. */
  static byte[] webhook(String receiver, Grouper.Batch b, int maxAlerts, AlertLinks links) {
    List<Alert> alerts = b.alerts();
    boolean firing = alerts.stream().anyMatch(a -> a.state() == Alert.State.FIRING);
    List<Map<String, Object>> list = new ArrayList<>();
    for (Alert a : alerts.subList(0, Math.min(maxAlerts, alerts.size()))) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("status", a.state() == Alert.State.FIRING ? "firing" : "resolved");
      m.put("labels", a.labels());
      m.put("annotations", a.annotations());
      m.put("startsAt", a.startsAt().toString());
      m.put("endsAt", a.endsAt() == null ? ZERO_TIME : a.endsAt().toString());
      m.put("generatorURL", links.link(a));
      m.put("fingerprint", a.fingerprint());
      list.add(m);
    }
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("version", "4");
    p.put("groupKey", "{}:" + b.groupKey());
    p.put("truncatedAlerts", Math.max(0, alerts.size() - maxAlerts));
    p.put("status", firing ? "firing" : "resolved");
    p.put("receiver", receiver);
    p.put("groupLabels", new TreeMap<>(b.groupLabels()));
    p.put("commonLabels", common(alerts, true));
    p.put("commonAnnotations", common(alerts, false));
    p.put("externalURL", links.externalUrl());
    p.put("alerts", list);
    return WireJson.toBytes(p);
  }

  /** A Slack incoming-webhook message; everything from logs is escaped by {@link SlackText}. */
  static byte[] slack(Grouper.Batch b, int maxAlerts, AlertLinks links) {
    List<Alert> alerts = b.alerts();
    long firing = alerts.stream().filter(a -> a.state() == Alert.State.FIRING).count();
    StringBuilder t = new StringBuilder();
    t.append(
            firing > 0
                ? ":red_circle: *[FIRING:" + firing + "]* "
                : ":white_check_mark: *[RESOLVED]* ")
        .append(SlackText.escape(String.join(" ", b.groupLabels().values())))
        .append('\n');
    for (Alert a : alerts.subList(0, Math.min(maxAlerts, alerts.size()))) {
      // our own links are links: built from the incident id, URL-encoded, never from log text
      t.append(a.state() == Alert.State.FIRING ? "• " : "• resolved: ")
          .append(SlackText.labels(a.labels()))
          .append(" <")
          .append(SlackText.escape(links.link(a)))
          .append("|incident page>\n")
          .append(SlackText.codeBlock(a.annotations().getOrDefault("summary", "")));
      String next = a.annotations().get("next_steps");
      if (next != null && !next.isBlank()) {
        t.append(SlackText.codeBlock(next));
      }
    }
    if (alerts.size() > maxAlerts) {
      t.append("… and ").append(alerts.size() - maxAlerts).append(" more\n");
    }
    t.append("<").append(SlackText.escape(links.externalUrl() + "/")).append("|all incidents>");
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("text", t.toString());
    p.put("mrkdwn", true);
    p.put("unfurl_links", false);
    p.put("unfurl_media", false);
    return WireJson.toBytes(p);
  }

  private static Map<String, String> common(List<Alert> alerts, boolean labels) {
    Map<String, String> out = null;
    for (Alert a : alerts) {
      Map<String, String> m = labels ? a.labels() : a.annotations();
      if (out == null) {
        out = new TreeMap<>(m);
      } else {
        out.entrySet().removeIf(e -> !e.getValue().equals(m.get(e.getKey())));
      }
    }
    return out == null ? Map.of() : out;
  }
}
