package dev.cudawatch.processor.functions;

import dev.cudawatch.common.cli.BuildInfo;
import dev.cudawatch.common.text.TrainingOutput;
import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.processor.formats.CudawatchFormat;
import dev.cudawatch.processor.formats.InputSettings;
import dev.cudawatch.processor.formats.RecordFormat;
import dev.cudawatch.processor.guard.PoisonGuard;
import dev.cudawatch.processor.records.RawRecord;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Parses log records in each input topic's format; what cannot be read, or brings a value out of
 * range ({@link InputRanges}), goes to the dead-letter output with its reason, whole (a batch is
 * never half-read), through the job's {@link PoisonGuard}: any exception a record causes here
 * dead-letters it rather than failing the task. Unconfigured topics are read as the agent's own
 * records.
 */
public final class ParseLogRecords extends ProcessFunction<RawRecord, LogRecord> {
  private static final long serialVersionUID = 1L;

  /** The job's dead-letter output ({@link PoisonGuard#DEAD_LETTERS}). */
  public static final OutputTag<DeadLetter> DEAD_LETTERS = PoisonGuard.DEAD_LETTERS;

  /** This operator's name in the job and in its dead letters. */
  public static final String NAME = "parse-records";

  private final HashMap<String, RecordFormat> formats = new HashMap<>();
  private final RecordFormat fallback = new CudawatchFormat();
  private final PoisonGuard guard = new PoisonGuard(NAME);
  private transient Counter truncated;

  /** The agent's records on every topic. */
  public ParseLogRecords() {}

  /** Each input topic in its configured format. */
  public ParseLogRecords(List<InputSettings> inputs) {
    for (InputSettings in : inputs) {
      formats.put(in.topic(), RecordFormat.of(in));
    }
  }

  /** One topic in one format (benchmarks, tests). */
  public static ParseLogRecords of(Map<String, RecordFormat> byTopic) {
    ParseLogRecords p = new ParseLogRecords();
    p.formats.putAll(byTopic);
    return p;
  }

  @Override
  public void open(OpenContext ctx) {
    guard.open(getRuntimeContext().getMetricGroup());
    truncated = getRuntimeContext().getMetricGroup().counter("cudawatch_lines_truncated");
    // the build the job runs, as the agent's and alerts' cudawatch_build_info say theirs
    BuildInfo build = BuildInfo.current();
    getRuntimeContext()
        .getMetricGroup()
        .addGroup("version", build.version())
        .addGroup("revision", build.revision())
        .gauge("cudawatch_build_info", () -> 1);
    // Jackson introspects the wire types now, at task start, not on the first record (~0.2 s)
    WireJson.warmUp();
    warmUp();
  }

  /** Records of healthy output each subtask reads at start. */
  static final int WARMUP_RECORDS = 20_000;

  /** Distinct records among them. */
  static final int WARMUP_DISTINCT = 256;

  private static final java.util.concurrent.atomic.AtomicBoolean WARM =
      new java.util.concurrent.atomic.AtomicBoolean();

  /**
   * Reads records of healthy training output as the agent writes them, so the JIT compiles the
   * reading path at the first task start in a JVM and the first records do not meet it cold while
   * everything else warms up too (bench/run's first incident). Nothing is emitted.
   */
  static void warmUp() {
    if (!WARM.compareAndSet(false, true)) {
      return; // compiled code serves every subtask and every recovery in this JVM
    }
    Instant t = Instant.EPOCH;
    LogRecord.Builder b =
        LogRecord.builder().host("warmup").kind(RecordKind.LOG).stream("file")
            .source("warmup")
            .sourceId("warmup")
            .eventTime(t)
            .ingestTime(t)
            .attribution(Map.of("tried", "warmup"));
    try {
      // a few hundred records, encoded once and read in turn: the reading path is what the job
      // runs; formatting and encoding 20,000 lines cost 0.5-1.5 s more CPU per start
      // (bench/results/profile-local-start.md)
      byte[][] encoded = new byte[WARMUP_DISTINCT][];
      for (int i = 0; i < WARMUP_DISTINCT; i++) {
        encoded[i] = WireJson.toBytes(b.offset(i).text(TrainingOutput.line(i)).build());
      }
      for (int i = 0; i < WARMUP_RECORDS; i++) {
        CudawatchFormat.read(encoded[i % WARMUP_DISTINCT]);
      }
    } catch (WireFormatException e) {
      throw new IllegalStateException("the warm-up's own record did not read back", e);
    }
  }

  @Override
  public void processElement(RawRecord raw, Context ctx, Collector<LogRecord> out)
      throws Exception {
    guard.run(
        raw,
        (buf, side) -> {
          for (LogRecord r : formats.getOrDefault(raw.topic, fallback).parse(raw)) {
            buf.collect(InputRanges.check(r, this::countTruncated));
          }
        },
        out,
        ctx::output,
        ctx.timerService().currentProcessingTime());
  }

  private void countTruncated() {
    if (truncated != null) {
      truncated.inc();
    }
  }
}
