package dev.cudawatch.alerts.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.alerts.store.GpuHealthStore;
import dev.cudawatch.alerts.store.IncidentStore;
import dev.cudawatch.alerts.store.JobFailureStore;
import dev.cudawatch.common.http.GuardedHttpServer.Response;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.JobFailure;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The incident page's HTML, rendered without a server: filters, escaping, neighbours, headers. */
class IncidentPagesTest {
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");
  private final IncidentStore store = new IncidentStore(100);
  private final IncidentPages pages =
      new IncidentPages(
          store,
          (h, g, t) -> "n1".equals(h) && "0".equals(g) ? 3 : 0,
          Clock.fixed(T0, ZoneOffset.UTC));

  private static Incident incident(
      String id, String cls, String host, String job, Map<String, Object> fields, Instant t) {
    return Incident.builder(id, cls)
        .severity("error")
        .suspect("application")
        .host(host)
        .job(job)
        .fields(fields)
        .summary("summary of " + id)
        .explanation("why " + id)
        .nextSteps(List.of("first step", "second step"))
        .excerpt(List.of("Traceback", "<script>alert('x')</script> & more"))
        .source("/logs/" + id + ".log")
        .line(3)
        .eventTime(t)
        .detectedTime(t)
        .build();
  }

  private static String html(Response r) {
    return new String(r.body(), StandardCharsets.UTF_8);
  }

  @Test
  void listFiltersByHostClassJobGpuAndSince() {
    store.add(incident("a", "cuda_oom", "n1", "42", Map.of("gpu", 0L, "rank", 0L), T0));
    store.add(incident("b", "nccl_timeout", "n2", "42", Map.of("gpu", 1L, "rank", 1L), T0));
    store.add(incident("c", "cuda_oom", "n1", "7", Map.of("gpu", 1L), T0.minusSeconds(7200)));

    assertTrue(html(pages.list(Map.of())).contains("Incidents 1–3 of 3"));
    assertTrue(html(pages.list(Map.of("host", "n1"))).contains("of 2,"));
    assertTrue(html(pages.list(Map.of("class", "nccl_timeout"))).contains("summary of b"));
    assertFalse(html(pages.list(Map.of("class", "nccl_timeout"))).contains("summary of a"));
    assertTrue(html(pages.list(Map.of("job", "7"))).contains("summary of c"));
    String gpu1 = html(pages.list(Map.of("gpu", "1")));
    assertTrue(gpu1.contains("summary of b") && gpu1.contains("summary of c"));
    assertFalse(gpu1.contains("summary of a"));
    String lastHour = html(pages.list(Map.of("since", "1h")));
    assertTrue(lastHour.contains("of 2,") && !lastHour.contains("summary of c"));
    assertTrue(html(pages.list(Map.of("host", "nowhere"))).contains("No incidents match"));
  }

  /** The runbook alerts link: a section per class, under the class id as docs/taxonomy.md has. */
  @Test
  void theTaxonomyPageHasASectionPerClassUnderItsId() {
    Response r = pages.taxonomy();
    assertEquals(200, r.status());
    String h = html(r);
    for (var c : IncidentView.TAXONOMY.classes()) {
      assertTrue(h.contains("<section class=\"class\" id=\"" + c.id() + "\">"), c.id());
    }
    assertTrue(h.contains("CUDA out of memory"), "titles");
    assertTrue(h.contains("Reduce the batch size"), "next steps");
  }

  @Test
  void aBadFilterIsA400WithOneLine() {
    Response r = pages.list(Map.of("since", "yesterday"));
    assertEquals(400, r.status());
    assertTrue(html(r).contains("since: expected a duration such as 10m"));
  }

