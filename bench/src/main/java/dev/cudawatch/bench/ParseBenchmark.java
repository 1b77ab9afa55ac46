package dev.cudawatch.bench;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.processor.formats.InputSettings;
import dev.cudawatch.processor.formats.RecordFormat;
import dev.cudawatch.processor.records.RawRecord;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.logs.v1.LogsData;
import io.opentelemetry.proto.logs.v1.ResourceLogs;
import io.opentelemetry.proto.logs.v1.ScopeLogs;
import io.opentelemetry.proto.resource.v1.Resource;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The parse stage on one core, per record format: training output as each shipper puts it on Kafka
 * (the shapes of {@code deploy/shippers}), read into log records. Scores are lines/s; OTLP batches
 * hold 100 lines a Kafka record, as the Collector's batch processor sends them.
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
public class ParseBenchmark {
  static final int LINES = 20_000;
  static final int OTLP_BATCH = 100;
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");
  private static final String PATTERN = "/jobs/(?P<job>[^/]+)/rank-(?P<rank>\\d+)\\.log$";

  @Param({"cudawatch", "fluent-bit", "vector", "filebeat", "otlp_json", "otlp_proto", "rsyslog"})
  public String shape;

  private RecordFormat format;
  private List<RawRecord> records;

  @Setup
  public void setup() {
    String name = shape.startsWith("otlp") ? RecordFormat.OTLP : shape;
    format = RecordFormat.of(new InputSettings("t", name, PATTERN));
    records = encode(shape, TrainingLogGenerator.lines(LINES, 1000, 42));
  }

  @Benchmark
  @OperationsPerInvocation(LINES)
  public void parse(Blackhole bh) throws WireFormatException {
    for (RawRecord r : records) {
      bh.consume(format.parse(r));
    }
  }

  /** Lines of rank 3 of job-42 on gpu-node-7, as the shipper's Kafka records. */
  static List<RawRecord> encode(String shape, List<String> lines) {
    List<RawRecord> out = new ArrayList<>();
    long offset = 0;
    int step = shape.startsWith("otlp") ? OTLP_BATCH : 1;
    for (int i = 0; i < lines.size(); i += step) {
      List<String> batch = lines.subList(i, Math.min(lines.size(), i + step));
      Instant t = T0.plusMillis(i);
      byte[] v =
          switch (shape) {
            case "cudawatch" -> cudawatch(batch.get(0), offset, t);
            case "otlp_json" -> otlpJson(batch, t);
            case "otlp_proto" -> otlpProto(batch, t);
            default -> json(shape, batch.get(0), offset, t);
          };
      out.add(new RawRecord("t", 0, i, v));
      offset += batch.get(0).length() + 1;
    }
    return out;
  }

  private static final String PATH = "/var/log/jobs/job-42/rank-3.log";

  private static byte[] cudawatch(String line, long offset, Instant t) {
    return WireJson.toBytes(
        LogRecord.builder()
            .host("gpu-node-7")
            .job("job-42")
            .rank(3)
            .source(PATH)
            .sourceId("2049:1310723")
            .offset(offset)
            .eventTime(t)
            .text(line)
            .build());
  }

  private static byte[] json(String shape, String line, long offset, Instant t) {
    ObjectNode r = WireJson.mapper().createObjectNode();
    switch (shape) {
      case "fluent-bit" -> {
        r.put("@timestamp", t.getEpochSecond() + t.getNano() / 1e9);
        r.put("log", line + "\n");
        r.put("stream", "stderr");
        r.put("filename", "/var/log/containers/job-42-3_ml_trainer-abc.log");
        r.put("offset", offset);
        r.put("hostname", "gpu-node-7");
        ObjectNode k = r.putObject("kubernetes");
        k.put("pod_name", "job-42-3-x7k2p");
        k.put("namespace_name", "ml");
        ObjectNode labels = k.putObject("labels");
        labels.put("batch.kubernetes.io/job-name", "job-42");
        labels.put("batch.kubernetes.io/job-completion-index", "3");
        k.put("host", "gpu-node-7");
        k.put("container_name", "trainer");
        k.put("docker_id", "d0c4e7");
      }
      case "vector" -> {
        r.put("file", PATH);
        r.put("host", "gpu-node-7");
        r.put("message", line);
        r.put("source_type", "file");
        r.put("timestamp", t.toString());
      }
      case "filebeat" -> {
        r.put("@timestamp", t.toString());
        r.putObject("@metadata")
            .put("beat", "filebeat")
            .put("type", "_doc")
            .put("version", "8.15.0");
        ObjectNode log = r.putObject("log");
        log.put("offset", offset);
        log.putObject("file").put("path", PATH).put("device_id", "2049").put("inode", "1310723");
        r.put("message", line);
        r.putObject("input").put("type", "filestream");
        r.putObject("host").put("name", "gpu-node-7");
        r.putObject("agent").put("type", "filebeat").put("version", "8.15.0");
        r.putObject("ecs").put("version", "8.0.0");
      }
      case "rsyslog" -> {
        r.put("timestamp", t.toString().replace("Z", "+00:00"));
        r.put("hostname", "gpu-node-7");
        r.put("programname", "training");
        r.put("syslogtag", "training");
        r.put("facility", "local0");
        r.put("msg", line);
        r.put("filename", PATH);
        r.put("fileoffset", String.valueOf(offset));
      }
      default -> throw new IllegalArgumentException("unknown shape " + shape);
    }
    return r.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] otlpJson(List<String> lines, Instant t) {
    ObjectNode root = WireJson.mapper().createObjectNode();
    ObjectNode rl = root.putArray("resourceLogs").addObject();
    ArrayNode ra = rl.putObject("resource").putArray("attributes");
    attr(ra, "host.name", "gpu-node-7");
    ArrayNode recs = rl.putArray("scopeLogs").addObject().putArray("logRecords");
    long ns = t.getEpochSecond() * 1_000_000_000L;
    for (int i = 0; i < lines.size(); i++) {
      ObjectNode r = recs.addObject();
      r.put("timeUnixNano", String.valueOf(ns + i * 1_000_000L));
      r.putObject("body").put("stringValue", lines.get(i));
      ArrayNode a = r.putArray("attributes");
      attr(a, "log.file.path", PATH);
    }
    return root.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static void attr(ArrayNode a, String key, String value) {
    ObjectNode kv = a.addObject();
    kv.put("key", key);
    kv.putObject("value").put("stringValue", value);
  }

  private static byte[] otlpProto(List<String> lines, Instant t) {
    ScopeLogs.Builder scope = ScopeLogs.newBuilder();
    long ns = t.getEpochSecond() * 1_000_000_000L;
    for (int i = 0; i < lines.size(); i++) {
      scope.addLogRecords(
          io.opentelemetry.proto.logs.v1.LogRecord.newBuilder()
              .setTimeUnixNano(ns + i * 1_000_000L)
              .setBody(AnyValue.newBuilder().setStringValue(lines.get(i)))
              .addAttributes(kv("log.file.path", PATH)));
    }
    return LogsData.newBuilder()
        .addResourceLogs(
            ResourceLogs.newBuilder()
                .setResource(Resource.newBuilder().addAttributes(kv("host.name", "gpu-node-7")))
                .addScopeLogs(scope))
        .build()
        .toByteArray();
  }

  private static KeyValue kv(String k, String v) {
    return KeyValue.newBuilder()
        .setKey(k)
        .setValue(AnyValue.newBuilder().setStringValue(v))
        .build();
  }
}
