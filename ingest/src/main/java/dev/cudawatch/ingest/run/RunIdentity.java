package dev.cudawatch.ingest.run;

import dev.cudawatch.ingest.attribution.GpuInventory;
import dev.cudawatch.ingest.attribution.RankSources;
import dev.cudawatch.ingest.attribution.RunAttribution;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Who a wrapped job is (job, rank, GPU), for its records. The environment is known at once; the GPU
 * inventory that maps {@code CUDA_VISIBLE_DEVICES} to physical GPUs comes from nvidia-smi, which a
 * wedged GPU makes hang: its answer is awaited at most {@code inventoryWait} on the shipping
 * thread, lines then ship with what is known, and later lines get the GPU once it comes.
 */
public final class RunIdentity {
  private final String host;
  private final Map<String, String> env;
  private final String jobFlag;
  private final String configuredJob;
  private final String generatedJob = "run-" + UUID.randomUUID().toString().substring(0, 8);
  private final long pid;
  private final String runId;
  private final Clock clock;
  private final CompletableFuture<GpuInventory> inventory;
  private final long waitUntilNanos;
  private volatile boolean hurry;
  private RunRecords withInventory;
  private RunRecords withoutInventory;

  public RunIdentity(
      String host,
      Map<String, String> env,
      String jobFlag,
      String configuredJob,
      long pid,
      String runId,
      Clock clock,
      CompletableFuture<GpuInventory> inventory,
      Duration inventoryWait) {
    this.host = host;
    this.env = env;
    this.jobFlag = jobFlag;
    this.configuredJob = configuredJob;
    this.pid = pid;
    this.runId = runId;
    this.clock = clock;
    this.inventory = inventory;
    this.waitUntilNanos = System.nanoTime() + inventoryWait.toNanos();
  }

  /** The records' builder: with the GPU inventory when it has come, else without it. */
  RunRecords records() throws InterruptedException {
    if (withInventory != null) {
      return withInventory;
    }
    GpuInventory inv = null;
    try {
      // in slices: once the job has ended, its lines are spooled with what is known
      for (long left; inv == null && !hurry && (left = waitUntilNanos - System.nanoTime()) > 0; ) {
        try {
          inv = inventory.get(Math.min(left, 50_000_000L), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
          // wait on
        }
      }
      if (inv == null) {
        inv = inventory.getNow(null);
      }
    } catch (ExecutionException e) {
      inv = null;
    }
    if (inv != null) {
      withInventory = build(inv);
      return withInventory;
    }
    if (withoutInventory == null) {
      withoutInventory = build(GpuInventory.empty());
    }
    return withoutInventory;
  }

  /** The job has ended: stop waiting for nvidia-smi. */
  void hurry() {
    hurry = true;
  }

  private RunRecords build(GpuInventory inv) {
    RunAttribution who = RunAttribution.of(env, jobFlag, configuredJob, inv);
    if (who.job() == null) {
      who = RunAttribution.of(env, generatedJob, null, inv);
      who.attribution().put("job", "generated (no --job, SLURM_JOB_ID, TORCHELASTIC_RUN_ID)");
    }
    // the kernel names the process in its Xid lines (pid=...): the processor maps it to the job
    who.attribution().put("pid", String.valueOf(pid));
    return new RunRecords(host, who, runId, clock);
  }

  /**
   * What the child's environment gets besides this process's: {@code CUDAWATCH_JOB} naming the job
   * when it is known ({@code --job}, the environment, the configuration), so every process under
   * the run carries it and the agent can join a kernel line's pid to the job. Nothing when the job
   * is not known (a generated id names only this run's records).
   */
  public static Map<String, String> childEnvironment(
      Map<String, String> env, String jobFlag, String configuredJob) {
    String job = RunAttribution.of(env, jobFlag, configuredJob, GpuInventory.empty()).job();
    return job == null || job.equals(env.get(RankSources.RUN_JOB))
        ? Map.of()
        : Map.of(RankSources.RUN_JOB, job);
  }

  /** Asks nvidia-smi on a daemon thread when the environment needs it; never blocks the caller. */
  public static CompletableFuture<GpuInventory> inventory(
      Map<String, String> env, String nvidiaSmi) {
    if (!RunAttribution.wantsInventory(env)) {
      return CompletableFuture.completedFuture(GpuInventory.empty());
    }
    CompletableFuture<GpuInventory> f = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try {
                f.complete(GpuInventory.query(nvidiaSmi));
              } catch (Throwable e) {
                f.complete(GpuInventory.empty());
              }
            },
            "cudawatch-run-gpus");
    t.setDaemon(true);
    t.start();
    return f;
  }
}
