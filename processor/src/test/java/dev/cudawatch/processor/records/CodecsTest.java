package dev.cudawatch.processor.records;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.gpu.MemorySample;
import dev.cudawatch.common.wire.Action;
import dev.cudawatch.common.wire.Alert;
import dev.cudawatch.common.wire.DeadLetter;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.JobFailure;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.processor.jobs.GpuHolder;
import dev.cudawatch.processor.jobs.GpuHolderCodec;
import dev.cudawatch.processor.jobs.JobMember;
import dev.cudawatch.processor.jobs.JobMemberCodec;
import dev.cudawatch.processor.rules.JobSignal;
import dev.cudawatch.processor.rules.JobSignalCodec;
import dev.cudawatch.processor.rules.RuleEvent;
import dev.cudawatch.processor.rules.RuleEventCodec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every codec: a round trip, copies, and the bytes of every format version committed under {@code
 * src/test/resources/codecs/} (what savepoints hold) still read back. A format change without a new
 * version fails here; regenerate the current version's files with {@code -Dgolden.update=true} only
 * after raising the version, and keep the old ones.
 */
class CodecsTest {
  private static final Path RESOURCES = Path.of("src/test/resources/codecs");
  private static final Instant T = Instant.parse("2026-11-22T03:00:00.123456789Z");

