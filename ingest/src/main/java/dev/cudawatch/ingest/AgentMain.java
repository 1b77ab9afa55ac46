package dev.cudawatch.ingest;

import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.ingest.ship.Shipper;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cudawatch agent}: follows this node's training logs and ships them to Kafka. */
@Command(
    name = "agent",
    mixinStandardHelpOptions = true,
    description = "Ship training logs to Kafka without losing a line.")
public final class AgentMain implements Callable<Integer> {
  @Option(names = "--config", paramLabel = "FILE", description = "agent YAML configuration")
  Path config;

  @Option(
      names = "--bootstrap-servers",
      paramLabel = "HOST:PORT",
      description = "overrides kafka.bootstrap_servers")
  String bootstrap;

  @Option(names = "--replay", paramLabel = "DIR", description = "first ship every file of DIR once")
  Path replay;

  public static void main(String[] args) {
    System.exit(new CommandLine(new AgentMain()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    AgentSettings s =
        new ConfigLoader("CUDAWATCH_AGENT", System.getenv()).load(config, AgentSettings.class);
    if (bootstrap != null) {
      s = s.with(s.kafka().withBootstrapServers(bootstrap), s.files(), s.stateDir());
    }
    try (Shipper shipper = new Shipper(s.kafka());
        Agent agent = new Agent(s, shipper, Clock.systemUTC())) {
      if (replay != null) {
        System.err.println(
            "cudawatch agent: replayed " + agent.replay(replay) + " lines from " + replay);
      }
      Thread loop = new Thread(agent, "cudawatch-agent");
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    try {
                      agent.close();
                    } catch (java.io.IOException e) {
                      System.err.println("cudawatch agent: " + e.getMessage());
                    }
                  }));
      System.err.println("cudawatch agent: following " + s.files() + " as host " + s.host());
      loop.start();
      loop.join();
    }
    return 0;
  }
}
