package dev.cudawatch.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.ship.Shipper;
import dev.cudawatch.testkit.Await;
import dev.cudawatch.testkit.HeadlessChromium;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.Select;

/**
 * The incident page as a person sees it, in a real headless Chromium (Debian's {@code chromium} and
 * {@code chromium-driver}, driven by Selenium) against the real local pipeline: real failure logs
 * through the agent and a job wrapper's records, Kafka, Flink and the alerts service. Filters the
 * list, opens incidents, reads the class title, explanation, next steps, the job's other rank, and
 * a log line holding {@code <script>} shown as text. Saves a screenshot (target/incident-page.png,
 * the README's docs/incident-page.png).
 */
class IncidentPageIT {
  private static final String HOST = "gpu-node-7";
  private static final String JOB = "train-77";
  private static final String HOSTILE = "<script>alert('pwned')</script>";

  @TempDir Path dir;
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void aPersonFiltersOpensAnIncidentAndReadsWhatToDo() throws Exception {
    HeadlessChromium.require();
    Path logs = dir.resolve("logs");
    var options =
        new LocalCluster.Options(
            dir.resolve("data"), logs, null, 0, 2, null, null, null, List.of());
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    try (LocalCluster cluster =
        new LocalCluster(options, new PrintStream(console, true, StandardCharsets.UTF_8))) {
      cluster.start();
      String base = "http://127.0.0.1:" + cluster.httpPort();
      await("healthy", () -> get(base + "/healthz").contains("\"status\":\"ok\""));
      feed(logs, cluster.bootstrapServers());
      await(
          "the OOM of job-1234.log, the OOM and NCCL timeout of " + JOB + " and the Xid",
          () -> {
            String all = get(base + "/api/incidents?limit=1000");
            return all.contains("job-1234.log")
                && all.contains("\"nccl_timeout\"")
                && all.contains("\"gpu_xid\"")
                && all.contains("\"job\":\"" + JOB + "\"");
          });

      WebDriver browser = HeadlessChromium.start(dir);
      try {
        // the list: every incident, then only the training job's
        browser.get(base + "/");
        assertEquals("cudawatch incidents", browser.getTitle());
        int all = browser.findElements(By.cssSelector("tr.incident")).size();
        assertTrue(all >= 4, "rows: " + all);
        // the inline style applies: its hash is in the Content-Security-Policy
        assertEquals(
            "rgba(246, 247, 249, 1)",
            browser.findElement(By.tagName("body")).getCssValue("background-color"));
        type(browser, "job", JOB);
        HeadlessChromium.navigate(browser, browser.findElement(By.id("apply")));
        List<WebElement> rows = browser.findElements(By.cssSelector("tr.incident"));
        assertTrue(rows.size() >= 2 && rows.size() < all, "rows of " + JOB + ": " + rows.size());
        for (WebElement r : rows) {
          assertEquals(JOB, r.findElements(By.tagName("td")).get(5).getText(), r.getText());
        }
        assertTrue(browser.getCurrentUrl().contains("job=" + JOB));

        // rank 0's OOM: what happened, why, what to do, the GPU and the job's other rank
        HeadlessChromium.navigate(browser, browser.findElement(By.linkText("CUDA out of memory")));
        assertEquals("CUDA out of memory", text(browser, "class-title"));
        assertTrue(text(browser, "explanation").contains("200"), text(browser, "explanation"));
        List<WebElement> steps = browser.findElements(By.cssSelector("#next-steps li"));
        assertFalse(steps.isEmpty(), "next steps");
        assertTrue(text(browser, "excerpt").contains("CUDA out of memory. Tried to allocate"));
        assertTrue(text(browser, "lemon").contains("of " + HOST), text(browser, "lemon"));
        String others = text(browser, "job-incidents");
        assertTrue(others.contains("NCCL collective timed out"), others);
        assertTrue(text(browser, "xids").contains("79"), text(browser, "xids"));
        Path shot = Path.of("target", "incident-page.png");
        Files.createDirectories(shot.getParent());
        Files.copy(
            ((ChromeDriver) browser).getScreenshotAs(OutputType.FILE).toPath(),
            shot,
            StandardCopyOption.REPLACE_EXISTING);

        // the plain log file's OOM, found by host and class: its hostile line is text
        browser.get(base + "/");
        type(browser, "host", agentHost(base));
        new Select(browser.findElement(By.name("class"))).selectByVisibleText("CUDA out of memory");
        type(browser, "since", "1h");
        HeadlessChromium.navigate(browser, browser.findElement(By.id("apply")));
        List<WebElement> oom = browser.findElements(By.cssSelector("tr.incident"));
        assertEquals(1, oom.size(), "the file's OOM alone");
        HeadlessChromium.navigate(browser, oom.get(0).findElement(By.tagName("a")));
        assertTrue(text(browser, "excerpt").contains(HOSTILE), text(browser, "excerpt"));
        assertTrue(browser.findElements(By.tagName("script")).isEmpty(), "no script element");
        assertTrue(text(browser, "facts").contains("job-1234.log"));
      } finally {
        browser.quit();
      }
    }
  }

