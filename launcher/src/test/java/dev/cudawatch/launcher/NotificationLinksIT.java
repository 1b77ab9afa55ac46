package dev.cudawatch.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.cudawatch.alerts.RealBinaries;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.testkit.Await;
import dev.cudawatch.testkit.HeadlessChromium;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;

/**
 * Issue 33's promise, on real parts: an OOM in a watched log goes through the local pipeline to a
 * real Alertmanager (Debian's) running deploy/alertmanager/alertmanager.yml with
 * templates/cudawatch.tmpl, whose webhook, Slack, PagerDuty and Opsgenie receivers post to this
 * test; every message links the alert's incident page, and a real headless Chromium follows the
 * link to the page with the root cause and the next steps, and the runbook link to its class.
 */
class NotificationLinksIT {
  private static final Pattern INCIDENT_LINK =
      Pattern.compile("http://127\\.0\\.0\\.1:\\d+/incident\\?id=[^\\s|\"<>\\\\]+");

  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();
  private final Map<String, List<String>> received = new ConcurrentHashMap<>();

  @Test
  void everyMessageLinksTheIncidentPageAndChromiumFollowsIt() throws Exception {
    Path amBin = RealBinaries.require("prometheus-alertmanager");
    HeadlessChromium.require();
    HttpServer receivers = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    for (String r : List.of("webhook", "slack", "pagerduty", "opsgenie")) {
      received.put(r, new CopyOnWriteArrayList<>());
      receivers.createContext(
          "/" + r,
          ex -> {
            received
                .get(r)
                .add(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            byte[] ok = "{\"status\":\"success\"}".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(r.equals("pagerduty") ? 202 : 200, ok.length);
            ex.getResponseBody().write(ok);
            ex.close();
          });
    }
    receivers.start();
    String capture = "http://127.0.0.1:" + receivers.getAddress().getPort();
    int amPort = RealBinaries.freePort();
    Process am = alertmanager(amBin, capture, amPort);
    String amUrl = "http://127.0.0.1:" + amPort;
    Path logs = dir.resolve("logs");
    var options =
        new LocalCluster.Options(
            dir.resolve("data"), logs, null, 0, 2, amUrl, null, null, List.of());
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    try (LocalCluster cluster =
        new LocalCluster(options, new PrintStream(console, true, StandardCharsets.UTF_8))) {
      await("Alertmanager ready", () -> status(amUrl + "/-/ready") == 200, am);
      cluster.start();
      String base = "http://127.0.0.1:" + cluster.httpPort();
      await("healthy", () -> get(base + "/healthz").contains("\"status\":\"ok\""), am);

      Path log = logs.resolve("job-1234.log");
      Files.writeString(log, "epoch 1 step 10 loss 0.52\n", StandardOpenOption.CREATE);
      for (String line :
          Files.readAllLines(Path.of("../diagnosis/src/test/resources/golden/oom_single.log"))) {
        Files.writeString(log, line + "\n", StandardOpenOption.APPEND);
      }
      await(
          "a message at every receiver",
          () -> received.values().stream().noneMatch(List::isEmpty),
          am);

      // Alertmanager's webhook: each alert carries the page as generatorURL and annotation
      String link = null;
      for (String body : received.get("webhook")) {
        for (JsonNode a : WireJson.mapper().readTree(body).path("alerts")) {
          String url = a.path("annotations").path("incident_url").asText();
          assertTrue(url.startsWith(base + "/incident?id="), body);
          assertEquals(url, a.path("generatorURL").asText(), body);
          assertEquals(
              base + "/taxonomy#cuda_oom", a.path("annotations").path("runbook_url").asText());
          link = url;
        }
      }
      // the templated messages: root cause, host, the first next step and the link in each
      for (String r : List.of("slack", "pagerduty", "opsgenie")) {
        for (String body : received.get(r)) {
          Matcher m = INCIDENT_LINK.matcher(body);
          assertTrue(m.find(), r + " links no incident page: " + body);
          assertTrue(m.group().startsWith(link), r + ": " + m.group() + " is not " + link);
          assertTrue(body.contains("CUDA out of memory (cuda_oom)"), r + ": " + body);
        }
      }
      String slack = WireJson.mapper().readTree(received.get("slack").get(0)).toString();
      assertTrue(slack.contains("|incident page>"), "a Slack link: " + slack);
      assertTrue(slack.contains("Next step:"), slack);
      String opsgenie =
          WireJson.mapper().readTree(received.get("opsgenie").get(0)).path("description").asText();
      assertTrue(opsgenie.contains("Root cause: CUDA out of memory (cuda_oom)"), opsgenie);
      assertTrue(opsgenie.contains("Next step: "), opsgenie);

      WebDriver browser = HeadlessChromium.start(dir);
      try {
        browser.get(link);
        assertEquals("CUDA out of memory", browser.findElement(By.id("class-title")).getText());
        assertFalse(browser.findElements(By.cssSelector("#next-steps li")).isEmpty(), "steps");
        assertTrue(browser.findElement(By.id("excerpt")).getText().contains("CUDA out of memory"));
        browser.get(base + "/taxonomy#cuda_oom");
        assertTrue(browser.findElement(By.id("cuda_oom")).getText().contains("CUDA out of memory"));
      } finally {
        browser.quit();
      }
    } finally {
      am.destroy();
      am.waitFor(10, TimeUnit.SECONDS);
      receivers.stop(0);
    }
  }

  /**
   * The repository's config and templates, with the receivers' addresses pointed at this test, the
   * secrets in files here, a short group wait, and every receiver routed the job's alert (Slack,
   * PagerDuty and Opsgenie take other alerts in the example), so each template renders once.
   */
  private Process alertmanager(Path bin, String capture, int port) throws Exception {
    Path am = Path.of("../deploy/alertmanager");
    Path templates = Files.createDirectories(dir.resolve("am/templates"));
    Files.copy(am.resolve("templates/cudawatch.tmpl"), templates.resolve("cudawatch.tmpl"));
    Path secrets = Files.createDirectories(dir.resolve("am/secrets"));
    Files.writeString(secrets.resolve("slack-webhook-url"), capture + "/slack");
    Files.writeString(secrets.resolve("pagerduty-routing-key"), "0123456789abcdef0123456789abcdef");
    Files.writeString(secrets.resolve("opsgenie-api-key"), "test-key");
    String yml =
        Files.readString(am.resolve("alertmanager.yml"))
            .replace("http://webhook-receiver:8080/alerts", capture + "/webhook")
            .replace("/etc/alertmanager/secrets/", secrets + "/")
            .replace("group_wait: 30s", "group_wait: 1s")
            .replace("severity = \"critical\"", "severity =~ \"critical|error\"")
            .replace("|GpuRepairLadder\"", "|GpuRepairLadder|GpuJobFailure\"")
            .replace(
                "routing_key_file: " + secrets + "/pagerduty-routing-key",
                "routing_key_file: "
                    + secrets
                    + "/pagerduty-routing-key\n        url: "
                    + capture
                    + "/pagerduty")
            .replace(
                "api_key_file: " + secrets + "/opsgenie-api-key",
                "api_key_file: "
                    + secrets
                    + "/opsgenie-api-key\n        api_url: "
                    + capture
                    + "/opsgenie/");
    Path config = dir.resolve("am/alertmanager.yml");
    Files.writeString(config, yml);
    List<String> cmd =
        new ArrayList<>(
            List.of(
                bin.toString(),
                "--config.file=" + config,
                "--storage.path=" + dir.resolve("am/data"),
                "--web.listen-address=127.0.0.1:" + port,
                "--cluster.listen-address="));
    return new ProcessBuilder(cmd)
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("am/alertmanager.log").toFile())
        .start();
  }

  private String get(String url) {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (Exception e) {
      return "";
    }
  }

  private int status(String url) {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create(url)).build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (Exception e) {
      return -1;
    }
  }

  private void await(String what, java.util.function.BooleanSupplier ok, Process am) {
    Await.until(
        what,
        () -> {
          if (!am.isAlive()) {
            throw new AssertionError(
                "alertmanager exited: " + read(dir.resolve("am/alertmanager.log")));
          }
          return ok.getAsBoolean();
        },
        Duration.ofSeconds(120));
  }

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (java.io.IOException e) {
      return e.getMessage();
    }
  }
}
