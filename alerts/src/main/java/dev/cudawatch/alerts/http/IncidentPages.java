package dev.cudawatch.alerts.http;

import com.samskivert.mustache.Mustache;
import com.samskivert.mustache.Template;
import dev.cudawatch.alerts.store.GpuHealthStore;
import dev.cudawatch.alerts.store.IncidentStore;
import dev.cudawatch.alerts.store.JobFailureStore;
import dev.cudawatch.common.http.GuardedHttpServer.Response;
import dev.cudawatch.common.wire.Incident;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The incident page: {@code /} lists recent incidents with filters, {@code /incident?id=} shows
 * one. Server-rendered from Mustache templates that escape every value (nothing is inserted raw, so
 * a log line cannot become markup); the only style is one inline sheet allowed by its hash in a
 * Content-Security-Policy that allows nothing else (no scripts, no external requests).
 */
public final class IncidentPages {
  static final int PAGE_SIZE = 50;
  private static final int RELATED_LIMIT = 20;
  private static final Pattern RELATIVE = Pattern.compile("(\\d{1,6})([smhd])");

  /** The lemon score of a GPU (host, gpu index) now. */
  public interface LemonLookup {
    int score(String host, String gpu, Instant now);
  }

  private final IncidentStore store;
  private final GpuHealthStore gpus;
  private final JobFailureStore jobFailures;
  private final LemonLookup lemons;
  private final Clock clock;
  private final Template list;
  private final Template detail;
  private final Template error;
  private final Template taxonomy;
  private final String css;
  private final Map<String, String> headers;

  public IncidentPages(IncidentStore store, LemonLookup lemons, Clock clock) {
    this(store, new GpuHealthStore(1), lemons, clock);
  }

  /** With each GPU's health and repair-ladder state on the incident page. */
  public IncidentPages(IncidentStore store, GpuHealthStore gpus, LemonLookup lemons, Clock clock) {
    this(store, gpus, new JobFailureStore(1), lemons, clock);
  }

  /** With each failed job's culprit rank and evidence on the page of its incidents. */
  public IncidentPages(
      IncidentStore store,
      GpuHealthStore gpus,
      JobFailureStore jobFailures,
      LemonLookup lemons,
      Clock clock) {
    this.store = store;
    this.gpus = gpus;
    this.jobFailures = jobFailures;
    this.lemons = lemons;
    this.clock = clock;
    Mustache.Compiler c =
        Mustache.compiler()
            .escapeHTML(true)
            .defaultValue("")
            .emptyStringIsFalse(true)
            .withLoader(name -> reader(name + ".mustache"));
    this.list = c.compile(reader("list.mustache"));
    this.detail = c.compile(reader("incident.mustache"));
    this.error = c.compile(reader("error.mustache"));
    this.taxonomy = c.compile(reader("taxonomy.mustache"));
    this.css = text("page.css");
    if (css.matches("(?s).*[&<>\"'`=].*")) {
      // the template escapes it, and the escaped text would no longer match the CSP hash
      throw new IllegalStateException("page.css must not contain & < > \" ' ` =");
    }
    Map<String, String> h = new LinkedHashMap<>();
    h.put(
        "Content-Security-Policy",
        "default-src 'none'; style-src '"
            + sha256(css)
            + "'; img-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'");
    h.put("X-Content-Type-Options", "nosniff");
    h.put("Referrer-Policy", "no-referrer");
    h.put("Cache-Control", "no-store");
    this.headers = Map.copyOf(h);
  }

  /** The list of recent incidents, filtered by {@code q} (host, class, job, gpu, since, offset). */
  Response list(Map<String, String> q) {
    Filter f;
    try {
      f = Filter.parse(q, clock.instant());
    } catch (IllegalArgumentException e) {
      return page(400, error, Map.of("title", "Bad filter", "message", e.getMessage()));
    }
    IncidentStore.Page page = store.find(f, f.offset(), PAGE_SIZE);
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("title", "cudawatch incidents");
    m.put("host", nz(q.get("host")));
    m.put("class", nz(q.get("class")));
    m.put("job", nz(q.get("job")));
    m.put("gpu", nz(q.get("gpu")));
    m.put("since", nz(q.get("since")));
    m.put("classes", classOptions(q.get("class")));
    m.put("filtered", f.any());
    m.put("total", page.total());
    m.put("from", page.total() == 0 ? 0 : f.offset() + 1);
    m.put("to", f.offset() + page.items().size());
    m.put("rows", page.items().stream().map(this::listRow).toList());
    m.put("none", page.items().isEmpty());
    if (f.offset() > 0) {
      m.put("prev", link(q, Math.max(0, f.offset() - PAGE_SIZE)));
    }
    if (f.offset() + page.items().size() < page.total()) {
      m.put("next", link(q, f.offset() + PAGE_SIZE));
    }
    return page(200, list, m);
  }

