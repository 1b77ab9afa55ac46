package dev.cudawatch.alerts.handoff;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cudawatch.common.lifecycle.Uninterruptibly;
import dev.cudawatch.common.wire.Incident;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Posts a Kubernetes Event ({@code events.k8s.io/v1}) on the failing pod of each paging incident,
 * where {@code kubectl describe pod} and {@code kubectl get events} show it: type Warning, reason
 * the class, note the summary and the incident page's link. A repeat of the same class on the same
 * pod updates the first Event's {@code series} (count, last seen) instead of adding one, as
 * client-go's recorder does; that cache is bounded (the least recently seen pod is forgotten).
 *
 * <p>It never holds the pipeline: {@link #onIncident} only offers to a bounded queue (full: the
 * Event is dropped and counted); one thread posts at most {@code pod_events_per_minute}, each post
 * with the node conditions' auth and bounded retries; a post that fails is counted and dropped.
 */
public final class PodEventWriter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PodEventWriter.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> PAGING = Set.of("critical", "error");
  static final String CONTROLLER = "cudawatch.dev/alerts";
  private static final int MAX_NOTE = 1024; // the API's limit on an Event's note
  private static final int MAX_SERIES = 10_000;
  private static final DateTimeFormatter MICRO_TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

  /** An Event to post. */
  record Pending(PodRef pod, String reason, String note) {}

  /** The Event already posted for a pod and reason, and how often it happened. */
  private record Series(String name, int count) {}

  private final NodeConditionSettings settings;
  private final String externalUrl;
  private final String instance;
  private final Clock clock;
  private final KubeApi api;
  private final BlockingQueue<Pending> queue;
  private final Map<String, Series> series =
      new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Series> e) {
          return size() > MAX_SERIES;
        }
      };
  private final Counter posted;
  private final Counter failures;
  private final Thread worker;
  private volatile boolean running = true;
  private long nextToken; // System.nanoTime() when the next post may go
  private long names;

  public PodEventWriter(
      NodeConditionSettings settings,
      String externalUrl,
      String instance,
      PrometheusRegistry registry,
      Clock clock) {
    this.settings = settings;
    this.externalUrl = externalUrl;
    this.instance = instance.length() > 128 ? instance.substring(0, 128) : instance;
    this.clock = clock;
    this.api = new KubeApi(settings);
    this.queue = new ArrayBlockingQueue<>(settings.podEventQueue());
    this.posted =
        Counter.builder()
            .name("cudawatch_pod_events_total")
            .help("Kubernetes Events on failing pods: created, or a repeat counted in a series")
            .labelNames("result")
            .register(registry);
    this.failures =
        Counter.builder()
            .name("cudawatch_pod_event_failures_total")
            .help("Pod Events not written, by reason (queue_full: dropped before any call)")
            .labelNames("reason")
            .register(registry);
    this.worker = new Thread(this::loop, "cudawatch-pod-events");
    this.worker.setDaemon(true);
  }

  public void start() {
    nextToken = System.nanoTime();
    worker.start();
  }

  /** A new incident: queued for its pod when it pages and names a pod; never blocks. */
  public void onIncident(Incident i) {
    if (!i.root() || !PAGING.contains(i.severity())) {
      return;
    }
    PodRef pod = PodRef.of(i);
    if (pod == null) {
      return;
    }
    if (!queue.offer(new Pending(pod, i.incidentClass(), note(i)))) {
      failures.labelValues("queue_full").inc();
    }
  }

  private String note(Incident i) {
    String link = externalUrl + "/incident?id=" + URLEncoder.encode(i.id(), StandardCharsets.UTF_8);
    String summary = i.summary() == null ? i.incidentClass() : i.summary();
    int room = MAX_NOTE - link.length() - 1;
    if (summary.length() > room) {
      summary = summary.substring(0, Math.max(0, room - 1)) + "…";
    }
    return summary + " " + link;
  }

  private void loop() {
    long interval = TimeUnit.MINUTES.toNanos(1) / settings.podEventsPerMinute();
    while (running) {
      try {
        Pending p = queue.poll(1, TimeUnit.SECONDS);
        if (p == null) {
          continue;
        }
        long wait = nextToken - System.nanoTime();
        if (wait > 0) {
          TimeUnit.NANOSECONDS.sleep(wait); // the rate limit: Events wait in the bounded queue
        }
        nextToken = Math.max(nextToken, System.nanoTime() - interval) + interval;
        post(p);
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        failures.labelValues("error").inc();
        LOG.error("pod event: {}", e.toString());
      }
    }
  }

  /** Posts one Event, or counts the repeat in the series of the one posted before. */
  boolean post(Pending p) throws InterruptedException {
    String key = p.pod().namespace() + "/" + p.pod().name() + "/" + p.reason();
    String now = MICRO_TIME.format(clock.instant());
    Series s;
    synchronized (series) {
      s = series.get(key);
    }
    if (s != null) {
      int count = s.count() + 1;
      byte[] patch =
          json(Map.of("series", Map.of("count", count, "lastObservedTime", now), "note", p.note()));
      KubeRetries.Outcome o =
          KubeRetries.run(settings, () -> api.patchEvent(p.pod().namespace(), s.name(), patch));
      if (o.ok()) {
        remember(key, new Series(s.name(), count));
        posted.labelValues("series").inc();
        return true;
      }
      if (o.status() != 404) {
        return fail(p, o);
      }
      // the first Event expired (the API server keeps Events about an hour): start again
    }
    String name = name(p.pod().name());
    Map<String, Object> regarding = new LinkedHashMap<>();
    regarding.put("apiVersion", "v1");
    regarding.put("kind", "Pod");
    regarding.put("namespace", p.pod().namespace());
    regarding.put("name", p.pod().name());
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("apiVersion", "events.k8s.io/v1");
    e.put("kind", "Event");
    e.put("metadata", Map.of("name", name, "namespace", p.pod().namespace()));
    e.put("eventTime", now);
    e.put("reportingController", CONTROLLER);
    e.put("reportingInstance", instance);
    e.put("action", "Diagnosed");
    e.put("reason", p.reason());
    e.put("type", "Warning");
    e.put("note", p.note());
    e.put("regarding", regarding);
    byte[] body = json(e);
    KubeRetries.Outcome o =
        KubeRetries.run(settings, () -> api.createEvent(p.pod().namespace(), body));
    if (!o.ok()) {
      return fail(p, o);
    }
    remember(key, new Series(name, 1));
    posted.labelValues("created").inc();
    return true;
  }

  private void remember(String key, Series s) {
    synchronized (series) {
      series.put(key, s);
    }
  }

  /** The pod's name and a unique suffix, as client-go names Events. */
  private String name(String pod) {
    String base = pod.length() > 200 ? pod.substring(0, 200).replaceAll("[-.]+$", "") : pod;
    return base + "." + Long.toHexString(clock.millis()) + Long.toHexString(names++);
  }

  private boolean fail(Pending p, KubeRetries.Outcome o) {
    failures.labelValues(o.reason()).inc();
    LOG.warn(
        "pod event on {}/{} not written: {} ({})",
        p.pod().namespace(),
        p.pod().name(),
        o.reason(),
        o.detail());
    return false;
  }

  private static byte[] json(Object o) {
    try {
      return JSON.writeValueAsBytes(o);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Events waiting to be posted. */
  public int queued() {
    return queue.size();
  }

  @Override
  public void close() {
    running = false;
    worker.interrupt();
    Uninterruptibly.join(worker, Duration.ofSeconds(10));
  }
}
