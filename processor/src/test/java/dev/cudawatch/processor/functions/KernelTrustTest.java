package dev.cudawatch.processor.functions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Action;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.processor.health.GpuHealthLedger;
import dev.cudawatch.processor.health.HealthSettings;
import dev.cudawatch.processor.jobs.AttributeKernelIncidents;
import dev.cudawatch.processor.jobs.GroupJobFailures;
import dev.cudawatch.processor.rules.MatchRules;
import dev.cudawatch.processor.rules.RuleEvent;
import dev.cudawatch.processor.rules.RuleSet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.operators.StreamFlatMap;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;

/**
 * Only the kernel speaks for the hardware, operator by operator: the same Xid 79 line, once from
 * the kernel log and once printed by a job (a health check running dmesg), through the classifier,
 * the paging, the rules, the job grouping, the Xid correlation, the kernel attribution and the GPU
 * ledger. The kernel's line does all of it; the job's is one informational incident that reaches
 * none of them.
 */
class KernelTrustTest {
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");
  private static final String XID_79 =
      "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus.";

  @Test
  void aJobsKernelLineIsAQuoteThatNothingActsOn() throws Exception {
    LogRecord job =
        LogRecord.builder().host("node-a").job("train-7").gpu(3).stream("stdout")
            .source("run:train-7/stdout")
            .sourceId("run-1")
            .eventTime(T0)
            .text(XID_79)
            .attribution(Map.of("gpu", "CUDA_VISIBLE_DEVICES", "pid", "4242"))
            .build();
    List<Incident> quoted = classify(job);
    assertEquals(1, quoted.size(), quoted.toString());
    Incident q = quoted.get(0);
    assertEquals("kernel_line_quoted", q.incidentClass());
    assertEquals("info", q.severity());
    assertEquals("gpu_xid", q.fields().get("quoted_class"));
    assertEquals("train-7", q.job());

    assertFalse(GpuHealthLedger.relevant(q), "no GPU ledger entry");
    assertFalse(CorrelateXid.relevant(q), "no Xid verdict");
    assertFalse(AttributeKernelIncidents.wanted(q), "not the kernel's to attribute");
    assertFalse(GroupJobFailures.groupable(q), "not a job's failure");
    assertEquals(List.of(), alerts(q), "never pages");
    assertEquals(List.of(), ruleEvents(q), "no rule counts it");
    assertEquals(List.of(), ledger(quoted), "no action");
  }

  @Test
  void theSameLineFromTheKernelLogDoesAllOfIt() throws Exception {
    LogRecord kernel =
        LogRecord.builder().host("node-a").kind(RecordKind.KERNEL).stream("kmsg")
            .source("/dev/kmsg")
            .sourceId("boot-1")
            .eventTime(T0)
            .text(XID_79)
            .build()
            .withGpu(3, null, "kernel line's PCI address");
    List<Incident> found = classify(kernel);
    assertEquals(1, found.size(), found.toString());
    Incident x = found.get(0);
    assertEquals("gpu_xid", x.incidentClass());
    assertEquals("critical", x.severity());
    assertTrue(GpuHealthLedger.relevant(x));
    assertTrue(CorrelateXid.relevant(x));
    assertTrue(AttributeKernelIncidents.wanted(x));
    List<Alert> pages = alerts(x);
    assertEquals(1, pages.size());
    assertEquals("3", pages.get(0).labels().get("gpu"));
    assertFalse(ruleEvents(x).isEmpty(), "the repeated-Xid rules count it");
    List<Action> actions = ledger(found);
    assertEquals(List.of("reboot_node"), actions.stream().map(Action::action).toList());
    assertEquals("node-a", actions.get(0).host());
  }

  /** The record's incidents, closed by its stream's quiet marker. */
  private static List<Incident> classify(LogRecord r) throws Exception {
    ClassifyStream fn =
        new ClassifyStream(
            Map.of(), ProcessorSettings.builder().flushAfterMs(60_000L).stateTtlHours(1L).build());
    try (var h =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(fn), LogRecord::streamKey, Types.STRING)) {
      h.open();
      h.setProcessingTime(T0.toEpochMilli());
      h.processElement(r, T0.toEpochMilli());
      h.processElement(r.quietAt(r.text().length() + 1L, T0), T0.toEpochMilli());
      return new ArrayList<>(h.extractOutputValues());
    }
  }

  private static List<Alert> alerts(Incident i) {
    List<Alert> out = new ArrayList<>();
    new IncidentAlerts().flatMap(i, collector(out));
    return out;
  }

  private static List<RuleEvent> ruleEvents(Incident i) throws Exception {
    try (var h =
        new OneInputStreamOperatorTestHarness<>(
            new StreamFlatMap<>(new MatchRules(RuleSet.load(Map.of()))))) {
      h.open();
      h.processElement(i, i.eventTime().toEpochMilli());
      return new ArrayList<>(h.extractOutputValues());
    }
  }

  /** The ledger behind its filter, as the job wires it. */
  private static List<Action> ledger(List<Incident> in) throws Exception {
    try (var h =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(new GpuHealthLedger(HealthSettings.defaults())),
            GpuHealthLedger::keyOf,
            Types.STRING)) {
      h.open();
      h.setProcessingTime(0);
      for (Incident i : in) {
        if (GpuHealthLedger.relevant(i)) {
          h.processElement(i, i.eventTime().toEpochMilli());
        }
      }
      return new ArrayList<>(h.extractOutputValues());
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
}
