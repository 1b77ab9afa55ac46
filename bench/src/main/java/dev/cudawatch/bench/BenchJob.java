package dev.cudawatch.bench;

import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.processor.ProcessorMain;
import dev.cudawatch.processor.config.ProcessorSettings;
import java.nio.file.Path;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The processor job on a local MiniCluster (parallelism 2, 1 s checkpoints), as the harnesses run
 * it.
 */
final class BenchJob {
  private BenchJob() {}

  /**
   * Starts the job against {@code bootstrap}; checkpoints go to {@code checkpoints} if not null.
   */
  static JobClient start(String bootstrap, String name, Path checkpoints) throws Exception {
    ProcessorSettings s =
        ProcessorSettings.builder()
            .kafka(new KafkaSettings(bootstrap, Map.of()))
            .groupId(name)
            .parallelism(2)
            .checkpointIntervalMs(1000L)
            .transactionalIdPrefix(name)
            .build();
    Configuration conf = new Configuration();
    conf.setString("rest.bind-address", "127.0.0.1");
    conf.setString("rest.port", "0");
    if (checkpoints != null) {
      conf.setString("execution.checkpointing.dir", checkpoints.toUri().toString());
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
    ProcessorMain.configure(env, s);
    ProcessorMain.job(s).build(env);
    return env.executeAsync(name);
  }
}
