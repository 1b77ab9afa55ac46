package dev.cudawatch.processor.guard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.DeadLetter;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.junit.jupiter.api.Test;

/** A record or timer that throws becomes one dead letter; what it emitted first goes nowhere. */
class GuardedTest {
  static final OutputTag<String> SIDE = new OutputTag<>("side", Types.STRING);

  /** Emits, side-outputs, sets a timer, then throws on "bad" (and its timer throws too). */
  static final class Fails extends KeyedProcessFunction<String, String, String> {
    private static final long serialVersionUID = 1L;

    @Override
    public void processElement(String v, Context ctx, Collector<String> out) {
      out.collect("before " + v);
      ctx.output(SIDE, "side " + v);
      ctx.timerService().registerProcessingTimeTimer(100);
      if (v.startsWith("bad")) {
        throw new ArithmeticException("long overflow");
      }
    }

    @Override
    public void onTimer(long ts, OnTimerContext ctx, Collector<String> out) {
      throw new IllegalStateException("timer of " + ctx.getCurrentKey());
    }
  }

  @Test
  void aFailingRecordIsDeadLetteredOnceAndEmitsNothing() throws Exception {
    try (KeyedOneInputStreamOperatorTestHarness<String, String, String> h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            Guarded.keyed("op-x", new Fails()), v -> v, Types.STRING)) {
      h.open();
      h.processElement("good", 0);
      h.processElement("bad-1", 0);
      h.processElement("good-2", 0);
      assertEquals(List.of("before good", "before good-2"), h.extractOutputValues());
      assertEquals(
          List.of("side good", "side good-2"),
          h.getSideOutput(SIDE).stream().map(StreamRecord::getValue).toList());
      List<DeadLetter> dead = dead(h);
      assertEquals(1, dead.size());
      assertEquals("processor/op-x", dead.get(0).stage());
      assertTrue(
          dead.get(0).reason().startsWith("op-x: ArithmeticException: long overflow"),
          dead.get(0).reason());
      assertEquals("\"bad-1\"", dead.get(0).payload());

      h.setProcessingTime(200); // the timers of three keys throw: each is dead-lettered, no crash
      assertEquals(4, dead(h).size());
      assertTrue(dead(h).get(1).topic().startsWith("timer 100 of "), dead(h).get(1).topic());
    }
  }

  private static List<DeadLetter> dead(
      KeyedOneInputStreamOperatorTestHarness<String, String, String> h) {
    return h.getSideOutput(PoisonGuard.DEAD_LETTERS).stream().map(StreamRecord::getValue).toList();
  }
}
