package dev.cudawatch.processor.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cudawatch.common.text.TrainingOutput;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.processor.functions.ClassifyStream;
import dev.cudawatch.processor.functions.ParseLogRecords;
import dev.cudawatch.processor.records.RawRecord;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A training log rotated under each shipper: a real file on disk is written, shipped as each
 * shipper reads it (its offsets, its file identity, its record shape per deploy/shippers), rotated
 * by copytruncate or by rename and create, written again and shipped on. The shipper reads the old
 * file's last lines only after the new file's first (Fluent Bit's rotate_wait, Vector's and
 * Filebeat's harvesters of the renamed file), under the old name, and re-sends its last records at
 * the end (at-least-once). Every line of both files must reach the classifier exactly once: the
 * error line ending each file becomes its own incident whose line number is the count of distinct
 * records before it in its stream, and the re-sent error is dropped.
 */
class ShipperRotationTest {
  private static final Instant T0 = Instant.parse("2026-11-22T03:00:00Z");

  /** The rotated file's last line, and the new file's: two failures, two incidents. */
  private static final String ERROR =
      "RuntimeError: CUDA error: an illegal memory access was encountered";

  private static final String OOM =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total"
          + " capacity of 79.10 GiB of which 1.23 GiB is free.";
  private static final String HOST = "gpu-node-7";
  private static final int OLD_LINES = 120;

  /** Fewer than the old file's while its last lines come in (FileRestarts says why). */
  private static final int NEW_LINES = 60;

  /** The old file's lines the shipper reads only after the new file's first. */
  private static final int LATE = 5;

  @TempDir Path dir;

  enum Rotation {
    COPYTRUNCATE,
    RENAME_AND_CREATE
  }

  /** What a shipper sends for one record it read from a file. */
  record Read(
      String path, long start, long end, long dev, long inode, String fingerprint, String text) {}

  /** Each shipper as configured in deploy/shippers, with the offsets its record carries. */
  enum Shipper {
    /** tail with multiline.parser (the container input): end offsets, never 0; no identity. */
    FLUENT_BIT_MULTILINE(RecordFormat.FLUENT_BIT, true, ShipperRotationTest::fluentBit),
    /** tail of the job files: path_key and offset_key; no identity. */
    FLUENT_BIT(RecordFormat.FLUENT_BIT, false, ShipperRotationTest::fluentBit),
    /** file source with offset_key (a line's start); no identity. */
    VECTOR(RecordFormat.VECTOR, false, ShipperRotationTest::vector),
    /** filestream: log.offset (a line's start) and the file's device and inode. */
    FILEBEAT(RecordFormat.FILEBEAT, false, ShipperRotationTest::filebeat),
    /** filestream with the fingerprint identity (the first bytes' hash). */
    FILEBEAT_FINGERPRINT(RecordFormat.FILEBEAT, false, ShipperRotationTest::filebeatFingerprint);

    final String format;
    final boolean multiline;
    final Function<Read, byte[]> encode;

    Shipper(String format, boolean multiline, Function<Read, byte[]> encode) {
      this.format = format;
      this.multiline = multiline;
      this.encode = encode;
    }
  }

  @ParameterizedTest
  @EnumSource(Shipper.class)
  void copytruncate(Shipper shipper) throws Exception {
    rotate(shipper, Rotation.COPYTRUNCATE);
  }

  @ParameterizedTest
  @EnumSource(Shipper.class)
  void renameAndCreate(Shipper shipper) throws Exception {
    rotate(shipper, Rotation.RENAME_AND_CREATE);
  }

  private void rotate(Shipper shipper, Rotation rotation) throws Exception {
    Path log = dir.resolve("rank-3.log");
    List<Read> sent = new ArrayList<>();
    write(log, OLD_LINES, 0, ERROR);
    Tail old = new Tail(log, shipper.multiline);
    List<Read> oldReads = old.read();
    // copytruncate's race (lines written between the copy and the truncation are lost) is
    // copytruncate's own: the shipper has read the old file whole before it is copied here.
    int early = rotation == Rotation.COPYTRUNCATE ? oldReads.size() : oldReads.size() - LATE;
    sent.addAll(oldReads.subList(0, early));
    Tail current;
    if (rotation == Rotation.COPYTRUNCATE) {
      Files.copy(log, dir.resolve("rank-3.log.1"), StandardCopyOption.REPLACE_EXISTING);
      try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "rw")) {
        f.setLength(0);
      }
      current = old; // same inode: the shipper sees the file shrink and reads it from 0
    } else {
      Files.move(log, dir.resolve("rank-3.log.1"));
      Files.createFile(log);
      current = new Tail(log, shipper.multiline);
    }
    write(log, NEW_LINES, OLD_LINES, OOM);
    List<Read> newReads = current.read();
    sent.addAll(newReads.subList(0, 10));
    sent.addAll(oldReads.subList(early, oldReads.size())); // the renamed file's last lines
    sent.addAll(newReads.subList(10, newReads.size()));
    sent.addAll(newReads.subList(newReads.size() - 3, newReads.size())); // re-sent
    List<Incident> errors = classify(shipper, sent);

    // each stream's classifier counts its records: every one once, in the order first sent
    Map<String, Map<Read, Long>> lineOf = new LinkedHashMap<>();
    for (Read r : sent) {
      Map<Read, Long> seen = lineOf.computeIfAbsent(streamOf(shipper, r), k -> new HashMap<>());
      seen.putIfAbsent(r, seen.size() + 1L);
    }
    List<Long> expected =
        sent.stream()
            .filter(r -> r.text().equals(ERROR) || r.text().equals(OOM))
            .distinct()
            .map(r -> lineOf.get(streamOf(shipper, r)).get(r))
            .sorted()
            .toList();
    assertEquals(2, expected.size());
    assertEquals(
        List.of(1, 1),
        errors.stream().map(Incident::count).toList(),
        shipper + " " + rotation + ": no failure counted twice: " + errors);
    assertEquals(
        expected,
        errors.stream().map(Incident::line).toList(),
        shipper
            + " "
            + rotation
            + ": each file's error once, after every record before it exactly once: "
            + errors);
  }

  /** The stream a record belongs to: its file, and its file instance where the shipper names it. */
  private static String streamOf(Shipper s, Read r) {
    return switch (s) {
      case FILEBEAT -> r.path + "|" + r.dev + ":" + r.inode;
      case FILEBEAT_FINGERPRINT -> r.path + "|" + r.fingerprint;
      default -> r.path;
    };
  }

  /** Parses and classifies what was sent, in order; returns the two failures' incidents. */
  private static List<Incident> classify(Shipper shipper, List<Read> sent) throws Exception {
    String topic = "logs." + shipper.name().toLowerCase();
    List<LogRecord> records = new ArrayList<>();
    try (OneInputStreamOperatorTestHarness<RawRecord, LogRecord> parse =
        ProcessFunctionTestHarnesses.forProcessFunction(
            new ParseLogRecords(List.of(new InputSettings(topic, shipper.format, null))))) {
      long k = 0;
      for (Read r : sent) {
        parse.processElement(new RawRecord(topic, 0, k++, shipper.encode.apply(r)), 0);
      }
      assertEquals(List.of(), ShipperFormatsTest.deadLetters(parse), shipper + "");
      records.addAll(parse.extractOutputValues());
    }
    try (KeyedOneInputStreamOperatorTestHarness<String, LogRecord, Incident> h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            new ClassifyStream(Map.of(), ProcessorSettings.defaults()),
            LogRecord::streamKey,
            Types.STRING)) {
      h.open();
      h.setProcessingTime(0);
      for (LogRecord r : records) {
        h.processElement(r, 0);
      }
      h.setProcessingTime(5_000); // the streams go quiet: what is open is emitted
      return h.extractOutputValues().stream()
          .filter(
              i ->
                  i.incidentClass().equals("illegal_memory_access")
                      || i.incidentClass().equals("cuda_oom"))
          .sorted(java.util.Comparator.comparing(Incident::line))
          .toList();
    }
  }

  /**
   * Appends {@code n} lines of training output to {@code file}, each fourth with a traceback-like
   * continuation line (one record under a multiline parser), the last one {@code last}.
   */
  private static void write(Path file, int n, int from, String last) throws IOException {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n - 1; i++) {
      sb.append(TrainingOutput.line(from + i)).append('\n');
      if (i % 4 == 1) {
        sb.append("    at step ").append(from + i).append('\n');
      }
    }
    sb.append(last).append('\n');
    Files.writeString(
        file, sb, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }

  /**
   * A shipper's reader of one file instance, from its position to the last whole line; under a
   * multiline parser, lines that start with a space join the record before them.
   */
  private static final class Tail {
    private final Path path;
    private final boolean multiline;
    private final long dev;
    private final long inode;
    private long position;

    Tail(Path path, boolean multiline) throws IOException {
      this.path = path;
      this.multiline = multiline;
      this.dev = ((Number) Files.getAttribute(path, "unix:dev")).longValue();
      this.inode = ((Number) Files.getAttribute(path, "unix:ino")).longValue();
    }

    List<Read> read() throws Exception {
      byte[] all = Files.readAllBytes(path);
      if (all.length < position) {
        position = 0; // truncated: read it again from the start
      }
      // filestream's fingerprint: SHA-256 of the first 1024 bytes
      String fingerprint =
          HexFormat.of()
              .formatHex(
                  MessageDigest.getInstance("SHA-256")
                      .digest(Arrays.copyOf(all, Math.min(1024, all.length))));
      List<Read> out = new ArrayList<>();
      int lineStart = (int) position;
      for (int i = lineStart; i < all.length; i++) {
        if (all[i] != '\n') {
          continue;
        }
        String line = new String(all, lineStart, i - lineStart, StandardCharsets.UTF_8);
        if (multiline && line.startsWith(" ") && !out.isEmpty()) {
          Read prev = out.remove(out.size() - 1);
          out.add(
              new Read(
                  prev.path, prev.start, i + 1, dev, inode, fingerprint, prev.text + "\n" + line));
        } else {
          out.add(new Read(path.toString(), lineStart, i + 1, dev, inode, fingerprint, line));
        }
        lineStart = i + 1;
      }
      position = lineStart;
      return out;
    }
  }

  private static ObjectNode obj() {
    return WireJson.mapper().createObjectNode();
  }

  private static byte[] bytes(ObjectNode n) {
    return n.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static Instant time(Read r) {
    return T0.plusMillis(r.start);
  }

  /** tail (path_key filename, offset_key offset) + record_modifier; Fluent Bit's end offsets. */
  static byte[] fluentBit(Read r) {
    ObjectNode o = obj();
    o.put("@timestamp", time(r).toString());
    o.put("log", r.text + "\n");
    o.put("filename", r.path);
    o.put("offset", r.end);
    o.put("hostname", HOST);
    return bytes(o);
  }

  /** file source (offset_key offset), kafka sink with encoding.codec json. */
  static byte[] vector(Read r) {
    ObjectNode o = obj();
    o.put("file", r.path);
    o.put("host", HOST);
    o.put("message", r.text);
    o.put("offset", r.start);
    o.put("source_type", "file");
    o.put("timestamp", time(r).toString());
    return bytes(o);
  }

  /** filestream with the native identity, kafka output with the default json codec. */
  static byte[] filebeat(Read r) {
    ObjectNode o = filebeatCommon(r);
    ObjectNode file = (ObjectNode) o.at("/log/file");
    file.put("device_id", String.valueOf(r.dev));
    file.put("inode", String.valueOf(r.inode));
    return bytes(o);
  }

  /** filestream with the fingerprint identity: the hash of the file's first bytes. */
  static byte[] filebeatFingerprint(Read r) {
    ObjectNode o = filebeatCommon(r);
    ObjectNode file = (ObjectNode) o.at("/log/file");
    file.put("device_id", String.valueOf(r.dev));
    file.put("inode", String.valueOf(r.inode));
    file.put("fingerprint", r.fingerprint);
    return bytes(o);
  }

  private static ObjectNode filebeatCommon(Read r) {
    ObjectNode o = obj();
    o.put("@timestamp", time(r).toString());
    ObjectNode log = o.putObject("log");
    log.put("offset", r.start);
    log.putObject("file").put("path", r.path);
    o.put("message", r.text);
    o.putObject("input").put("type", "filestream");
    o.putObject("host").put("name", HOST);
    o.putObject("agent").put("type", "filebeat");
    return o;
  }
}