  /** One incident: excerpt, fields, explanation, next steps, related Xids, lemon score, job. */
  Response incident(Map<String, String> q) {
    String id = q.get("id");
    Optional<Incident> found = id == null ? Optional.empty() : store.get(id);
    if (found.isEmpty()) {
      return page(
          404,
          error,
          Map.of(
              "title",
              "Incident not found",
              "message",
              "No incident "
                  + (id == null ? "(no id given)" : id)
                  + " is held (it may be older)."));
    }
    Incident i = found.get();
    Map<String, Object> m = IncidentView.detail(i);
    String gpu = IncidentView.field(i, "gpu");
    m.put("title", IncidentView.title(i) + " on " + nz(i.host()));
    int lemon = lemons.score(i.host(), gpu, clock.instant());
    m.put("lemon", lemon);
    m.put("lemonKnown", gpu != null && i.host() != null);
    m.put("lemonSuspect", lemon >= 2);
    gpus.forIncident(i).ifPresent(g -> m.put("ledger", GpuHealthView.of(g)));
    jobFailures.forIncident(i).ifPresent(f -> m.put("jobFailure", JobFailureView.of(f, i)));
    List<Map<String, Object>> xids =
        related(i, o -> o.fields().get("xid") != null && sameGpu(i, o), IncidentView::xidRow);
    m.put("xids", xids);
    m.put("noXids", xids.isEmpty());
    if (i.job() != null) {
      List<Map<String, Object>> job = related(i, o -> i.job().equals(o.job()), IncidentView::row);
      m.put("jobIncidents", job);
      m.put("noJobIncidents", job.isEmpty());
      m.put("jobLink", "/?job=" + enc(i.job()));
    }
    if (i.rootId() != null && !i.root()) {
      m.put("rootLink", "/incident?id=" + enc(i.rootId()));
    }
    return page(200, detail, m);
  }

  /**
   * Every class's section, under the anchor {@code #class} as in {@code docs/taxonomy.md}: the
   * runbook alerts link when no {@code runbook_base_url} is set, served where the incident page is
   * (GPU clusters often reach no internet).
   */
  Response taxonomy() {
    List<Map<String, Object>> classes = new ArrayList<>();
    for (var c : IncidentView.TAXONOMY.classes()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("id", c.id());
      m.put("title", c.title());
      m.put("severity", c.severity());
      m.put("suspect", c.suspect());
      m.put("explanation", nz(c.explanation()));
      m.put("nextSteps", c.nextSteps());
      m.put("hasNextSteps", !c.nextSteps().isEmpty());
      classes.add(m);
    }
    return page(200, taxonomy, Map.of("title", "cudawatch incident classes", "classes", classes));
  }

  GpuHealthStore gpus() {
    return gpus;
  }

  JobFailureStore jobFailures() {
    return jobFailures;
  }

  /** A row of the list, with its failed job's culprit when the job has a failure record. */
  private Map<String, Object> listRow(Incident i) {
    Map<String, Object> r = IncidentView.row(i);
    r.put("culprit", jobFailures.forIncident(i).map(JobFailureView::culprit).orElse(""));
    return r;
  }

  /** Other incidents held that {@code p} accepts, newest first. */
  private List<Map<String, Object>> related(
      Incident i,
      Predicate<Incident> p,
      java.util.function.Function<Incident, Map<String, Object>> view) {
    return store.find(o -> !o.id().equals(i.id()) && p.test(o), 0, RELATED_LIMIT).items().stream()
        .map(view)
        .toList();
  }

