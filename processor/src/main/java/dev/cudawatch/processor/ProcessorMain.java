package dev.cudawatch.processor;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.processor.rules.RuleSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Entry point of the Flink job: {@code flink run -c dev.cudawatch.processor.ProcessorMain
 * cudawatch-processor.jar --config processor.yaml}, or in-process through the launcher.
 */
@Command(
    name = "processor",
    mixinStandardHelpOptions = true,
    description = "Run the cudawatch Flink job against a Kafka cluster.")
public final class ProcessorMain implements Callable<Integer> {
  @Option(names = "--config", paramLabel = "FILE", description = "processor YAML configuration")
  Path config;

  @Option(
      names = "--bootstrap-servers",
      paramLabel = "HOST:PORT",
      description = "overrides kafka.bootstrap_servers")
  String bootstrap;

  public static void main(String[] args) {
    System.exit(new CommandLine(new ProcessorMain()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    ProcessorSettings s =
        new ConfigLoader("CUDAWATCH_PROCESSOR", System.getenv())
            .load(config, ProcessorSettings.class);
    if (bootstrap != null) {
      s = s.withKafka(s.kafka().withBootstrapServers(bootstrap));
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    configure(env, s);
    job(s).build(env);
    env.execute("cudawatch-processor");
    return 0;
  }

  /** Checkpointing drives the exactly-once sinks; the interval bounds incident latency. */
  public static void configure(StreamExecutionEnvironment env, ProcessorSettings s) {
    env.setParallelism(s.parallelism());
    env.enableCheckpointing(s.checkpointIntervalMs(), CheckpointingMode.EXACTLY_ONCE);
    env.getCheckpointConfig()
        .setMinPauseBetweenCheckpoints(Math.min(500, s.checkpointIntervalMs() / 2));
  }

  /** The job with Kafka source and sinks. */
  public static ProcessorJob job(ProcessorSettings s) throws IOException {
    Map<String, byte[]> catalogs = new LinkedHashMap<>();
    for (String c : s.catalogs()) {
      catalogs.put(c, Files.readAllBytes(Path.of(c)));
    }
    Map<String, byte[]> ruleFiles = new LinkedHashMap<>();
    for (String r : s.rules()) {
      ruleFiles.put(r, Files.readAllBytes(Path.of(r)));
    }
    return new ProcessorJob(
        KafkaConnectors.logSource(s),
        KafkaConnectors.<Incident>exactlyOnceSink(s, Topics.INCIDENTS, Incident::host),
        KafkaConnectors.<Alert>exactlyOnceSink(s, Topics.ALERTS, Alert::fingerprint),
        KafkaConnectors.<DeadLetter>exactlyOnceSink(s, Topics.DEAD_LETTER, DeadLetter::stage),
        s,
        catalogs,
        RuleSet.load(ruleFiles));
  }
}