  @Test
  void theIncidentShowsItsTextEscapedAndItsNeighbours() {
    store.add(incident("x1", "gpu_xid", "n1", null, Map.of("gpu", 0L, "xid", 79L), T0));
    store.add(incident("r1", "nccl_timeout", "n2", "42", Map.of("gpu", 1L, "rank", 1L), T0));
    store.add(incident("a", "cuda_oom", "n1", "42", Map.of("gpu", 0L, "rank", 0L), T0));

    Response r = pages.incident(Map.of("id", "a"));
    String h = html(r);
    assertEquals(200, r.status());
    assertTrue(h.contains("<h1 id=\"class-title\">CUDA out of memory</h1>"), h);
    assertTrue(h.contains("why a") && h.contains("<li>first step</li>"));
    // a log line is text, never markup
    assertTrue(h.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; more"), h);
    assertFalse(h.contains("<script>"));
    // the Xid on its GPU, with what the catalog says, the lemon score and the job's other rank
    assertTrue(h.contains("<td>79</td>") && h.contains("GPU has fallen off the bus"), h);
    assertTrue(h.contains("3 different job(s) failed on GPU 0 of n1"));
    assertTrue(h.contains("summary of r1"));
    String csp = r.headers().get("Content-Security-Policy");
    assertTrue(csp.startsWith("default-src 'none'; style-src 'sha256-"), csp);
    assertEquals("text/html; charset=utf-8", r.contentType());
  }

  @Test
  void aFailedJobsIncidentsShowTheCulpritCauseAndEvidenceEscaped() {
    JobFailureStore jobs = new JobFailureStore(10);
    IncidentPages withJobs =
        new IncidentPages(
            store, new GpuHealthStore(1), jobs, (h, g, t) -> 0, Clock.fixed(T0, ZoneOffset.UTC));
    store.add(incident("root", "nccl_timeout", "n2", "42", Map.of("gpu", 1L, "rank", 1L), T0));
    store.add(incident("t0", "nccl_timeout", "n1", "42", Map.of("gpu", 0L, "rank", 0L), T0));
    store.add(incident("other", "cuda_oom", "n1", "7", Map.of("gpu", 0L), T0));
    jobs.add(
        new JobFailure(
            1,
            "42/root",
            "42",
            "root",
            "nccl_timeout",
            "n2",
            1,
            "1",
            "rank 1 hung",
            List.of("t0"),
            1,
            List.of("n1", "n2"),
            2,
            T0,
            T0,
            "hung_outside_collective",
            List.of(
                "ranks 0, 2, 3 timed out waiting in ALLREDUCE #31",
                "rank 1 logged <script>alert('x')</script>")));

    String t0 = html(withJobs.incident(Map.of("id", "t0")));
    assertTrue(t0.contains("<h2>Job failure</h2>"), t0);
    assertTrue(t0.contains("<strong id=\"culprit\">rank 1 on n2, GPU 1</strong>"), t0);
    assertTrue(t0.contains("<dd id=\"culprit-rank\">1</dd>"), t0);
    assertTrue(t0.contains("<dd id=\"culprit-host\">n2</dd>"), t0);
    assertTrue(t0.contains("<dd id=\"culprit-gpu\">1</dd>"), t0);
    assertTrue(t0.contains("hung outside the collective (host code"), t0);
    assertTrue(t0.contains("<li>ranks 0, 2, 3 timed out waiting in ALLREDUCE #31</li>"), t0);
    assertTrue(
        t0.contains("<li>rank 1 logged &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;</li>"), t0);
    assertFalse(t0.contains("<script>"), t0);
    assertTrue(t0.contains("<a href=\"/incident?id&#x3D;root\" id=\"job-root-link\">"), t0);
    assertTrue(t0.contains("<a href=\"/api/jobs/42\">"), t0);

    String root = html(withJobs.incident(Map.of("id", "root")));
    assertTrue(root.contains("<dd id=\"job-root\">this incident"), root);
    assertFalse(root.contains("job-root-link"), root);

    assertFalse(html(withJobs.incident(Map.of("id", "other"))).contains("Job failure"));
    String list = html(withJobs.list(Map.of()));
    assertTrue(list.contains("culprit rank 1 on n2, GPU 1"), list);
    assertEquals(2, list.split("class=\"muted culprit\"", -1).length - 1, "rows of job 42");
  }

  @Test
  void anUnknownIncidentIsA404() {
    Response r = pages.incident(Map.of("id", "<b>gone</b>"));
    assertEquals(404, r.status());
    assertTrue(html(r).contains("No incident &lt;b&gt;gone&lt;/b&gt; is held"));
  }
}
