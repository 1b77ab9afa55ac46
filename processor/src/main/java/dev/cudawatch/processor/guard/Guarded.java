package dev.cudawatch.processor.guard;

import org.apache.flink.api.common.functions.AbstractRichFunction;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.functions.Function;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.streaming.api.TimeDomain;
import org.apache.flink.streaming.api.TimerService;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Wraps each per-record operator of the job in {@link PoisonGuard}: the operator keeps its own
 * code, metrics and state; a record (or a timer) it fails on becomes a dead letter on {@link
 * PoisonGuard#DEAD_LETTERS} instead of a task failure. One wrapper per kind of function the job
 * uses; each only adapts the function's calls to {@link PoisonGuard#run}.
 */
public final class Guarded {
  private Guarded() {}

  public static <I, O> ProcessFunction<I, O> process(String name, ProcessFunction<I, O> fn) {
    return new Process<>(name, fn);
  }

  /** A flat map as a process function, so it has the dead-letter side output. */
  public static <I, O> ProcessFunction<I, O> flatMap(String name, FlatMapFunction<I, O> fn) {
    return new FlatMap<>(name, fn);
  }

  public static <K, I, O> KeyedProcessFunction<K, I, O> keyed(
      String name, KeyedProcessFunction<K, I, O> fn) {
    return new Keyed<>(name, fn);
  }

  public static <K, A, B, O> KeyedCoProcessFunction<K, A, B, O> keyedCo(
      String name, KeyedCoProcessFunction<K, A, B, O> fn) {
    return new KeyedCo<>(name, fn);
  }

  /** The inner function sees this operator's runtime context, so its state and metrics are its. */
  private static void open(Function inner, RuntimeContext rc, OpenContext ctx) throws Exception {
    if (inner instanceof AbstractRichFunction rich) {
      rich.setRuntimeContext(rc);
      rich.open(ctx);
    }
  }

  private static void close(Function inner) throws Exception {
    if (inner instanceof AbstractRichFunction rich) {
      rich.close();
    }
  }

  private static final class Process<I, O> extends ProcessFunction<I, O> {
    private static final long serialVersionUID = 1L;
    private final PoisonGuard guard;
    private final ProcessFunction<I, O> inner;

    Process(String name, ProcessFunction<I, O> inner) {
      this.guard = new PoisonGuard(name);
      this.inner = inner;
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
      guard.open(getRuntimeContext().getMetricGroup());
      Guarded.open(inner, getRuntimeContext(), ctx);
    }

    @Override
    public void close() throws Exception {
      Guarded.close(inner);
    }

    @Override
    public void processElement(I value, Context ctx, Collector<O> out) throws Exception {
      guard.run(
          value,
          (buf, side) ->
              inner.processElement(
                  value,
                  inner.new Context() {
                    @Override
                    public Long timestamp() {
                      return ctx.timestamp();
                    }

                    @Override
                    public TimerService timerService() {
                      return ctx.timerService();
                    }

                    @Override
                    public <X> void output(OutputTag<X> tag, X v) {
                      side.output(tag, v);
                    }
                  },
                  buf),
          out,
          ctx::output,
          ctx.timerService().currentProcessingTime());
    }
  }

  private static final class FlatMap<I, O> extends ProcessFunction<I, O> {
    private static final long serialVersionUID = 1L;
    private final PoisonGuard guard;
    private final FlatMapFunction<I, O> inner;

    FlatMap(String name, FlatMapFunction<I, O> inner) {
      this.guard = new PoisonGuard(name);
      this.inner = inner;
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
      guard.open(getRuntimeContext().getMetricGroup());
      Guarded.open(inner, getRuntimeContext(), ctx);
    }

    @Override
    public void close() throws Exception {
      Guarded.close(inner);
    }

    @Override
    public void processElement(I value, Context ctx, Collector<O> out) throws Exception {
      guard.run(
          value,
          (buf, side) -> inner.flatMap(value, buf),
          out,
          ctx::output,
          ctx.timerService().currentProcessingTime());
    }
  }

  private static final class Keyed<K, I, O> extends KeyedProcessFunction<K, I, O> {
    private static final long serialVersionUID = 1L;
    private final PoisonGuard guard;
    private final KeyedProcessFunction<K, I, O> inner;

    Keyed(String name, KeyedProcessFunction<K, I, O> inner) {
      this.guard = new PoisonGuard(name);
      this.inner = inner;
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
      guard.open(getRuntimeContext().getMetricGroup());
      Guarded.open(inner, getRuntimeContext(), ctx);
    }

    @Override
    public void close() throws Exception {
      Guarded.close(inner);
    }

    @Override
    public void processElement(I value, Context ctx, Collector<O> out) throws Exception {
      guard.run(
          value,
          (buf, side) ->
              inner.processElement(
                  value,
                  inner.new Context() {
                    @Override
                    public Long timestamp() {
                      return ctx.timestamp();
                    }

                    @Override
                    public TimerService timerService() {
                      return ctx.timerService();
                    }

                    @Override
                    public <X> void output(OutputTag<X> tag, X v) {
                      side.output(tag, v);
                    }

                    @Override
                    public K getCurrentKey() {
                      return ctx.getCurrentKey();
                    }
                  },
                  buf),
          out,
          ctx::output,
          ctx.timerService().currentProcessingTime());
    }

    /** A timer that throws would throw again after every restart: its key is dead-lettered. */
    @Override
    public void onTimer(long ts, OnTimerContext ctx, Collector<O> out) throws Exception {
      guard.run(
          "timer " + ts + " of " + ctx.getCurrentKey(),
          (buf, side) ->
              inner.onTimer(
                  ts,
                  inner.new OnTimerContext() {
                    @Override
                    public Long timestamp() {
                      return ctx.timestamp();
                    }

                    @Override
                    public TimerService timerService() {
                      return ctx.timerService();
                    }

                    @Override
                    public <X> void output(OutputTag<X> tag, X v) {
                      side.output(tag, v);
                    }

                    @Override
                    public TimeDomain timeDomain() {
                      return ctx.timeDomain();
                    }

                    @Override
                    public K getCurrentKey() {
                      return ctx.getCurrentKey();
                    }
                  },
                  buf),
          out,
          ctx::output,
          ctx.timerService().currentProcessingTime());
    }
  }

  private static final class KeyedCo<K, A, B, O> extends KeyedCoProcessFunction<K, A, B, O> {
    private static final long serialVersionUID = 1L;
    private final PoisonGuard guard;
    private final KeyedCoProcessFunction<K, A, B, O> inner;

    KeyedCo(String name, KeyedCoProcessFunction<K, A, B, O> inner) {
      this.guard = new PoisonGuard(name);
      this.inner = inner;
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
      guard.open(getRuntimeContext().getMetricGroup());
      Guarded.open(inner, getRuntimeContext(), ctx);
    }

    @Override
    public void close() throws Exception {
      Guarded.close(inner);
    }

    private KeyedCoProcessFunction<K, A, B, O>.Context wrap(Context ctx, PoisonGuard.Outputs side) {
      return inner.new Context() {
        @Override
        public Long timestamp() {
          return ctx.timestamp();
        }

        @Override
        public TimerService timerService() {
          return ctx.timerService();
        }

        @Override
        public <X> void output(OutputTag<X> tag, X v) {
          side.output(tag, v);
        }

        @Override
        public K getCurrentKey() {
          return ctx.getCurrentKey();
        }
      };
    }

    @Override
    public void processElement1(A value, Context ctx, Collector<O> out) throws Exception {
      guard.run(
          value,
          (buf, side) -> inner.processElement1(value, wrap(ctx, side), buf),
          out,
          ctx::output,
          ctx.timerService().currentProcessingTime());
    }

    @Override
    public void processElement2(B value, Context ctx, Collector<O> out) throws Exception {
      guard.run(
          value,
          (buf, side) -> inner.processElement2(value, wrap(ctx, side), buf),
          out,
          ctx::output,
          ctx.timerService().currentProcessingTime());
    }

    @Override
    public void onTimer(long ts, OnTimerContext ctx, Collector<O> out) throws Exception {
      guard.run(
          "timer " + ts + " of " + ctx.getCurrentKey(),
          (buf, side) ->
              inner.onTimer(
                  ts,
                  inner.new OnTimerContext() {
                    @Override
                    public Long timestamp() {
                      return ctx.timestamp();
                    }

                    @Override
                    public TimerService timerService() {
                      return ctx.timerService();
                    }

                    @Override
                    public <X> void output(OutputTag<X> tag, X v) {
                      side.output(tag, v);
                    }

                    @Override
                    public TimeDomain timeDomain() {
                      return ctx.timeDomain();
                    }

                    @Override
                    public K getCurrentKey() {
                      return ctx.getCurrentKey();
                    }
                  },
                  buf),
          out,
          ctx::output,
          ctx.timerService().currentProcessingTime());
    }
  }
}
