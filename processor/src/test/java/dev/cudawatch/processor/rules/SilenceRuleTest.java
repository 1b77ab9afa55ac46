package dev.cudawatch.processor.rules;

import static dev.cudawatch.processor.rules.RuleFixtures.incident;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;

class SilenceRuleTest {
  private static final RuleSet RULES = RuleFixtures.RULES;
  private static final long MIN = 60_000;

  private static KeyedOneInputStreamOperatorTestHarness<String, JobSignal, Alert> harness()
      throws Exception {
    KeyedOneInputStreamOperatorTestHarness<String, JobSignal, Alert> h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            new SilenceRule(RULES, Duration.ofHours(24)), JobSignal::key, Types.STRING);
    h.open();
    return h;
  }

  private static void fail(KeyedOneInputStreamOperatorTestHarness<String, JobSignal, Alert> h)
      throws Exception {
    fail(h, "job-7");
  }

  private static void fail(
      KeyedOneInputStreamOperatorTestHarness<String, JobSignal, Alert> h, String job)
      throws Exception {
    List<JobSignal> out = new ArrayList<>();
    new JobFailures(RULES)
        .flatMap(incident("n1", "nccl_timeout", "node-3", job, Map.of(), 0, true), collector(out));
    assertEquals(1, out.size());
    h.processElement(out.get(0), 0);
  }

  private static void record(
      KeyedOneInputStreamOperatorTestHarness<String, JobSignal, Alert> h,
      JobActivity activity,
      RecordKind kind,
      long t)
      throws Exception {
    record(h, activity, kind, t, "job-7");
  }

  private static void record(
      KeyedOneInputStreamOperatorTestHarness<String, JobSignal, Alert> h,
      JobActivity activity,
      RecordKind kind,
      long t,
      String job)
      throws Exception {
    List<JobSignal> out = new ArrayList<>();
    activity.flatMap(
        LogRecord.builder().host("node-3").job(job).kind(kind).stream("stderr")
            .source("/logs/train.log")
            .offset(t)
            .eventTime(Instant.ofEpochMilli(t))
            .text("step")
            .build(),
        collector(out));
    for (JobSignal s : out) {
      h.processElement(s, t);
    }
  }

  private static <T> Collector<T> collector(List<T> out) {
    return new Collector<>() {
      @Override
      public void collect(T t) {
        out.add(t);
      }

      @Override
      public void close() {}
    };
  }

  private static JobActivity activity() {
    JobActivity a = new JobActivity(RULES, 1000);
    a.open(null);
    return a;
  }

  @Test
  void aJobSilentAfterAFailureFiresAndResolvesWhenItSpeaksAgain() throws Exception {
    try (var h = harness()) {
      JobActivity activity = activity();
      h.setProcessingTime(1_000);
      fail(h);
      h.setProcessingTime(1_000 + 9 * MIN);
      assertTrue(h.extractOutputValues().isEmpty(), "not yet 10 minutes");
      h.setProcessingTime(1_000 + 10 * MIN);
      List<Alert> out = h.extractOutputValues();
      assertEquals(1, out.size());
      Alert a = out.get(0);
      assertEquals("JobSilentAfterError", a.alertName());
      assertEquals(Alert.State.FIRING, a.state());
      assertEquals(
          Map.of(
              "alertname",
              "JobSilentAfterError",
              "severity",
              "warning",
              "host",
              "node-3",
              "job",
              "job-7"),
          a.labels());
      assertEquals(
          "Job job-7 on node-3 has written nothing for 10 minutes since nccl_timeout and has not"
              + " exited",
          a.annotations().get("summary"));

      h.setProcessingTime(1_000 + 12 * MIN);
      record(h, activity, RecordKind.LOG, 12 * MIN);
      out = h.extractOutputValues();
      assertEquals(2, out.size());
      assertEquals(Alert.State.RESOLVED, out.get(1).state());
      assertEquals(a.fingerprint(), out.get(1).fingerprint());
      assertEquals(0, h.numProcessingTimeTimers(), "no timers left");
      assertEquals(0, h.numKeyedStateEntries(), "no state left");
    }
  }

  @Test
  void aJobIdHoldingTheKeySeparatorResolvesWithTheLabelsItFiredWith() throws Exception {
    String job = "train|v2\\x|"; // '|' and '\' as a scheduler may allow in a job id
    try (var h = harness()) {
      JobActivity activity = activity();
      h.setProcessingTime(1_000);
      fail(h, job);
      h.setProcessingTime(1_000 + 10 * MIN);
      Alert firing = h.extractOutputValues().get(0);
      assertEquals(Alert.State.FIRING, firing.state());
      assertEquals(job, firing.labels().get("job"));
      assertEquals("node-3", firing.labels().get("host"));
      h.setProcessingTime(1_000 + 12 * MIN);
      record(h, activity, RecordKind.LOG, 12 * MIN, job);
      List<Alert> out = h.extractOutputValues();
      assertEquals(2, out.size());
      Alert resolved = out.get(1);
      assertEquals(Alert.State.RESOLVED, resolved.state());
      assertEquals(firing.labels(), resolved.labels());
      assertEquals(firing.fingerprint(), resolved.fingerprint());
      assertEquals(0, h.numKeyedStateEntries(), "no state left");
    }
  }

  @Test
  void ruleKeysReadBackEveryFieldAndLeaveOrdinaryKeysAsTheyWere() {
    assertEquals("R|node-3|job-7", RuleKeys.of("R", List.of("node-3", "job-7")));
    for (List<String> fields :
        List.of(
            List.of("R", "a|b", "c"),
            List.of("R", "a", "b|c"),
            List.of("R", "", "\\|", "x\\"),
            List.of("R|S", "|"))) {
      String key = RuleKeys.of(fields.get(0), fields.subList(1, fields.size()));
      assertEquals(fields, RuleKeys.parse(key), key);
      assertEquals(fields.get(0), RuleKeys.rule(key));
    }
  }

  @Test
  void outputAfterTheFailureOrAnExitKeepsItQuiet() throws Exception {
    try (var h = harness()) {
      JobActivity activity = activity();
      h.setProcessingTime(0);
      fail(h);
      h.setProcessingTime(8 * MIN);
      record(h, activity, RecordKind.LOG, 8 * MIN); // still writing: the timer moves on
      h.setProcessingTime(15 * MIN);
      assertTrue(h.extractOutputValues().isEmpty());
      record(h, activity, RecordKind.EXIT, 15 * MIN); // it exited: nothing hangs
      h.setProcessingTime(60 * MIN);
      assertTrue(h.extractOutputValues().isEmpty());
      assertEquals(0, h.numProcessingTimeTimers());
      assertEquals(0, h.numKeyedStateEntries());
    }
  }

  @Test
  void theAgentsQuietMarkerIsNoOutput() throws Exception {
    try (var h = harness()) {
      JobActivity activity = activity();
      h.setProcessingTime(0);
      fail(h);
      h.setProcessingTime(8 * MIN);
      record(h, activity, RecordKind.QUIET, 8 * MIN); // the agent: its writer paused
      h.setProcessingTime(10 * MIN);
      assertEquals(1, h.extractOutputValues().size(), "silent since the failure: it fires");
    }
  }

  @Test
  void anExitThatOvertakesItsFailureKeepsItQuiet() throws Exception {
    try (var h = harness()) {
      h.setProcessingTime(0);
      record(h, activity(), RecordKind.EXIT, 0);
      h.setProcessingTime(1_000);
      fail(h); // the incident is emitted once its traceback ends, after the exit record
      h.setProcessingTime(30 * MIN);
      assertTrue(h.extractOutputValues().isEmpty());
      assertEquals(0, h.numProcessingTimeTimers());
      assertEquals(0, h.numKeyedStateEntries());
    }
  }

  /**
   * A pipeline under load can deliver a failure's incident minutes after the job's exit record.
   * Event times decide: the job exited after it failed, so nothing hangs (once a flaky false
   * alert).
   */
  @Test
  void aFailureArrivingMinutesAfterTheExitStillKeepsItQuiet() throws Exception {
    try (var h = harness()) {
      h.setProcessingTime(0);
      record(h, activity(), RecordKind.EXIT, 5_000); // exited at 5 s, after failing at 0 s
      h.setProcessingTime(3 * MIN);
      fail(h); // the incident (event time 0) is three minutes late
      h.setProcessingTime(30 * MIN);
      assertTrue(h.extractOutputValues().isEmpty(), "no hang alert for a job that exited");
      assertEquals(0, h.numProcessingTimeTimers());
      assertEquals(0, h.numKeyedStateEntries());
    }
  }

  @Test
  void aRestartThatFailsAfterTheExitIsWatched() throws Exception {
    try (var h = harness()) {
      JobActivity activity = activity();
      h.setProcessingTime(0);
      record(h, activity, RecordKind.EXIT, -60_000); // an earlier run of the job ended
      record(h, activity, RecordKind.LOG, -30_000); // it was started again and writes
      fail(h); // and fails at 0 s, after that exit
      h.setProcessingTime(10 * MIN);
      List<Alert> out = h.extractOutputValues();
      assertEquals(1, out.size(), "the restarted run hangs");
      assertEquals(Alert.State.FIRING, out.get(0).state());
    }
  }

  @Test
  void healthyJobsLeaveNoStateAndActivityIsThinned() throws Exception {
    try (var h = harness()) {
      JobActivity activity = activity();
      List<JobSignal> out = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        activity.flatMap(
            LogRecord.builder().host("node-1").job("job-1").stream("stdout")
                .source("/l")
                .offset(i)
                .eventTime(Instant.ofEpochMilli(i * 100L))
                .text("loss")
                .build(),
            collector(out));
      }
      assertEquals(10, out.size(), "one signal per job per second of output");
      for (JobSignal s : out) {
        h.processElement(s, 0);
      }
      assertEquals(0, h.numKeyedStateEntries());
      assertEquals(0, h.numProcessingTimeTimers());
    }
  }

  @Test
  void aJobThatNeverReturnsIsForgottenAfterTheStateTtl() throws Exception {
    try (var h = harness()) {
      h.setProcessingTime(0);
      fail(h);
      h.setProcessingTime(10 * MIN);
      h.setProcessingTime(10 * MIN + 24 * 60 * MIN);
      List<Alert> out = h.extractOutputValues();
      assertEquals(2, out.size());
      assertEquals(Alert.State.RESOLVED, out.get(1).state());
      assertEquals(0, h.numProcessingTimeTimers());
      assertEquals(0, h.numKeyedStateEntries());
    }
  }
}
