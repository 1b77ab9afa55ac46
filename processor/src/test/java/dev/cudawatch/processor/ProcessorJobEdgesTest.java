package dev.cudawatch.processor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.processor.config.ProcessorSettings;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamEdge;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.junit.jupiter.api.Test;

/**
 * The job's network edges as Flink builds them: those that carry every line (or progress line, GPU
 * sample, job signal) keep Flink's buffer timeout; those on a failing line's way to its alert
 * (incidents, rule events, alerts) send each record at once.
 */
class ProcessorJobEdgesTest {
  static final Set<String> LINE_EDGES =
      Set.of("lines", "memory-samples", "gpu-holders", "step-times", "job-activity");

  @Test
  void onlyTheEdgesThatCarryLinesWaitToFillABuffer() throws Exception {
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.getExecutionEnvironment(ProcessorMain.noGenericTypes());
    ProcessorSettings s =
        ProcessorSettings.builder()
            .kafka(new KafkaSettings("127.0.0.1:9", Map.of()))
            .rules(List.of())
            .build();
    ProcessorMain.configure(env, s);
    ProcessorMain.job(s).build(env);
    StreamGraph graph = env.getStreamGraph();

    Map<String, Long> timeouts = new TreeMap<>();
    for (StreamNode node : graph.getStreamNodes()) {
      for (StreamEdge e : node.getOutEdges()) {
        timeouts.merge(node.getOperatorName(), e.getBufferTimeout(), Math::max);
      }
    }
    assertTrue(timeouts.keySet().containsAll(LINE_EDGES), timeouts.toString());
    assertTrue(timeouts.containsKey("classify"), timeouts.toString());
    for (var t : timeouts.entrySet()) {
      long want =
          LINE_EDGES.contains(t.getKey())
              ? ProcessorJob.LINE_EDGES_BUFFER_TIMEOUT_MS
              : ProcessorJob.INCIDENT_EDGES_BUFFER_TIMEOUT_MS;
      assertEquals(want, t.getValue(), "the buffer timeout of " + t.getKey() + "'s edges");
    }
  }
}