  /**
   * What the pipeline reads: a training log file with a real OOM traceback whose error line ends in
   * hostile markup, and a job wrapper's records of two ranks (a real OOM on GPU 0, a real NCCL
   * watchdog timeout on GPU 1) with the kernel's Xid 79 for GPU 0, as agents on the node send them.
   */
  private void feed(Path logs, String bootstrap) throws Exception {
    List<String> oom =
        Files.readAllLines(Path.of("../diagnosis/src/test/resources/golden/oom_single.log"));
    Path log = logs.resolve("job-1234.log");
    StringBuilder text = new StringBuilder("epoch 1 step 10 loss 0.52\n");
    for (String line : oom) {
      // the hostile text rides on the matched line itself, so it is in the excerpt
      text.append(line.contains("CUDA out of memory") ? line + " " + HOSTILE : line).append('\n');
    }
    Files.writeString(log, text, StandardOpenOption.CREATE);

    String nccl =
        Files.readAllLines(
                Path.of("../diagnosis/src/test/resources/golden/nccl_watchdog_timeout.log"))
            .stream()
            .filter(l -> l.contains("Watchdog caught collective operation timeout"))
            .findFirst()
            .orElseThrow()
            .replace("[rank0]", "[rank1]")
            .replace("[Rank 0]", "[Rank 1]");
    try (Shipper shipper = new Shipper(new KafkaSettings(bootstrap, Map.of()))) {
      ship(shipper, RecordKind.LOG, 0, "run:" + JOB + ":0", oom);
      ship(shipper, RecordKind.LOG, 1, "run:" + JOB + ":1", List.of(nccl));
      ship(
          shipper,
          RecordKind.KERNEL,
          0,
          "/dev/kmsg",
          List.of("NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus."));
      shipper.flush();
    }
  }

  private static void ship(
      Shipper shipper, RecordKind kind, int rank, String source, List<String> lines) {
    long offset = 0;
    for (String line : lines) {
      Instant now = Instant.now();
      LogRecord r =
          LogRecord.builder()
              .host(HOST)
              .job(kind == RecordKind.LOG ? JOB : null)
              .rank(kind == RecordKind.LOG ? rank : null)
              .gpu(rank)
              .kind(kind)
              .stream(kind == RecordKind.LOG ? "stderr" : "kmsg")
              .source(source)
              .sourceId(source)
              .offset(offset)
              .eventTime(now)
              .ingestTime(now)
              .text(line)
              .build();
      offset += line.length() + 1;
      shipper.send(r, () -> {});
    }
  }

  /** The host the local agent names (the machine's): the host of job-1234.log's incident. */
  private String agentHost(String base) throws Exception {
    for (JsonNode i :
        WireJson.mapper().readTree(get(base + "/api/incidents?limit=1000")).path("incidents")) {
      if (i.path("source").asText().endsWith("job-1234.log")) {
        return i.path("host").asText();
      }
    }
    throw new AssertionError("no incident of job-1234.log");
  }

  private static void type(WebDriver b, String name, String value) {
    WebElement e = b.findElement(By.name(name));
    e.clear();
    e.sendKeys(value);
  }

  private static String text(WebDriver b, String id) {
    return b.findElement(By.id(id)).getText();
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

  private static void await(String what, java.util.function.BooleanSupplier ok) {
    Await.until(what, ok, Duration.ofSeconds(120));
  }
}
