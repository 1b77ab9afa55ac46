package dev.cudawatch.alerts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.alerts.http.Health;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.JobFailure;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import dev.cudawatch.testkit.HeadlessChromium;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;

/**
 * Failed jobs through a real broker (transactional, read_committed as the processor writes them) to
 * /api/jobs, /api/jobs/{job} over a real socket, and the incident page's "Job failure" section, in
 * the HTML the server returns and in a real headless Chromium (Debian's chromium and
 * chromium-driver).
 */
class JobFailureServiceIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  private static final String JOB = "train-31";
  private static final String HOSTILE = "rank 1 logged <script>alert('pwned')</script>";

  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();

  private static Incident incident(String id, String host, long rank, long gpu) {
    return Incident.builder(id, "nccl_timeout")
        .severity("error")
        .suspect("application")
        .host(host)
        .job(JOB)
        .fields(Map.of("gpu", gpu, "rank", rank))
        .summary("summary of " + id)
        .explanation("why")
        .eventTime(Fixtures.T0)
        .detectedTime(Fixtures.T0)
        .build();
  }

  private static JobFailure failure(String job, String root, List<String> evidence, int count) {
    return new JobFailure(
        1,
        job + "/" + root,
        job,
        root,
        "nccl_timeout",
        "node-2",
        1,
        "1",
        "rank 1 hung outside all-reduce #31",
        List.of("t0", "t2", "t3").subList(0, count),
        count,
        List.of("node-1", "node-2"),
        4,
        Fixtures.T0,
        Fixtures.T0.plusSeconds(1),
        "hung_outside_collective",
        evidence);
  }

  @Test
  void failedJobsReachTheApiAndTheIncidentPage() throws Exception {
    EmbeddedKafkaBroker broker = KAFKA.broker();
    broker.createTopics(Topics.ALL, 2);
    AlertsSettings s =
        AlertsSettings.builder()
            .kafka(new KafkaSettings(broker.bootstrapServers(), Map.of()))
            .httpPort(0)
            .build();
    try (AlertsService svc =
        new AlertsService(
            s, new Health(), null, Clock.fixed(Fixtures.T0.plusSeconds(600), ZoneOffset.UTC))) {
      svc.start();
      String base = "http://127.0.0.1:" + svc.httpPort();
      List<String> evidence =
          List.of(
              "ranks 0, 2, 3 timed out waiting in ALLREDUCE #31",
              "rank 1 had enqueued only up to #30 (completed #30): it never issued ALLREDUCE #31",
              HOSTILE);
      try (var p = producer(broker, "jobs-test")) {
        p.initTransactions();
        p.beginTransaction();
        p.send(rec(Topics.INCIDENTS, incident("root", "node-2", 1, 1)));
        p.send(rec(Topics.INCIDENTS, incident("t0", "node-1", 0, 0)));
        p.send(rec(Topics.JOB_FAILURES, failure("other-job", "x", List.of(), 0)));
        // first with one consequence, then the same id again with more: the newer one is held
        p.send(rec(Topics.JOB_FAILURES, failure(JOB, "root", evidence.subList(0, 1), 1)));
        p.send(rec(Topics.JOB_FAILURES, failure(JOB, "root", evidence, 3)));
        p.send(
            new ProducerRecord<>(
                Topics.JOB_FAILURES,
                "{\"v\":1,\"job\":\"no-id\"}".getBytes(StandardCharsets.UTF_8)));
        p.commitTransaction();
        // an aborted failure is never read (read_committed)
        p.beginTransaction();
        p.send(rec(Topics.JOB_FAILURES, failure("aborted-job", "y", List.of(), 0)));
        p.flush();
        p.abortTransaction();
      }

      JsonNode jobs =
          Await.until(
              "both failed jobs in /api/jobs, the job's newer record last",
              () -> json(base + "/api/jobs"),
              j ->
                  j.path("total").asInt() == 2
                      && j.path("jobs").path(0).path("consequence_count").asInt() == 3,
              Duration.ofSeconds(60));
      assertEquals(JOB, jobs.path("jobs").path(0).path("job").asText(), "newest first");
      assertEquals("other-job", jobs.path("jobs").path(1).path("job").asText());
      assertEquals(1, json(base + "/api/jobs?job=" + JOB).path("total").asInt());
      assertEquals(2, json(base + "/api/jobs?host=node-1").path("total").asInt());
      assertEquals(0, json(base + "/api/jobs?host=node-7").path("total").asInt());
      assertEquals(1, json(base + "/api/jobs?limit=1&offset=1").path("jobs").size());

      JsonNode job = json(base + "/api/jobs/" + JOB);
      assertEquals(1, job.path("rank").asInt());
      assertEquals("node-2", job.path("host").asText());
      assertEquals("1", job.path("gpu").asText());
      assertEquals("root", job.path("root_id").asText());
      assertEquals("hung_outside_collective", job.path("cause").asText());
      assertEquals(HOSTILE, job.path("evidence").path(2).asText());

      // bad input: a clear 400; an unknown job: 404
      assertBad(base + "/api/jobs?limit=0", "limit must be 1..1000");
      assertBad(base + "/api/jobs?offset=x", "offset: not an integer");
      assertBad(base + "/api/jobs?job=", "job: must be 1..512 characters");
      assertBad(base + "/api/jobs?host=" + "h".repeat(600), "host: must be 1..512 characters");
      assertBad(base + "/api/jobs/", "job id must be 1..512 characters");
      HttpResponse<String> none = send(base + "/api/jobs/aborted-job");
      assertEquals(404, none.statusCode());
      assertTrue(none.body().contains("no failure of that job is held"), none.body());

      // the unreadable record was dead-lettered and counted, the loop went on
      Await.until(
          "the dead letter and the store's gauge",
          () -> send(base + "/metrics").body(),
          m ->
              m.contains(
                      "cudawatch_dead_letters_total{stage=\"alerts\",topic=\"cudawatch.job-failures\"} 1.0")
                  && m.contains("cudawatch_job_failures_held 2.0"),
          Duration.ofSeconds(30));

      // the page a person opens from rank 0's timeout: the culprit, the cause, the evidence
      String page =
          Await.until(
              "rank 0's incident page with its job's failure",
              () -> send(base + "/incident?id=t0").body(),
              h -> h.contains("<h2>Job failure</h2>"),
              Duration.ofSeconds(30));
      assertTrue(page.contains("<strong id=\"culprit\">rank 1 on node-2, GPU 1</strong>"), page);
      assertTrue(page.contains("it never issued ALLREDUCE #31"), page);
      assertTrue(page.contains("&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;"), page);
      assertFalse(page.contains("<script>"), page);
      assertTrue(page.contains("href=\"/incident?id&#x3D;root\""), page);
      assertTrue(send(base + "/?job=" + JOB).body().contains("culprit rank 1 on node-2, GPU 1"));

      inChromium(base);
    }
  }

  /** What a person sees: the section's text, the hostile line as text, the way to the root. */
  private void inChromium(String base) {
    WebDriver b = HeadlessChromium.start(dir);
    try {
      b.get(base + "/incident?id=t0");
      assertEquals("rank 1 on node-2, GPU 1", b.findElement(By.id("culprit")).getText());
      assertEquals("1", b.findElement(By.id("culprit-rank")).getText());
      assertEquals("node-2", b.findElement(By.id("culprit-host")).getText());
      assertEquals("1", b.findElement(By.id("culprit-gpu")).getText());
      assertTrue(
          b.findElement(By.id("culprit-cause"))
              .getText()
              .startsWith("hung outside the collective"));
      List<String> items =
          b.findElements(By.cssSelector("#job-evidence li")).stream()
              .map(WebElement::getText)
              .toList();
      assertEquals(3, items.size(), items.toString());
      assertEquals("ranks 0, 2, 3 timed out waiting in ALLREDUCE #31", items.get(0));
      assertEquals(HOSTILE, items.get(2), "the hostile line is text");
      assertTrue(b.findElements(By.tagName("script")).isEmpty(), "no script element");
      HeadlessChromium.navigate(b, b.findElement(By.id("job-root-link")));
      assertTrue(b.getCurrentUrl().endsWith("/incident?id=root"), b.getCurrentUrl());
      assertTrue(b.findElement(By.id("job-root")).getText().startsWith("this incident"));
      assertTrue(b.findElements(By.id("job-root-link")).isEmpty());
    } finally {
      b.quit();
    }
  }

  private void assertBad(String url, String reason) throws Exception {
    HttpResponse<String> r = send(url);
    assertEquals(400, r.statusCode(), url + ": " + r.body());
    assertTrue(r.body().contains(reason), url + ": " + r.body());
  }

  private static KafkaProducer<byte[], byte[]> producer(EmbeddedKafkaBroker broker, String txId) {
    return new KafkaProducer<>(
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            broker.bootstrapServers(),
            ProducerConfig.TRANSACTIONAL_ID_CONFIG,
            txId),
        new ByteArraySerializer(),
        new ByteArraySerializer());
  }

  private static ProducerRecord<byte[], byte[]> rec(String topic, Object value) {
    // one key for all: one partition, so the order of the records is the order they are read
    return new ProducerRecord<>(
        topic, JOB.getBytes(StandardCharsets.UTF_8), WireJson.toBytes(value));
  }

  private JsonNode json(String url) throws Exception {
    return WireJson.mapper().readTree(send(url).body());
  }

  private HttpResponse<String> send(String url) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
