package dev.cudawatch.common;

import java.util.List;
import java.util.Map;

/** Every Kafka topic cudawatch reads or writes, defined once. */
public final class Topics {
  /** Lines from training jobs, kernel logs and GPU memory samples, written by the agent. */
  public static final String LOGS = "cudawatch.logs";

  /** Classified incidents, written exactly once by the processor. */
  public static final String INCIDENTS = "cudawatch.incidents";

  /** Alert state changes (firing/resolved), written exactly once by the processor. */
  public static final String ALERTS = "cudawatch.alerts";

  /** Records that could not be read, with the reason, from any stage. */
  public static final String DEAD_LETTER = "cudawatch.deadletter";

  /** One record per failed job: its root cause and the consequences, written by the processor. */
  public static final String JOB_FAILURES = "cudawatch.job-failures";

  /**
   * Remediation recommendations (the GPU health ledger's repair ladder) and what rules in shadow
   * mode would have alerted: observe-only, written exactly once by the processor.
   */
  public static final String ACTIONS = "cudawatch.actions";

  public static final List<String> ALL =
      List.of(LOGS, INCIDENTS, ALERTS, DEAD_LETTER, JOB_FAILURES, ACTIONS);

  /**
   * Topic-level settings each topic needs, beyond the cluster's defaults. The logs topic takes the
   * broker's clock ({@code LogAppendTime}): records are stamped by the node that produced them, and
   * a broker refuses a producer's time more than {@code log.message.timestamp.after.max.ms} (1 h)
   * ahead, so a node whose clock is a year ahead could ship nothing. The broker's append time is
   * also the trusted ingest time the job clamps event times to.
   */
  public static Map<String, String> configs(String topic) {
    return LOGS.equals(topic) ? Map.of("message.timestamp.type", "LogAppendTime") : Map.of();
  }

  private Topics() {}
}
