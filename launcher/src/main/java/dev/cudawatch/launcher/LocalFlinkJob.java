package dev.cudawatch.launcher;

import java.time.Duration;
import java.time.Instant;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.minicluster.MiniClusterJobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;

/**
 * The processor job on a MiniCluster of this JVM, started the way {@code executeAsync} starts a
 * local job, but holding the cluster so {@code local} can say when the job is really ready: every
 * task running and one checkpoint completed, so the Kafka source reads and the exactly-once sinks
 * commit. Until then a failure written to a log would wait seconds for the job to come up.
 */
final class LocalFlinkJob implements AutoCloseable {
  private final MiniCluster cluster;
  private final JobClient client;
  private final JobID id;

  private LocalFlinkJob(MiniCluster cluster, JobID id) {
    this.cluster = cluster;
    this.id = id;
    this.client =
        new MiniClusterJobClient(
            id,
            cluster,
            Thread.currentThread().getContextClassLoader(),
            MiniClusterJobClient.JobFinalizationBehavior.SHUTDOWN_CLUSTER);
  }

  /**
   * Starts a MiniCluster with {@code parallelism} slots and submits the job built in {@code env}.
   */
  static LocalFlinkJob start(
      StreamExecutionEnvironment env, Configuration conf, int parallelism, String name)
      throws Exception {
    return submit(cluster(conf, parallelism), env.getStreamGraph(), name);
  }

  /**
   * Starts a MiniCluster with {@code parallelism} slots and no job: it needs no broker, so {@code
   * local} starts it beside the broker and {@link #submit}s once the topics exist.
   */
  static MiniCluster cluster(Configuration conf, int parallelism) throws Exception {
    // MiniClusterConfiguration fills in the TaskExecutor's memory for local execution itself; a
    // second adjustment here made Flink warn, 700 characters an option, before local's banner
    Configuration c = new Configuration(conf);
    MiniCluster cluster =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setConfiguration(c)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(parallelism)
                .build());
    cluster.start();
    return cluster;
  }

  /** Submits {@code graph} to {@code cluster}; closes the cluster when that fails. */
  static LocalFlinkJob submit(MiniCluster cluster, StreamGraph graph, String name)
      throws Exception {
    graph.setJobName(name);
    try {
      JobID id = cluster.submitJob(graph.getJobGraph()).get().getJobID();
      return new LocalFlinkJob(cluster, id);
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
  }

  JobClient client() {
    return client;
  }

  /** Checkpoints the job has completed. */
  long completedCheckpoints() throws Exception {
    AccessExecutionGraph g = cluster.getExecutionGraph(id).get();
    return g.getCheckpointStatsSnapshot() == null
        ? 0
        : g.getCheckpointStatsSnapshot().getCounts().getNumberOfCompletedCheckpoints();
  }

  /** Whether every task runs and a checkpoint has completed. */
  boolean ready() throws Exception {
    AccessExecutionGraph g = cluster.getExecutionGraph(id).get();
    if (g.getState() != JobStatus.RUNNING || completedCheckpoints() < 1) {
      return false;
    }
    for (AccessExecutionVertex v : g.getAllExecutionVertices()) {
      if (v.getExecutionState() != ExecutionState.RUNNING) {
        return false;
      }
    }
    return true;
  }

  /** Waits until {@link #ready}; throws when the job failed or {@code timeout} passed. */
  void awaitReady(Duration timeout) throws Exception {
    await(this::ready, "running with a completed checkpoint", timeout);
  }

  /**
   * Waits until {@code n} more checkpoints have completed. A barrier follows the records the source
   * read before it, so records the broker had before the call have passed every operator once the
   * source fetched them before one of those barriers (at 100 ms checkpoints, all but a slow fetch).
   */
  void awaitCheckpoints(int n, Duration timeout) throws Exception {
    long target = completedCheckpoints() + n;
    await(() -> completedCheckpoints() >= target, n + " more completed checkpoints", timeout);
  }

  private interface Condition {
    boolean met() throws Exception;
  }

  private void await(Condition c, String what, Duration timeout) throws Exception {
    Instant deadline = Instant.now().plus(timeout);
    while (!c.met()) {
      JobStatus s = client.getJobStatus().get();
      if (s.isGloballyTerminalState()) {
        throw new IllegalStateException("the Flink job stopped while starting: " + s);
      }
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException("the Flink job was not " + what + " after " + timeout);
      }
      Thread.sleep(10); // polls the in-process cluster, not a network service
    }
  }

  @Override
  public void close() {
    try {
      client.cancel().get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      // the job may already be gone
    }
    try {
      cluster.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      throw new IllegalStateException("the local Flink cluster did not stop: " + e.getMessage(), e);
    }
  }
}
