package dev.cudawatch.ingest;

import dev.cudawatch.common.cli.Cli;
import dev.cudawatch.common.cli.LogOptions;
import dev.cudawatch.common.cli.ServiceOptions;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cudawatch agent}: follows this node's logs and ships them to Kafka. */
@Command(
    name = "agent",
    description =
        "Ship training logs, kernel logs and GPU memory samples to Kafka without losing a line.")
public final class AgentMain implements Callable<Integer> {
  @CommandLine.Mixin LogOptions logOptions;

  @CommandLine.Mixin ServiceOptions service;

  @Option(names = "--stdin", description = "also ship what arrives on standard input")
  boolean stdin;

  @Option(names = "--replay", paramLabel = "DIR", description = "first ship every file of DIR once")
  Path replay;

  public static void main(String[] args) {
    Cli.main(new AgentMain(), args);
  }

  @Override
  public Integer call() throws Exception {
    AgentSettings s = AgentSettings.load(service.config(), System.getenv());
    // when the agent itself began, its configuration read (a bad one is its one line, exit 2)
    System.err.println("cudawatch agent: starting");
    if (service.bootstrapServers() != null) {
      s = s.toBuilder().kafka(service.kafka(s.kafka())).build();
    }
    CountDownLatch stop = new CountDownLatch(1);
    CountDownLatch closed = new CountDownLatch(1);
    // the node's zone rides on the clock: nvidia-smi prints local times without one
    try (AgentRuntime runtime = new AgentRuntime(s, Clock.systemDefaultZone())) {
      if (replay != null) {
        System.err.println(
            "cudawatch agent: replayed "
                + runtime.agent().replay(replay)
                + " lines from "
                + replay);
      }
      runtime.start(stdin);
      // SIGTERM: let the agent flush, wait for acknowledgements and checkpoint before the JVM exits
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    stop.countDown();
                    try {
                      closed.await();
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  }));
      System.err.println(
          "cudawatch agent: following "
              + s.files()
              + " as host "
              + s.host()
              + (runtime.httpPort() > 0
                  ? "; metrics on http://" + s.httpHost() + ":" + runtime.httpPort() + "/metrics"
                  : ""));
      stop.await();
    } finally {
      closed.countDown();
    }
    return 0;
  }
}
