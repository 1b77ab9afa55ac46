package dev.cudawatch.processor.health;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Action;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.Incident;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.runtime.PojoSerializer;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * Two GPUs: GPU-aaa fails with a double-bit ECC Xid three times, each asking for a reset; GPU-bbb
 * fails once with Xid 48 and once falls off the bus (Xid 79 and the Xid 154 that asks for a node
 * reboot, one failure). Only GPU-aaa, failing again after two resets, escalates to inspection, and
 * then to RMA when it fails once more; a verdict re-published for an incident counts it once.
 */
class GpuHealthLedgerTest {
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");

  private static Incident xid(String uuid, int gpu, int code, String line, Instant at, String id) {
    return Incident.builder(id, "gpu_xid")
        .severity("critical")
        .suspect("hardware")
        .fields(Map.of("xid", (long) code, "gpu", (long) gpu, "gpu_uuid", uuid))
        .summary("Xid " + code)
        .host("node-a")
        .excerpt(List.of(line))
        .eventTime(at)
        .detectedTime(at)
        .build();
  }

  private static Incident dbe(String uuid, int gpu, Instant at, String id) {
    return xid(
        uuid,
        gpu,
        48,
        "NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, name=python3, An uncorrectable double bit error",
        at,
        id);
  }

  @Test
  void onlyTheGpuFailingAfterTwoResetsEscalates() throws Exception {
    GpuHealthLedger ledger = new GpuHealthLedger(HealthSettings.defaults());
    try (var h =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(ledger), GpuHealthLedger::keyOf, Types.STRING)) {
      h.open();
      h.setProcessingTime(0);
      List<Incident> in = new ArrayList<>();
      in.add(dbe("GPU-aaa", 0, T0, "a1"));
      in.add(dbe("GPU-bbb", 1, T0.plusSeconds(30), "b1"));
      in.add(dbe("GPU-aaa", 0, T0.plusSeconds(600), "a2"));
      in.add(dbe("GPU-aaa", 0, T0.plusSeconds(600), "a2").withVerdict("hardware_suspect"));
      in.add(
          xid(
              "GPU-bbb",
              1,
              79,
              "NVRM: Xid (PCI:0000:5e:00): 79, pid=1, name=python3, GPU has fallen off the bus.",
              T0.plusSeconds(900),
              "b2"));
      in.add(
          xid(
              "GPU-bbb",
              1,
              154,
              "NVRM: Xid (PCI:0000:5e:00): 154, GPU recovery action changed from 0x0 (None) to"
                  + " 0x2 (Node Reboot Required)",
              T0.plusSeconds(901),
              "b3"));
      in.add(dbe("GPU-aaa", 0, T0.plusSeconds(1200), "a3"));
      in.add(dbe("GPU-aaa", 0, T0.plusSeconds(1800), "a4"));
      for (Incident i : in) {
        assertTrue(GpuHealthLedger.relevant(i), i.toString());
        h.processElement(i, i.eventTime().toEpochMilli());
      }
      List<Action> out = h.extractOutputValues();
      List<String> aaa =
          out.stream().filter(a -> "GPU-aaa".equals(a.gpuUuid())).map(Action::action).toList();
      List<String> bbb =
          out.stream().filter(a -> "GPU-bbb".equals(a.gpuUuid())).map(Action::action).toList();
      assertEquals(List.of("reset_gpu", "reset_gpu", "inspect", "rma"), aaa);
      assertEquals(List.of("reset_gpu", "reboot_node"), bbb, "one reboot for Xid 79 and its 154");
      Action inspect = out.stream().filter(a -> a.action().equals("inspect")).findFirst().get();
      assertEquals(1, inspect.ladderLevel());
      assertEquals(2, inspect.recoveries());
      assertEquals(3, inspect.incidents());
      assertEquals(600.0, inspect.mtbiSeconds(), 1e-9, "failures 10 minutes apart");
      assertEquals("node-a", inspect.host());
      assertEquals("0", inspect.gpu());
      assertEquals(Action.RECOMMENDATION, inspect.kind());
      assertNull(out.get(0).mtbiSeconds(), "no MTBI before a second failure");

      List<Alert> alerts = new ArrayList<>();
      for (StreamRecord<Alert> a : h.getSideOutput(GpuHealthLedger.ALERTS)) {
        alerts.add(a.getValue());
      }
      assertEquals(2, alerts.size(), "inspection, then RMA, for GPU-aaa only: " + alerts);
      assertTrue(alerts.stream().allMatch(a -> "GPU-aaa".equals(a.labels().get("gpu_uuid"))));
      assertEquals("GpuRepairLadder", alerts.get(0).labels().get("alertname"));
      assertEquals("1", alerts.get(0).annotations().get("ladder_level"));
      assertEquals("2", alerts.get(1).annotations().get("ladder_level"));

      h.setProcessingTime(Duration.ofDays(30).toMillis() + 1);
      assertEquals(0, h.numKeyedStateEntries(), "no state left");
      assertEquals(0, h.numEventTimeTimers() + h.numProcessingTimeTimers(), "no timers left");
    }
  }

  @Test
  void thresholdPerXid() {
    HealthSettings s = HealthSettings.builder().ladderResetsPerXid(Map.of("79", 1)).build();
    assertEquals(1, s.resetsBeforeEscalation(79));
    assertEquals(2, s.resetsBeforeEscalation(48));
    assertEquals(2, s.resetsBeforeEscalation(null));
  }

  @Test
  void xid154NamesItsAction() {
    assertEquals(
        "reset_gpu",
        RecoveryActions.fromMessage(
            "NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 (None) to 0x1"
                + " (GPU Reset Required)"));
    assertNull(
        RecoveryActions.fromMessage(
            "NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x1 (GPU Reset"
                + " Required) to 0x0 (None)"));
  }

  @Test
  void aSlowRankIsAFindingNotAFailure() throws Exception {
    Incident slow =
        Incident.builder("s1", "slow_rank")
            .severity("warning")
            .fields(Map.of("rank", 5L, "gpu", 1L, "gpu_uuid", "GPU-ccc"))
            .summary("Rank 5 slow")
            .host("node-b")
            .job("j")
            .eventTime(T0)
            .detectedTime(T0)
            .build();
    assertTrue(GpuHealthLedger.relevant(slow));
    try (var h =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(new GpuHealthLedger(HealthSettings.defaults())),
            GpuHealthLedger::keyOf,
            Types.STRING)) {
      h.open();
      h.processElement(slow, 0);
      Action a = h.extractOutputValues().get(0);
      assertEquals("check_slow_gpu", a.action());
      assertEquals(0, a.incidents());
      assertNull(h.getSideOutput(GpuHealthLedger.ALERTS), "no alert for a finding");
    }
  }

  @Test
  void stateHasExplicitSerializersNotKryo() {
    assertInstanceOf(
        PojoSerializer.class,
        TypeInformation.of(GpuHealth.class).createSerializer(new SerializerConfigImpl()));
  }
}