  /** Same host, and the same GPU when both name one (a kernel Xid may name only its PCI bus). */
  private static boolean sameGpu(Incident a, Incident b) {
    if (a.host() == null || !a.host().equals(b.host())) {
      return false;
    }
    String ga = IncidentView.field(a, "gpu");
    String gb = IncidentView.field(b, "gpu");
    return ga == null || gb == null || ga.equals(gb);
  }

  private List<Map<String, Object>> classOptions(String selected) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (var c : IncidentView.TAXONOMY.classes()) {
      out.add(Map.of("id", c.id(), "title", c.title(), "selected", c.id().equals(selected)));
    }
    return out;
  }

  private static String link(Map<String, String> q, int offset) {
    StringBuilder b = new StringBuilder("/?");
    for (String k : List.of("host", "class", "job", "gpu", "since")) {
      if (q.get(k) != null && !q.get(k).isEmpty()) {
        b.append(k).append('=').append(enc(q.get(k))).append('&');
      }
    }
    return b.append("offset=").append(offset).toString();
  }

  static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  private Response page(int status, Template t, Map<String, Object> model) {
    Map<String, Object> m = new LinkedHashMap<>(model);
    m.put("css", css);
    byte[] body = t.execute(m).getBytes(StandardCharsets.UTF_8);
    return new Response(status, "text/html; charset=utf-8", body, headers);
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }

  /** The list's filters; empty parameters mean "any". */
  record Filter(String host, String cls, String job, String gpu, Instant since, int offset)
      implements Predicate<Incident> {
    static Filter parse(Map<String, String> q, Instant now) {
      int offset;
      try {
        offset = Integer.parseInt(q.getOrDefault("offset", "0"));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("offset: not an integer");
      }
      if (offset < 0) {
        throw new IllegalArgumentException("offset: must be at least 0");
      }
      return new Filter(
          blank(q.get("host")),
          blank(q.get("class")),
          blank(q.get("job")),
          blank(q.get("gpu")),
          since(blank(q.get("since")), now),
          offset);
    }

    /** {@code 30s}, {@code 10m}, {@code 2h}, {@code 7d} before now, or an ISO-8601 instant. */
    static Instant since(String s, Instant now) {
      if (s == null) {
        return null;
      }
      Matcher m = RELATIVE.matcher(s);
      if (m.matches()) {
        long n = Long.parseLong(m.group(1));
        Duration d =
            switch (m.group(2)) {
              case "s" -> Duration.ofSeconds(n);
              case "m" -> Duration.ofMinutes(n);
              case "h" -> Duration.ofHours(n);
              default -> Duration.ofDays(n);
            };
        return now.minus(d);
      }
      try {
        return Instant.parse(s);
      } catch (DateTimeParseException e) {
        throw new IllegalArgumentException(
            "since: expected a duration such as 10m, 2h, 7d or an instant such as"
                + " 2026-11-22T03:00:00Z");
      }
    }

    private static String blank(String s) {
      return s == null || s.isBlank() ? null : s.trim();
    }

    boolean any() {
      return host != null || cls != null || job != null || gpu != null || since != null;
    }

    @Override
    public boolean test(Incident i) {
      return (host == null || host.equals(i.host()))
          && (cls == null || cls.equals(i.incidentClass()))
          && (job == null || job.equals(i.job()))
          && (gpu == null || gpu.equals(IncidentView.field(i, "gpu")))
          && (since == null || (i.detectedTime() != null && !i.detectedTime().isBefore(since)));
    }
  }

  private static Reader reader(String name) {
    InputStream in = IncidentPages.class.getResourceAsStream("pages/" + name);
    if (in == null) {
      throw new IllegalStateException("missing page template " + name);
    }
    return new InputStreamReader(in, StandardCharsets.UTF_8);
  }

  private static String text(String name) {
    try (Reader r = reader(name)) {
      StringBuilder b = new StringBuilder();
      char[] buf = new char[4096];
      for (int n; (n = r.read(buf)) > 0; ) {
        b.append(buf, 0, n);
      }
      return b.toString();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The CSP source of an inline style: its SHA-256, base64. */
  static String sha256(String s) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
      return "sha256-" + Base64.getEncoder().encodeToString(d);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
