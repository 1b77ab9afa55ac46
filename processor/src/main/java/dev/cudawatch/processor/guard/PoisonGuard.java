package dev.cudawatch.processor.guard;

import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.processor.records.DeadLetterCodec;
import dev.cudawatch.processor.records.RawRecord;
import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.util.Collector;
import org.apache.flink.util.FlinkRuntimeException;
import org.apache.flink.util.OutputTag;

/**
 * The job's one answer to a record that fails an operator: the record goes to the dead-letter
 * output with the operator's name and the reason, is counted, and the job goes on. Without it the
 * task fails, restarts from the last checkpoint, meets the same record, and fails again forever.
 *
 * <p>What one record's work emits is buffered and forwarded only when the work completes, so a
 * failing record emits nothing (no half an incident batch), and a failure downstream of a chained
 * operator is never mistaken for this record's. Keyed state is the operator's to keep whole: each
 * guarded operator computes before it writes, or resets the state its failing record touched (see
 * each operator). Failures of the machinery itself (state backend, interrupts) are not the record's
 * and still fail the task, where a restart cures them.
 */
public final class PoisonGuard implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Every operator's dead letters, to {@code cudawatch.deadletter}. */
  public static final OutputTag<DeadLetter> DEAD_LETTERS =
      new OutputTag<>("dead-letters", DeadLetterCodec.TYPE);

  /** Records the operator dead-lettered, unreadable or failing. */
  public static final String DEAD_LETTER_METRIC = "cudawatch_dead_letters";

  /** Of those, records whose work threw (a bug or an unchecked value, not a known bad shape). */
  public static final String POISON_METRIC = "cudawatch_poison_records";

  /** Reasons are one line, this long at most. */
  static final int MAX_REASON_CHARS = 512;

  private final String operator;
  private transient Counter deadLetters;
  private transient Counter poisoned;

  public PoisonGuard(String operator) {
    this.operator = operator;
  }

  public String operator() {
    return operator;
  }

  /** Registers this operator's counters; before it, failures are dead-lettered uncounted. */
  public void open(MetricGroup metrics) {
    deadLetters = metrics.counter(DEAD_LETTER_METRIC);
    poisoned = metrics.counter(POISON_METRIC);
  }

  /** One record's work: emits to the buffered collector and side outputs it is given. */
  @FunctionalInterface
  public interface Work<O> {
    void run(Collector<O> out, Outputs side) throws Exception;
  }

  /** Side outputs (a buffering stand-in for the context's). */
  @FunctionalInterface
  public interface Outputs {
    <X> void output(OutputTag<X> tag, X value);
  }

  /**
   * Runs {@code work} for {@code record}; when it completes its output goes on, when it throws the
   * output is dropped and the record dead-lettered instead. Returns whether the work completed.
   */
  public <O> boolean run(Object record, Work<O> work, Collector<O> out, Outputs side, long nowMs)
      throws Exception {
    Buffer<O> buf = new Buffer<>();
    try {
      work.run(buf, buf);
    } catch (Exception | StackOverflowError e) {
      if (!theRecords(e)) {
        throw e;
      }
      side.output(DEAD_LETTERS, letter(record, e, nowMs));
      return false;
    }
    buf.forward(out, side); // outside the try: a failure after here is not this record's
    return true;
  }

  /** Whether a failure is the record's (dead-letter it) or the machinery's (fail the task). */
  private static boolean theRecords(Throwable e) {
    if (e instanceof WireFormatException) {
      return true;
    }
    return !(e instanceof InterruptedException
        || e instanceof IOException
        || e instanceof FlinkRuntimeException);
  }

  /** The dead letter for a record this operator failed on, counted. */
  DeadLetter letter(Object record, Throwable e, long nowMs) {
    if (deadLetters != null) {
      deadLetters.inc();
      if (!(e instanceof WireFormatException)) {
        poisoned.inc();
      }
    }
    String why =
        e instanceof WireFormatException
            ? String.valueOf(e.getMessage())
            : e.getClass().getSimpleName() + ": " + e.getMessage();
    return DeadLetter.of(
        operator.equals("parse-records") ? "processor" : "processor/" + operator,
        origin(record),
        oneLine(operator.equals("parse-records") ? why : operator + ": " + why),
        payload(record),
        Instant.ofEpochMilli(nowMs));
  }

  /** Where a record came from: a Kafka position, a log record's id, an incident's id. */
  static String origin(Object record) {
    if (record instanceof RawRecord r) {
      return r.topic + "/" + r.partition + "@" + r.offset;
    }
    if (record instanceof LogRecord r) {
      return "record " + r.host() + " " + r.id();
    }
    if (record instanceof Incident i) {
      return "incident " + i.id();
    }
    if (record instanceof String s) {
      return s; // a timer: "timer TS of KEY"
    }
    return record == null ? "unknown" : record.getClass().getSimpleName();
  }

  private static byte[] payload(Object record) {
    if (record instanceof RawRecord r) {
      return r.value;
    }
    try {
      return WireJson.toBytes(record);
    } catch (RuntimeException e) {
      return String.valueOf(record).getBytes(StandardCharsets.UTF_8);
    }
  }

  private static String oneLine(String s) {
    int nl = s.indexOf('\n');
    String line = nl < 0 ? s : s.substring(0, nl);
    return line.length() <= MAX_REASON_CHARS ? line : line.substring(0, MAX_REASON_CHARS) + "…";
  }

  /** One record's output, held until its work completes. */
  private static final class Buffer<O> implements Collector<O>, Outputs {
    private final List<O> main = new ArrayList<>(2);
    private List<Object[]> side;

    @Override
    public void collect(O record) {
      main.add(record);
    }

    @Override
    public <X> void output(OutputTag<X> tag, X value) {
      if (side == null) {
        side = new ArrayList<>(1);
      }
      side.add(new Object[] {tag, value});
    }

    @Override
    public void close() {}

    @SuppressWarnings("unchecked")
    void forward(Collector<O> out, Outputs to) {
      for (O o : main) {
        out.collect(o);
      }
      if (side != null) {
        for (Object[] s : side) {
          to.output((OutputTag<Object>) s[0], s[1]);
        }
      }
    }
  }
}
