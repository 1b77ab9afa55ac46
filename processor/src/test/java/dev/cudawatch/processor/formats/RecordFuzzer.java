package dev.cudawatch.processor.formats;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cudawatch.processor.formats.ShipperShapes.Shape;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.opentelemetry.proto.logs.v1.LogsData;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Makes good records bad, reproducibly from a seed: truncation, type swaps, huge and negative
 * numbers, NaN and Infinity, deep nesting, invalid UTF-8, missing fields, enormous strings, flipped
 * bytes, impossible times; for otlp_proto, flipped and cut bytes and impossible field values.
 */
final class RecordFuzzer {
  /** What a mutation did; {@code surelyBad}: no reader may accept the result. */
  record Mutant(byte[] value, String how, boolean surelyBad) {}

  private static final JsonNodeFactory F = JsonNodeFactory.instance;
  private static final String NAN_MARK = "@@nan@@";
  private static final String DEEP_MARK = "@@deep@@";
  private static final String[] TIMES = {
    "+200000000-01-01T00:00:00Z",
    "-200000000-01-01T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "1969-12-31T23:59:59Z",
    "9999-12-31T23:59:59Z",
    "2026-13-45T99:00:00Z",
    "",
    "now"
  };
  private final Random rnd;

  RecordFuzzer(long seed) {
    this.rnd = new Random(seed);
  }

  Mutant mutate(Shape shape, byte[] good) {
    return shape == Shape.OTLP_PROTO ? proto(good) : json(good);
  }

  private Mutant json(byte[] good) {
    int kind = rnd.nextInt(100);
    if (kind < 12) {
      return new Mutant(Arrays.copyOf(good, rnd.nextInt(good.length - 1)), "truncated", true);
    }
    if (kind < 20) {
      return new Mutant(flip(good), "bytes flipped", false);
    }
    if (kind < 28) {
      return new Mutant(badUtf8(good), "invalid utf-8", false);
    }
    ObjectNode root = ShapesJob.tree(good);
    List<Slot> slots = new ArrayList<>();
    slots(root, slots);
    Slot s = slots.get(rnd.nextInt(slots.size()));
    String how;
    if (kind < 40) {
      s.set(swapType(s.get()));
      how = "type of " + s.name + " swapped";
    } else if (kind < 52) {
      s.set(huge());
      how = "huge number in " + s.name;
    } else if (kind < 58) {
      s.set(F.textNode(NAN_MARK));
      how = "NaN in " + s.name;
    } else if (kind < 63) {
      s.set(F.textNode(DEEP_MARK)); // written as text below: Jackson refuses to write it
      how = "deep nesting in " + s.name;
    } else if (kind < 75) {
      s.remove();
      how = s.name + " removed";
    } else if (kind < 77) {
      s.set(F.textNode(ShapesJob.FAILURE + " " + "x".repeat(70_000 + rnd.nextInt(200_000))));
      how = "enormous " + s.name;
    } else {
      s.set(F.textNode(TIMES[rnd.nextInt(TIMES.length)]));
      how = "odd time text in " + s.name;
    }
    String text = root.toString();
    if (how.startsWith("deep")) {
      int depth = rnd.nextBoolean() ? 200 : 3000;
      text = text.replace("\"" + DEEP_MARK + "\"", "[".repeat(depth) + "]".repeat(depth));
    }
    if (how.startsWith("NaN")) {
      String[] nans = {"NaN", "Infinity", "-Infinity"};
      text = text.replace("\"" + NAN_MARK + "\"", nans[rnd.nextInt(3)]);
    }
    return new Mutant(text.getBytes(StandardCharsets.UTF_8), how, false);
  }

