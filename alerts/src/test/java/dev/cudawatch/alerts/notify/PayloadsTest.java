package dev.cudawatch.alerts.notify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.WireJson;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PayloadsTest {
  private static final Alert FIRING = GrouperTest.alert("X", "node-1", Alert.State.FIRING);
  private static final Alert RESOLVED = GrouperTest.alert("X", "node-2", Alert.State.RESOLVED);
  private static final AlertLinks LINKS =
      new AlertLinks("http://cw/", null, id -> java.util.Optional.empty());

  @Test
  void theWebhookPayloadHasAlertmanagersVersion4Shape() throws Exception {
    Grouper.Batch b =
        new Grouper.Batch(Map.of("alertname", "X"), "{alertname=\"X\"}", List.of(FIRING, RESOLVED));
    JsonNode p = WireJson.mapper().readTree(Payloads.webhook("r", b, 1, LINKS));
    assertEquals("4", p.get("version").asText());
    assertEquals("firing", p.get("status").asText());
    assertEquals("r", p.get("receiver").asText());
    assertEquals("X", p.get("groupLabels").get("alertname").asText());
    assertEquals("X", p.get("commonLabels").get("alertname").asText());
    assertFalse(p.get("commonLabels").has("host"), "labels that differ are not common");
    assertEquals(1, p.get("truncatedAlerts").asInt());
    assertEquals("http://cw", p.get("externalURL").asText());
    JsonNode a = p.get("alerts").get(0);
    for (String k :
        List.of(
            "status",
            "labels",
            "annotations",
            "startsAt",
            "endsAt",
            "generatorURL",
            "fingerprint")) {
      assertTrue(a.has(k), k);
    }
    assertEquals(Payloads.ZERO_TIME, a.get("endsAt").asText());
  }

  @Test
  void alertmanagerAlertsEndWhenNotRefreshed() throws Exception {
    Instant ends = Instant.parse("2026-11-22T04:00:00Z");
    JsonNode p =
        WireJson.mapper().readTree(Payloads.alertmanager(List.of(FIRING, RESOLVED), ends, LINKS));
    assertEquals(ends.toString(), p.get(0).get("endsAt").asText());
    assertEquals(
        "2026-11-22T03:10:00Z", p.get(1).get("endsAt").asText(), "a resolution keeps its end");
    assertEquals("node-1", p.get(0).get("labels").get("host").asText());
    // an alert about no one incident links the list of incidents
    assertEquals("http://cw/", p.get(0).get("generatorURL").asText());
  }

  @Test
  void slackTextFromLogsCannotMentionOrLinkOrBreakOut() throws Exception {
    Alert evil =
        new Alert(
            1,
            "f",
            Alert.State.FIRING,
            Map.of("alertname", "GpuJobFailure", "host", "<!channel>", "incident_id", "s|1&x"),
            Map.of(
                "summary",
                    "RuntimeError <!here> <@U123> <http://evil.example|click me> @channel ``` & done",
                "next_steps", "see <https://x>"),
            Instant.EPOCH,
            null);
    Grouper.Batch b = new Grouper.Batch(Map.of("alertname", "GpuJobFailure"), "k", List.of(evil));
    String text = WireJson.mapper().readTree(Payloads.slack(b, 10, LINKS)).get("text").asText();
    assertFalse(text.contains("<!"), text);
    assertFalse(text.contains("<@"), text);
    assertFalse(text.contains("<http://evil"), text);
    assertFalse(text.contains("@channel"), text);
    assertTrue(text.contains("&lt;!channel&gt;"), text);
    assertTrue(text.contains("&amp; done"), text);
    // the log text stays inside its code block: no backtick run from the log survives
    assertEquals(0, text.replace("```", "").chars().filter(c -> c == '`').count() % 2, text);
    // our own links are links: the incident page (its id encoded: no | ends the link early)
    assertTrue(text.contains("<http://cw/incident?id=s%7C1%26x|incident page>"), text);
    assertTrue(text.endsWith("<http://cw/|all incidents>"), text);
    JsonNode p = WireJson.mapper().readTree(Payloads.slack(b, 10, LINKS));
    assertFalse(p.get("unfurl_links").asBoolean());
  }
}
