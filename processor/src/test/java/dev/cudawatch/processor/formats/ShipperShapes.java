package dev.cudawatch.processor.formats;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
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
import java.util.function.Function;

/**
 * Lines of a training log as each shipper puts them on Kafka, in the record shapes of each
 * project's documentation: Fluent Bit's tail input with the kubernetes filter, Vector's file
 * source, Filebeat's filestream input, the OpenTelemetry Collector's filelog receiver with
 * k8sattributes (otlp_json and otlp_proto), and rsyslog's imfile through the cudawatch template.
 */
final class ShipperShapes {
  static final String HOST = "gpu-node-7";
  static final String JOB = "job-42";
  static final int RANK = 3;

  /** The path layout the file-based shapes' job pattern reads job and rank from. */
  static final String JOB_PATTERN = "/jobs/(?P<job>[^/]+)/rank-(?P<rank>\\d+)\\.log$";

  private ShipperShapes() {}

  /** One line of one stream: where it was written, at which byte offset and when. */
  record Line(String file, String container, long offset, Instant time, String text) {}

  /** A shape: its format name, and how a batch of lines becomes Kafka records. */
  enum Shape {
    CUDAWATCH(RecordFormat.CUDAWATCH, 1, ShipperShapes::cudawatch),
    FLUENT_BIT(RecordFormat.FLUENT_BIT, 1, ShipperShapes::fluentBit),
    VECTOR(RecordFormat.VECTOR, 1, ShipperShapes::vector),
    FILEBEAT(RecordFormat.FILEBEAT, 1, ShipperShapes::filebeat),
    OTLP_JSON(RecordFormat.OTLP, 3, ShipperShapes::otlpJson),
    OTLP_PROTO(RecordFormat.OTLP, 3, ShipperShapes::otlpProto),
    RSYSLOG(RecordFormat.RSYSLOG, 1, ShipperShapes::rsyslog);

    final String format;
    final int batch;
    private final Function<List<Line>, byte[]> encode;

    Shape(String format, int batch, Function<List<Line>, byte[]> encode) {
      this.format = format;
      this.batch = batch;
      this.encode = encode;
    }

    /** The Kafka record values for these lines, {@code batch} lines a record. */
    List<byte[]> records(List<Line> lines) {
      List<byte[]> out = new ArrayList<>();
      for (int i = 0; i < lines.size(); i += batch) {
        out.add(encode.apply(lines.subList(i, Math.min(lines.size(), i + batch))));
      }
      return out;
    }
  }

  static String path(String stream) {
    return "/var/log/jobs/" + JOB + "/" + stream + ".log";
  }

  private static ObjectNode obj() {
    return WireJson.mapper().createObjectNode();
  }