  private Mutant proto(byte[] good) {
    int kind = rnd.nextInt(100);
    if (kind < 25) {
      return new Mutant(Arrays.copyOf(good, rnd.nextInt(good.length - 1)), "truncated", false);
    }
    if (kind < 50) {
      return new Mutant(flip(good), "bytes flipped", false);
    }
    if (kind < 55) {
      return new Mutant(badUtf8(good), "invalid utf-8", false);
    }
    LogsData.Builder b;
    try {
      b = LogsData.parseFrom(good).toBuilder();
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new AssertionError(e);
    }
    LogRecord.Builder r =
        b.getResourceLogsBuilder(0).getScopeLogsBuilder(0).getLogRecordsBuilder(0);
    long[] times = {Long.MIN_VALUE, -1, Long.MAX_VALUE, 0, 1};
    String how;
    switch (rnd.nextInt(5)) {
      case 0 -> {
        r.setTimeUnixNano(times[rnd.nextInt(times.length)]);
        r.setObservedTimeUnixNano(times[rnd.nextInt(times.length)]);
        how = "odd times";
      }
      case 1 -> {
        r.setBody(AnyValue.newBuilder().setIntValue(rnd.nextLong()));
        how = "body not a string";
      }
      case 2 -> {
        r.setBody(AnyValue.newBuilder().setStringValue("x".repeat(70_000 + rnd.nextInt(200_000))));
        how = "enormous body";
      }
      case 3 -> {
        b.getResourceLogsBuilder(0)
            .getResourceBuilder()
            .addAttributes(
                KeyValue.newBuilder()
                    .setKey("k8s.pod.labels.batch.kubernetes.io/job-completion-index")
                    .setValue(AnyValue.newBuilder().setStringValue(huge().asText())));
        how = "huge rank";
      }
      default -> {
        b.getResourceLogsBuilder(0).getResourceBuilder().clearAttributes();
        how = "no resource attributes";
      }
    }
    return new Mutant(b.build().toByteArray(), how, false);
  }

  private byte[] flip(byte[] b) {
    byte[] out = b.clone();
    for (int i = 0, n = 1 + rnd.nextInt(3); i < n; i++) {
      out[rnd.nextInt(out.length)] = (byte) rnd.nextInt(256);
    }
    return out;
  }

  private byte[] badUtf8(byte[] b) {
    byte[][] bad = {{(byte) 0xff}, {(byte) 0xc3, 0x28}, {(byte) 0xed, (byte) 0xa0, (byte) 0x80}};
    int at = rnd.nextInt(b.length);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(b, 0, at);
    out.writeBytes(bad[rnd.nextInt(bad.length)]);
    out.write(b, at, b.length - at);
    return out.toByteArray();
  }

  private JsonNode huge() {
    return switch (rnd.nextInt(8)) {
      case 0 -> F.numberNode(1e17);
      case 1 -> F.numberNode(-1e17);
      case 2 -> F.numberNode(Double.MAX_VALUE);
      case 3 -> F.numberNode(Long.MAX_VALUE);
      case 4 -> F.numberNode(new BigInteger("1000000000000000000000000000000"));
      case 5 -> F.numberNode(-1);
      case 6 -> F.numberNode(2147483648L);
      default -> F.textNode("99999999999999999999");
    };
  }

  private JsonNode swapType(JsonNode n) {
    int k = rnd.nextInt(6);
    if (k == 0 && !n.isTextual()) {
      return F.textNode(n.toString());
    }
    return switch (k) {
      case 1 -> F.numberNode(rnd.nextInt());
      case 2 -> F.booleanNode(rnd.nextBoolean());
      case 3 -> F.arrayNode().add(n.deepCopy());
      case 4 -> F.objectNode().set("v", n.deepCopy());
      default -> F.nullNode();
    };
  }

  /** A place in a tree: an object's field or an array's element. */
  private static final class Slot {
    final JsonNode parent;
    final String field;
    final int index;
    final String name;

    Slot(JsonNode parent, String field, int index, String name) {
      this.parent = parent;
      this.field = field;
      this.index = index;
      this.name = name;
    }

    JsonNode get() {
      return field != null ? parent.get(field) : parent.get(index);
    }

    void set(JsonNode v) {
      if (field != null) {
        ((ObjectNode) parent).set(field, v);
      } else {
        ((ArrayNode) parent).set(index, v);
      }
    }

    void remove() {
      if (field != null) {
        ((ObjectNode) parent).remove(field);
      } else {
        ((ArrayNode) parent).remove(index);
      }
    }
  }

  private static void slots(JsonNode n, List<Slot> out) {
    slots(n, "", out);
  }

  private static void slots(JsonNode n, String path, List<Slot> out) {
    if (n.isObject()) {
      for (String f : (Iterable<String>) n::fieldNames) {
        String p = path + "." + f;
        out.add(new Slot(n, f, -1, p));
        slots(n.get(f), p, out);
      }
    } else if (n.isArray()) {
      for (int i = 0; i < n.size(); i++) {
        String p = path + "[" + i + "]";
        out.add(new Slot(n, null, i, p));
        slots(n.get(i), p, out);
      }
    }
  }
}
