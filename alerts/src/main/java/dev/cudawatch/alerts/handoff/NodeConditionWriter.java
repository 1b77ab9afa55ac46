package dev.cudawatch.alerts.handoff;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cudawatch.alerts.store.GpuHealthStore;
import dev.cudawatch.common.lifecycle.Uninterruptibly;
import dev.cudawatch.common.wire.Action;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes each node's GPU recommendations as a node condition, as node-problem-detector does: a
 * strategic merge patch of {@code status.conditions} (merged by {@code type}, so the kubelet's own
 * conditions stay), with {@code lastTransitionTime} kept while the status is unchanged and {@code
 * lastHeartbeatTime} renewed on every write. It writes that condition and nothing else: it never
 * cordons, drains, evicts or resets anything.
 *
 * <p>A node is written when a recommendation about one of its GPUs arrives, and every node known is
 * written again each heartbeat interval (so a recommendation past its TTL turns the condition
 * False). Writes run on one thread; a 5xx or an I/O error is tried again a bounded number of times,
 * and a write that still fails is counted by reason and left to the next heartbeat.
 */
public final class NodeConditionWriter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeConditionWriter.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final NodeConditionSettings settings;
  private final GpuHealthStore gpus;
  private final Clock clock;
  private final KubeApi api;
  private final Counter writes;
  private final Counter failures;
  private final Set<String> dirty = new LinkedHashSet<>();
  private final Set<String> known; // nodes written, bounded like the GPU store
  private final Thread worker;
  private volatile boolean running = true;
  private long nextHeartbeat;

  public NodeConditionWriter(
      NodeConditionSettings settings,
      GpuHealthStore gpus,
      int maxNodes,
      PrometheusRegistry registry,
      Clock clock) {
    this.settings = settings;
    this.gpus = gpus;
    this.clock = clock;
    this.api = new KubeApi(settings);
    this.known =
        java.util.Collections.newSetFromMap(
            new LinkedHashMap<>() {
              private static final long serialVersionUID = 1L;

              @Override
              protected boolean removeEldestEntry(Map.Entry<String, Boolean> e) {
                return size() > maxNodes;
              }
            });
    this.writes =
        Counter.builder()
            .name("cudawatch_node_condition_writes_total")
            .help("Node conditions written to the Kubernetes API (the observe-only hand-off)")
            .register(registry);
    this.failures =
        Counter.builder()
            .name("cudawatch_node_condition_write_failures_total")
            .help("Node-condition writes that failed after their retries, by reason")
            .labelNames("reason")
            .register(registry);
    this.worker = new Thread(this::loop, "cudawatch-node-conditions");
    this.worker.setDaemon(true);
  }

  public void start() {
    nextHeartbeat = System.nanoTime() + settings.heartbeatIntervalMs() * 1_000_000L;
    worker.start();
  }

  /** A recommendation arrived (already in the GPU store): its node is written soon. */
  public void onAction(Action a) {
    if (!Action.RECOMMENDATION.equals(a.kind()) || a.host() == null) {
      return;
    }
    synchronized (dirty) {
      dirty.add(a.host());
      dirty.notifyAll();
    }
  }

  private void loop() {
    while (running) {
      String node;
      synchronized (dirty) {
        long wait = (nextHeartbeat - System.nanoTime()) / 1_000_000L;
        if (dirty.isEmpty() && wait > 0) {
          try {
            dirty.wait(wait); // woken by a recommendation, or the heartbeat is due
          } catch (InterruptedException e) {
            return;
          }
        }
        if (System.nanoTime() - nextHeartbeat >= 0) {
          nextHeartbeat = System.nanoTime() + settings.heartbeatIntervalMs() * 1_000_000L;
          synchronized (known) {
            dirty.addAll(known);
          }
        }
        if (dirty.isEmpty()) {
          continue;
        }
        var it = dirty.iterator();
        node = it.next();
        it.remove();
      }
      try {
        write(node);
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        failures.labelValues("error").inc();
        LOG.error("node condition of {}: {}", node, e.toString());
      }
    }
  }

  /**
   * Writes the node's condition now (the worker's step; tests call it directly). True when the API
   * server took it.
   */
  public boolean write(String node) throws InterruptedException {
    if (!KubeApi.validNodeName(node)) {
      fail(node, "invalid_node_name", "not a Kubernetes node name");
      return false;
    }
    synchronized (known) {
      known.add(node);
    }
    Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
    NodeCondition c =
        NodeCondition.of(gpus.onHost(node), now, Duration.ofMillis(settings.recommendationTtlMs()));
    String status = c.problem() ? "True" : "False";
    HttpResponse<String> got = call(node, () -> api.getNode(node));
    if (got == null) {
      return false;
    }
    String transition = now.toString();
    try {
      for (JsonNode old : JSON.readTree(got.body()).path("status").path("conditions")) {
        if (settings.conditionType().equals(old.path("type").asText())
            && status.equals(old.path("status").asText())
            && old.hasNonNull("lastTransitionTime")) {
          transition = old.get("lastTransitionTime").asText();
        }
      }
    } catch (IOException e) {
      fail(node, "bad_response", "the node read back is not JSON");
      return false;
    }
    Map<String, Object> condition = new LinkedHashMap<>();
    condition.put("type", settings.conditionType());
    condition.put("status", status);
    condition.put("reason", c.reason());
    condition.put("message", c.message());
    condition.put("lastHeartbeatTime", now.toString());
    condition.put("lastTransitionTime", transition);
    byte[] patch;
    try {
      patch = JSON.writeValueAsBytes(Map.of("status", Map.of("conditions", List.of(condition))));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    if (call(node, () -> api.patchStatus(node, patch)) == null) {
      return false;
    }
    writes.inc();
    return true;
  }

  /** One call with bounded retries; null (and counted) when it failed for good. */
  private HttpResponse<String> call(String node, KubeRetries.Call c) throws InterruptedException {
    KubeRetries.Outcome o = KubeRetries.run(settings, c);
    if (!o.ok()) {
      // a node's 404 keeps its established name in the metric
      fail(node, "not_found".equals(o.reason()) ? "node_not_found" : o.reason(), o.detail());
    }
    return o.response();
  }

  private void fail(String node, String reason, String detail) {
    failures.labelValues(reason).inc();
    LOG.warn("node condition of {} not written: {} ({})", node, reason, detail);
  }

  @Override
  public void close() {
    running = false;
    worker.interrupt();
    Uninterruptibly.join(worker, Duration.ofSeconds(10));
  }
}
