package dev.cudawatch.processor;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.cli.Cli;
import dev.cudawatch.common.cli.LogOptions;
import dev.cudawatch.common.cli.ServiceOptions;
import dev.cudawatch.common.config.ConfigException;
import dev.cudawatch.common.wire.Action;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.JobFailure;
import dev.cudawatch.diagnosis.catalog.CatalogLoader;
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.processor.rules.RuleSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.core.execution.CheckpointingMode;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Entry point of the Flink job: {@code flink run -c dev.cudawatch.processor.ProcessorMain
 * cudawatch-processor.jar --config processor.yaml}, or in-process through the launcher.
 */
@Command(name = "processor", description = "Run the cudawatch Flink job against a Kafka cluster.")
public final class ProcessorMain implements Callable<Integer> {
  @CommandLine.Mixin LogOptions logOptions;

  public static final String JOB_NAME = "cudawatch-processor";
  private static final Logger LOG = LoggerFactory.getLogger(ProcessorMain.class);

  @CommandLine.Mixin ServiceOptions service;

  @Option(
      names = "--submit",
      paramLabel = "HOST:PORT",
      description =
          "submit the job to a Flink cluster through its JobManager's REST endpoint and return"
              + " (without it, the job runs here, or under `flink run`)")
  String submit;

  @Option(
      names = "--jar",
      paramLabel = "FILE",
      description = "the job jar --submit ships (default: ${sys:cudawatch.processor.jar})",
      defaultValue = "${sys:cudawatch.processor.jar}")
  Path jar;

  @Option(
      names = "--from-savepoint",
      paramLabel = "PATH",
      description =
          "restore state from a savepoint or retained checkpoint (upgrades, rule changes)")
  String savepoint;

  @Option(
      names = "--no-topic-setup",
      description =
          "do not create missing topics or set the logs topic's timestamp type (when an operator"
              + " manages topics; see docs/deployment.md)")
  boolean noTopicSetup;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    Cli.main(new ProcessorMain(), args);
  }

  @Override
  public Integer call() throws Exception {
    ProcessorSettings s = ProcessorSettings.load(service.config(), System.getenv());
    if (service.bootstrapServers() != null) {
      s = s.toBuilder().kafka(service.kafka(s.kafka())).build();
    }
    if (!noTopicSetup) {
      setUpTopics(s);
    }
    Configuration conf = new Configuration();
    if (savepoint != null) {
      conf.setString("execution.state-recovery.path", savepoint);
    }
    if (submit != null) {
      return submit(s, conf);
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    configure(env, s);
    job(s).build(env);
    env.execute(JOB_NAME);
    return 0;
  }

  /**
   * Best effort: without the rights to create or alter topics the job still runs, and the one
   * warning says what an operator must set.
   */
  private static void setUpTopics(ProcessorSettings s) {
    try {
      TopicSetup.Report r =
          TopicSetup.ensure(
              TopicSetup.clientProps(s), TopicSetup.wanted(s), Optional.empty(), Optional.empty());
      LOG.info("{}", r.summary());
    } catch (Exception e) {
      Throwable c = e instanceof ExecutionException ? e.getCause() : e;
      LOG.warn(
          "cannot set up the topics ({}): create them and set message.timestamp.type=LogAppendTime"
              + " on each logs topic by hand (docs/deployment.md)",
          c.toString());
    }
  }

  private int submit(ProcessorSettings s, Configuration conf) throws Exception {
    int colon = submit.lastIndexOf(':');
    if (colon <= 0 || !submit.substring(colon + 1).matches("\\d{1,5}")) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--submit takes HOST:PORT of the JobManager's REST endpoint");
    }
    if (jar == null || !Files.isRegularFile(jar)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "--submit needs the job jar (--jar): "
              + (jar == null ? "none given" : jar + " not found"));
    }
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.createRemoteEnvironment(
            submit.substring(0, colon),
            Integer.parseInt(submit.substring(colon + 1)),
            conf,
            jar.toString());
    configure(env, s);
    job(s).build(env);
    JobClient client = env.executeAsync(JOB_NAME);
    spec.commandLine()
        .getOut()
        .println("submitted job " + client.getJobID() + " (" + JOB_NAME + ") to " + submit);
    spec.commandLine().getOut().flush();
    return 0;
  }

  /** Checkpointing drives the exactly-once sinks; the interval bounds incident latency. */
  public static void configure(StreamExecutionEnvironment env, ProcessorSettings s) {
    env.setParallelism(s.parallelism());
    // Records and incidents are immutable, so chained operators may share them instead of each
    // getting a serializer copy (parsed records fan out to three operators).
    env.getConfig().enableObjectReuse();
    // Every type in state and on every edge has an explicit, versioned serializer: a type that
    // would fall back to Kryo fails the job at submission instead of silently pinning savepoints
    // to Kryo's format.
    env.configure(noGenericTypes());
    env.enableCheckpointing(s.checkpointIntervalMs(), CheckpointingMode.EXACTLY_ONCE);
    env.getCheckpointConfig()
        .setMinPauseBetweenCheckpoints(Math.min(500, s.checkpointIntervalMs() / 2));
  }

  /** {@code pipeline.generic-types: false}: no type may fall back to Kryo. */
  public static Configuration noGenericTypes() {
    Configuration c = new Configuration();
    c.set(PipelineOptions.GENERIC_TYPES, false);
    return c;
  }

  private static byte[] readListed(String file, String key) {
    try {
      return Files.readAllBytes(Path.of(file));
    } catch (IOException e) {
      throw ConfigException.atKey(key, file + ": cannot read: " + e.getMessage());
    }
  }

  /** The job with Kafka source and sinks. */
  public static ProcessorJob job(ProcessorSettings s) throws IOException {
    Map<String, byte[]> catalogs = new LinkedHashMap<>();
    for (String c : s.catalogs()) {
      catalogs.put(c, readListed(c, "catalogs"));
    }
    // a bad catalog fails here, with its file and line, not later inside the running job
    new CatalogLoader().loadTexts(catalogs);
    Map<String, byte[]> ruleFiles = new LinkedHashMap<>();
    for (String r : s.rules()) {
      ruleFiles.put(r, readListed(r, "rules"));
    }
    return ProcessorJob.builder(s)
        .source(KafkaConnectors.logSource(s))
        .incidents(KafkaConnectors.<Incident>exactlyOnceSink(s, Topics.INCIDENTS, Incident::host))
        .alerts(KafkaConnectors.<Alert>exactlyOnceSink(s, Topics.ALERTS, Alert::fingerprint))
        .deadLetters(
            KafkaConnectors.<DeadLetter>exactlyOnceSink(s, Topics.DEAD_LETTER, DeadLetter::stage))
        .jobFailures(
            KafkaConnectors.<JobFailure>exactlyOnceSink(s, Topics.JOB_FAILURES, JobFailure::job))
        .actions(KafkaConnectors.<Action>exactlyOnceSink(s, Topics.ACTIONS, Action::id))
        .catalogs(catalogs)
        .rules(RuleSet.load(ruleFiles))
        .build();
  }
}