  private static byte[] bytes(ObjectNode n) {
    return n.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static Line only(List<Line> lines) {
    if (lines.size() != 1) {
      throw new IllegalArgumentException("one line a record");
    }
    return lines.get(0);
  }

  static byte[] cudawatch(List<Line> lines) {
    Line l = only(lines);
    return WireJson.toBytes(
        LogRecord.builder()
            .host(HOST)
            .job(JOB)
            .rank(RANK)
            .source(path(l.container()))
            .sourceId("2049:" + l.container().hashCode())
            .stream("stderr")
            .offset(l.offset())
            .eventTime(l.time())
            .text(l.text())
            .build());
  }

  /** tail (Path_Key filename, Offset_Key offset) + kubernetes filter; timestamp_key as double. */
  static byte[] fluentBit(List<Line> lines) {
    Line l = only(lines);
    ObjectNode r = obj();
    r.put("@timestamp", l.time().getEpochSecond() + l.time().getNano() / 1e9);
    r.put("log", l.text() + "\n");
    r.put("stream", "stderr");
    r.put("time", l.time().toString());
    r.put("filename", "/var/log/containers/trainer-0_ml_" + l.container() + "-abc123.log");
    r.put("offset", l.offset());
    ObjectNode k = r.putObject("kubernetes");
    k.put("pod_name", JOB + "-" + RANK + "-x7k2p");
    k.put("namespace_name", "ml");
    k.put("pod_id", "0b7c6d6e-2f0e-4c53-9d1f-0b4a8c0b7d11");
    ObjectNode labels = k.putObject("labels");
    labels.put("batch.kubernetes.io/job-name", JOB);
    labels.put("batch.kubernetes.io/job-completion-index", String.valueOf(RANK));
    labels.put("controller-uid", "5e0e4d56");
    k.put("host", HOST);
    k.put("container_name", l.container());
    k.put("docker_id", "d0c4e7" + l.container().hashCode());
    k.put("container_image", "nvcr.io/nvidia/pytorch:25.10-py3");
    return bytes(r);
  }

  /** file source, kafka sink with encoding.codec json. */
  static byte[] vector(List<Line> lines) {
    Line l = only(lines);
    ObjectNode r = obj();
    r.put("file", path(l.container()));
    r.put("host", HOST);
    r.put("message", l.text());
    r.put("source_type", "file");
    r.put("timestamp", l.time().toString());
    return bytes(r);
  }

  /** filestream input, kafka output with the default json codec. */
  static byte[] filebeat(List<Line> lines) {
    Line l = only(lines);
    ObjectNode r = obj();
    r.put("@timestamp", l.time().toString());
    ObjectNode meta = r.putObject("@metadata");
    meta.put("beat", "filebeat");
    meta.put("type", "_doc");
    meta.put("version", "8.15.0");
    ObjectNode log = r.putObject("log");
    log.put("offset", l.offset());
    ObjectNode file = log.putObject("file");
    file.put("path", path(l.container()));
    file.put("device_id", "2049");
    file.put("inode", String.valueOf(1_000_000 + Math.abs(l.container().hashCode() % 1000)));
    r.put("message", l.text());
    r.putObject("input").put("type", "filestream");
    r.putObject("ecs").put("version", "8.0.0");
    r.putObject("host").put("name", HOST);
    ObjectNode agent = r.putObject("agent");
    agent.put("type", "filebeat");
    agent.put("version", "8.15.0");
    return bytes(r);
  }

  /** filelog receiver (include_file_path) + k8sattributes, kafka exporter encoding otlp_json. */
  static byte[] otlpJson(List<Line> lines) {
    ObjectNode root = obj();
    ObjectNode rl = root.putArray("resourceLogs").addObject();
    ArrayNode ra = rl.putObject("resource").putArray("attributes");
    attr(ra, "host.name", HOST);
    attr(ra, "k8s.namespace.name", "ml");
    attr(ra, "k8s.pod.name", JOB + "-" + RANK + "-x7k2p");
    attr(ra, "k8s.container.name", lines.get(0).container());
    attr(ra, "k8s.job.name", JOB);
    attr(ra, "k8s.pod.labels.batch.kubernetes.io/job-completion-index", String.valueOf(RANK));
    ObjectNode sl = rl.putArray("scopeLogs").addObject();
    sl.putObject("scope");
    ArrayNode recs = sl.putArray("logRecords");
    for (Line l : lines) {
      ObjectNode r = recs.addObject();
      r.put("timeUnixNano", String.valueOf(nanos(l.time())));
      r.put("observedTimeUnixNano", String.valueOf(nanos(l.time()) + 1_000_000));
      r.putObject("body").put("stringValue", l.text());
      ArrayNode a = r.putArray("attributes");
      attr(a, "log.file.path", "/var/log/pods/ml_" + l.container() + "/trainer/0.log");
      attr(a, "log.iostream", "stderr");
      r.put("traceId", "");
      r.put("spanId", "");
    }
    return bytes(root);
  }

  private static void attr(ArrayNode a, String key, String value) {
    ObjectNode kv = a.addObject();
    kv.put("key", key);
    kv.putObject("value").put("stringValue", value);
  }

  /** The same batch as otlp_proto, built with the published OTLP classes. */
  static byte[] otlpProto(List<Line> lines) {
    ScopeLogs.Builder scope = ScopeLogs.newBuilder();
    for (Line l : lines) {
      scope.addLogRecords(
          io.opentelemetry.proto.logs.v1.LogRecord.newBuilder()
              .setTimeUnixNano(nanos(l.time()))
              .setObservedTimeUnixNano(nanos(l.time()) + 1_000_000)
              .setBody(AnyValue.newBuilder().setStringValue(l.text()))
              .addAttributes(
                  kv("log.file.path", "/var/log/pods/ml_" + l.container() + "/trainer/0.log"))
              .addAttributes(kv("log.iostream", "stderr")));
    }
    Resource.Builder res =
        Resource.newBuilder()
            .addAttributes(kv("host.name", HOST))
            .addAttributes(kv("k8s.namespace.name", "ml"))
            .addAttributes(kv("k8s.pod.name", JOB + "-" + RANK + "-x7k2p"))
            .addAttributes(kv("k8s.container.name", lines.get(0).container()))
            .addAttributes(kv("k8s.job.name", JOB))
            .addAttributes(
                kv(
                    "k8s.pod.labels.batch.kubernetes.io/job-completion-index",
                    String.valueOf(RANK)));
    return LogsData.newBuilder()
        .addResourceLogs(ResourceLogs.newBuilder().setResource(res).addScopeLogs(scope))
        .build()
        .toByteArray();
  }

  private static KeyValue kv(String k, String v) {
    return KeyValue.newBuilder()
        .setKey(k)
        .setValue(AnyValue.newBuilder().setStringValue(v))
        .build();
  }

  /** imfile (addMetadata on) through omkafka with deploy/shippers/rsyslog's template. */
  static byte[] rsyslog(List<Line> lines) {
    Line l = only(lines);
    ObjectNode r = obj();
    r.put("timestamp", l.time().atOffset(java.time.ZoneOffset.ofHours(1)).toString());
    r.put("hostname", HOST);
    r.put("programname", "training");
    r.put("syslogtag", "training");
    r.put("facility", "local0");
    r.put("msg", l.text());
    r.put("filename", path(l.container()));
    r.put("fileoffset", String.valueOf(l.offset()));
    return bytes(r);
  }

  private static long nanos(Instant t) {
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }
}
