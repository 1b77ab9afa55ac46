package dev.cudawatch.bench;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.advice.Advisor;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.engine.ClassifierSettings;
import dev.cudawatch.diagnosis.engine.StreamClassifier;
import dev.cudawatch.diagnosis.engine.StreamContext;
import dev.cudawatch.diagnosis.engine.StreamState;
import dev.cudawatch.diagnosis.offline.OfflineClassifier;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Classification throughput on one core: a realistic stream (99.9 % ordinary training output)
 * through the engine. {@code lines} works on decoded lines (the Flink operator's case); {@code
 * bytes} adds decoding and line framing (the offline {@code classify} case). Scores are lines/s;
 * MB/s = lines/s x {@code bytesPerLine}, printed at setup.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 1,
    jvmArgs = {"-Xmx1g", "-XX:+UseParallelGC"})
@Threads(1)
public class ClassifierBenchmark {
  static final int LINES = 200_000;

  private final Catalog catalog = Catalog.builtIn();
  private List<String> lines;
  private byte[] bytes;

  @Setup
  public void setup() {
    lines = TrainingLogGenerator.lines(LINES, 1000, 42);
    String joined = String.join("\n", lines) + "\n";
    bytes = joined.getBytes(StandardCharsets.UTF_8);
    System.out.printf(
        "%n[setup] %d lines, %d bytes, %.1f bytes/line%n",
        LINES, bytes.length, bytes.length / (double) LINES);
  }

  @Benchmark
  @OperationsPerInvocation(LINES)
  public void lines(Blackhole bh) {
    StreamClassifier c =
        new StreamClassifier(
            catalog,
            new Advisor(catalog.taxonomy()),
            new StreamContext("h", "j", "bench"),
            ClassifierSettings.defaults(),
            new StreamState());
    Instant now = Instant.EPOCH;
    for (String l : lines) {
      List<Incident> out = c.accept(l, null, now);
      if (!out.isEmpty()) {
        bh.consume(out);
      }
    }
    bh.consume(c.flush(now));
  }

  @Benchmark
  @OperationsPerInvocation(LINES)
  public void bytes(Blackhole bh) throws IOException {
    bh.consume(
        new OfflineClassifier(catalog, Clock.systemUTC())
            .classify(new ByteArrayInputStream(bytes), "bench", null));
  }
}
