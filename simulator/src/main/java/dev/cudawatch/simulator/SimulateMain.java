package dev.cudawatch.simulator;

import dev.cudawatch.common.cli.Cli;
import dev.cudawatch.common.cli.LogOptions;
import dev.cudawatch.common.wire.WireJson;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cudawatch simulate}: writes a simulated fleet's logs and the ground truth. */
@Command(
    name = "simulate",
    description =
        "Write the logs of a simulated GPU fleet with injected failures of every class, as files"
            + " for agents or straight into Kafka, and a ground-truth file of what should be"
            + " detected. Seeded and deterministic.")
public final class SimulateMain implements Callable<Integer> {
  @CommandLine.Mixin LogOptions logOptions;

  @Option(names = "--hosts", defaultValue = "4", description = "nodes (default: ${DEFAULT-VALUE})")
  int hosts;

  @Option(
      names = "--gpus",
      defaultValue = "8",
      description = "GPUs and ranks per node (default: ${DEFAULT-VALUE})")
  int gpus;

  @Option(
      names = "--seconds",
      defaultValue = "300",
      description = "simulated duration (default: ${DEFAULT-VALUE})")
  long seconds;

  @Option(
      names = "--rate",
      defaultValue = "2000",
      description = "healthy lines per second, whole fleet (default: ${DEFAULT-VALUE})")
  int rate;

  @Option(
      names = "--failure-every",
      defaultValue = "10",
      paramLabel = "SECONDS",
      description = "one injected scenario every so often (default: ${DEFAULT-VALUE})")
  int failureEvery;

  @Option(names = "--seed", defaultValue = "42", description = "(default: ${DEFAULT-VALUE})")
  long seed;

  @Option(
      names = "--out",
      paramLabel = "DIR",
      description = "write HOST/JOB/rank-N.log, HOST/kern.log and HOST/nvidia-smi.csv here")
  Path out;

  @Option(
      names = "--bootstrap-servers",
      paramLabel = "HOST:PORT",
      description = "send records straight to cudawatch.logs instead")
  String bootstrap;

  @Option(
      names = "--truth",
      paramLabel = "FILE",
      description = "ground truth, JSON lines (default: DIR/truth.jsonl, or ./truth.jsonl)")
  Path truth;

  @Option(
      names = "--realtime",
      description = "write at wall-clock pace, starting now (otherwise as fast as possible)")
  boolean realtime;

  @Option(
      names = "--start",
      paramLabel = "TIME",
      description = "simulated start, ISO-8601 (default: now)")
  Instant start;

  @Option(
      names = "--health-scenarios",
      negatable = true,
      defaultValue = "true",
      fallbackValue = "true",
      description =
          "also write the slow-rank, job-slowdown and repair-ladder scenarios on nodes of their"
              + " own (default: on; --no-health-scenarios for the fleet alone)")
  boolean healthScenarios;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    Cli.main(new SimulateMain(), args);
  }

  @Override
  public Integer call() throws Exception {
    if ((out == null) == (bootstrap == null)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "give either --out DIR or --bootstrap-servers HOST:PORT");
    }
    SimSettings s;
    try {
      s =
          new SimSettings(
              hosts,
              gpus,
              seconds,
              rate,
              failureEvery,
              seed,
              (start != null ? start : Instant.now()).toEpochMilli());
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
    WithHealthScenarios sim = new WithHealthScenarios(s, healthScenarios);
    long wallStart = System.currentTimeMillis();
    long[] lines = {0};
    try (AutoCloseable sink =
        out != null ? new FilesOutput(out, realtime) : new KafkaOutput(bootstrap, seed)) {
      @SuppressWarnings("unchecked")
      Consumer<SimLine> write = (Consumer<SimLine>) sink;
      sim.run(
          l -> {
            if (realtime) {
              long wait =
                  (l.timeMillis() - s.startMillis()) - (System.currentTimeMillis() - wallStart);
              if (wait > 0) {
                sleep(wait);
              }
            }
            write.accept(l);
            lines[0]++;
          });
    }
    Path t =
        truth != null ? truth : (out != null ? out.resolve("truth.jsonl") : Path.of("truth.jsonl"));
    if (t.getParent() != null) {
      Files.createDirectories(t.getParent());
    }
    try (BufferedWriter w = Files.newBufferedWriter(t, StandardCharsets.UTF_8)) {
      for (Expected e : sim.truth()) {
        w.write(WireJson.toJson(e));
        w.write('\n');
      }
    }
    spec.commandLine()
        .getErr()
        .printf(
            "cudawatch simulate: %,d lines from %d hosts x %d GPUs over %d s simulated in %.1f s; %d expected detections in %s%n",
            lines[0],
            hosts,
            gpus,
            seconds,
            (System.currentTimeMillis() - wallStart) / 1000.0,
            sim.truth().size(),
            t);
    return 0;
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