  static Stream<Arguments> codecs() {
    return Stream.of(
        Arguments.of("log-record", LogRecordCodec.TYPE, logRecord()),
        Arguments.of("incident", IncidentCodec.TYPE, incident()),
        Arguments.of("alert", AlertCodec.TYPE, alert()),
        Arguments.of(
            "dead-letter",
            DeadLetterCodec.TYPE,
            new DeadLetter(1, "parse", "cudawatch.logs", "not JSON: x", "{broken", T)),
        Arguments.of("job-failure", JobFailureCodec.TYPE, jobFailure()),
        Arguments.of(
            "raw-record",
            RawRecordCodec.TYPE,
            new RawRecord("cudawatch.logs", 1, 42, new byte[] {1, 2})),
        Arguments.of(
            "memory-sample",
            MemorySampleCodec.TYPE,
            new MemorySample(T.toEpochMilli(), 3, "0000:3b:00", 80L << 30, 140L << 30)),
        Arguments.of(
            "rule-event",
            RuleEventCodec.TYPE,
            new RuleEvent(
                "LemonGpu",
                "count",
                "LemonGpu|h|5",
                Map.of("host", "h", "gpu", "5"),
                "i-1",
                T.toEpochMilli(),
                "job-a",
                null)),
        Arguments.of(
            "job-signal",
            JobSignalCodec.TYPE,
            new JobSignal(
                "Silent",
                "Silent|h|j",
                Map.of("host", "h", "job", "j"),
                JobSignal.Kind.FAILURE,
                "nccl_timeout",
                T.toEpochMilli())),
        Arguments.of("gpu-holder", GpuHolderCodec.TYPE, gpuHolder()),
        Arguments.of("job-member", JobMemberCodec.TYPE, jobMember()),
        Arguments.of("action", ActionCodec.TYPE, action()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("codecs")
  <T> void roundTripAndCopy(String name, CodecTypeInfo<T> type, T value) throws IOException {
    CodecSerializer<T> s = type.serializer();
    byte[] bytes = bytes(s, value);
    T back = s.deserialize(new DataInputDeserializer(bytes));
    assertSame(value, back);
    assertArrayEquals(bytes, bytes(s, back), "written again, the same bytes");
    T copy = s.copy(value);
    assertSame(value, copy);
    if (!s.isImmutableType()) {
      assertNotSame(value, copy, "a mutable value is copied, not shared");
    }
    DataOutputSerializer out = new DataOutputSerializer(64);
    s.copy(new DataInputDeserializer(bytes), out);
    assertArrayEquals(bytes, out.getCopyOfBuffer());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("codecs")
  <T> void everyCommittedFormatVersionStillReads(String name, CodecTypeInfo<T> type, T value)
      throws IOException {
    CodecSerializer<T> s = type.serializer();
    int current = s.codec().version();
    String file = name + "-v" + current + ".bin";
    updateIfAsked(name, s, value);
    byte[] committed = resource(file);
    assertArrayEquals(
        committed,
        bytes(s, value),
        name
            + ": the format changed without a new version; raise "
            + s.codec().getClass().getSimpleName()
            + ".version(), read the old one, and add "
            + name
            + "-v"
            + (current + 1)
            + ".bin (-Dgolden.update=true)");
    for (int v = 1; v <= current; v++) {
      byte[] old = v == current ? committed : optionalResource(name + "-v" + v + ".bin");
      if (old != null) {
        T read = s.deserialize(new DataInputDeserializer(old));
        if (v == current) {
          assertSame(value, read);
        }
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("codecs")
  <T> void theCommittedSerializerSnapshotRestoresAsIs(String name, CodecTypeInfo<T> type, T value)
      throws IOException {
    CodecSerializer<T> s = type.serializer();
    String file = name + ".snapshot";
    updateIfAsked(name, s, value);
    TypeSerializerSnapshot<T> old =
        TypeSerializerSnapshot.readVersionedSnapshot(
            new DataInputDeserializer(resource(file)), getClass().getClassLoader());
    TypeSerializerSchemaCompatibility<T> c =
        s.snapshotConfiguration().resolveSchemaCompatibility(old);
    assertTrue(c.isCompatibleAsIs(), name + ": " + c);
    TypeSerializer<T> restored = old.restoreSerializer();
    assertEquals(s, restored);
    assertSame(
        value,
        restored.deserialize(
            new DataInputDeserializer(resource(name + "-v" + s.codec().version() + ".bin"))));
  }

  /** With {@code -Dgolden.update=true}: writes the current version's value and snapshot files. */
  private static <T> void updateIfAsked(String name, CodecSerializer<T> s, T value)
      throws IOException {
    if (Boolean.getBoolean("golden.update")) {
      Files.createDirectories(RESOURCES);
      Files.write(RESOURCES.resolve(name + "-v" + s.codec().version() + ".bin"), bytes(s, value));
      DataOutputSerializer out = new DataOutputSerializer(64);
      TypeSerializerSnapshot.writeVersionedSnapshot(out, s.snapshotConfiguration());
      Files.write(RESOURCES.resolve(name + ".snapshot"), out.getCopyOfBuffer());
    }
  }

  /** Records compare by value; the two mutable state classes by their bytes. */
  private static <T> void assertSame(T expected, T actual) {
    if (expected.getClass().isRecord()) {
      assertEquals(expected, actual);
    } else {
      assertEquals(WireJson.toJson(expected), WireJson.toJson(actual));
    }
  }

  static <T> byte[] bytes(TypeSerializer<T> s, T value) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(256);
    s.serialize(value, out);
    return out.getCopyOfBuffer();
  }

  private static byte[] resource(String file) throws IOException {
    byte[] b = optionalResource(file);
    if (b == null) {
      throw new AssertionError(
          "codecs/" + file + " is missing: write it with -Dgolden.update=true and commit it");
    }
    return b;
  }

  private static byte[] optionalResource(String file) throws IOException {
    Path p = RESOURCES.resolve(file);
    if (Files.exists(p)) {
      return Files.readAllBytes(p);
    }
    try (InputStream in = CodecsTest.class.getResourceAsStream("/codecs/" + file)) {
      return in == null ? null : in.readAllBytes();
    }
  }

  private static LogRecord logRecord() {
    return LogRecord.builder()
        .host("gpu-node-7")
        .job("slurm-1234")
        .rank(3)
        .gpu(1)
        .kind(RecordKind.LOG)
        .stream("stderr")
        .source("/logs/train.err")
        .sourceId("2049:77")
        .offset(4096)
        .eventTime(T)
        .ingestTime(T.plusMillis(5))
        .text("RuntimeError: CUDA error: out of memory — ünïcode")
        .raw("\u001b[31mRuntimeError\u001b[0m")
        .gpuUuid("GPU-1b2c")
        .attribution(Map.of("gpu", "CUDA_VISIBLE_DEVICES"))
        .build();
  }

  private static Incident incident() {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("tried_to_allocate_bytes", 214748364800L);
    fields.put("gpu", 0L);
    fields.put("rank", 3);
    fields.put("ratio", 0.25);
    fields.put("in_graph", true);
    fields.put("op", "ALLREDUCE");
    fields.put("nothing", null);
    Map<String, Object> attribution = new LinkedHashMap<>();
    attribution.put("gpu", "CUDA_VISIBLE_DEVICES");
    attribution.put("tried", new ArrayList<>(List.of("env", "proc")));
    fields.put("attribution", attribution);
    return Incident.builder("gpu-node-7|/logs/train.err@0", "cuda_oom")
        .root(false, "root-1")
        .count(2)
        .severity("error")
        .suspect("application")
        .signature("torch_oom")
        .fields(fields)
        .summary("CUDA out of memory on GPU 0")
        .explanation("why")
        .nextSteps(List.of("a", "b"))
        .host("gpu-node-7")
        .job("slurm-1234")
        .source("/logs/train.err")
        .line(281)
        .firstRecordId("r@0")
        .eventTime(T)
        .detectedTime(T.plusSeconds(1))
        .excerpt(List.of("torch.OutOfMemoryError: CUDA out of memory."))
        .verdict("application_fault")
        .build();
  }

  private static Action action() {
    return new Action(
        1,
        "a-1",
        Action.RECOMMENDATION,
        "inspect",
        "failed again after 2 resets",
        "h",
        "3",
        "GPU-1",
        "job-a",
        79,
        "i-1",
        1,
        2,
        3,
        1800.5,
        T,
        Map.of("alertname", "GpuRepairLadder"));
  }

  private static Alert alert() {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("alertname", "GpuJobFailure");
    labels.put("class", "cuda_oom");
    return new Alert(
        1,
        Alert.fingerprintOf(labels),
        Alert.State.FIRING,
        labels,
        Map.of("summary", "s"),
        T,
        null);
  }

  private static JobFailure jobFailure() {
    return new JobFailure(
        1,
        "jf-1",
        "slurm-1234",
        "i-1",
        "cuda_oom",
        "gpu-node-7",
        null,
        "0",
        "summary",
        List.of("i-2", "i-3"),
        2,
        List.of("gpu-node-7", "gpu-node-8"),
        16,
        T,
        T.plusSeconds(30),
        "hung_outside_collective",
        List.of("rank 1 never issued ALLREDUCE #31"));
  }

  private static GpuHolder gpuHolder() {
    GpuHolder h = new GpuHolder();
    h.host = "h100-node";
    h.job = "run-job";
    h.gpu = 0;
    h.pid = null;
    h.firstSeen = 1;
    h.lastSeen = 2;
    h.exitedAt = 3L;
    return h;
  }

  private static JobMember jobMember() {
    JobMember m = new JobMember();
    m.id = "i-1";
    m.incidentClass = "nccl_timeout";
    m.host = "gpu-node-7";
    m.rank = 5;
    m.gpu = null;
    m.summary = "timeout";
    m.eventTime = T.toEpochMilli();
    m.rootClass = false;
    m.localRank = 1;
    m.seqNum = 31L;
    m.opType = "ALLREDUCE";
    m.lastEnqueued = 36L;
    m.lastCompleted = 30L;
    m.pid = 951L;
    m.peer = "10.0.0.4";
    return m;
  }
}
