package dev.cudawatch.processor.formats;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import java.io.IOException;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.Map;

/** Reading shippers' JSON: objects, nested fields, their several timestamp shapes. */
final class JsonFields {
  private JsonFields() {}

  /** Epoch seconds a numeric timestamp may have: Instant's own range (year ±1e9). */
  static final double MAX_EPOCH_SECONDS = Instant.MAX.getEpochSecond();

  /** The record as a JSON object, or the reason it is not one. */
  static JsonNode object(byte[] bytes, String format) throws WireFormatException {
    if (bytes == null || bytes.length == 0) {
      throw new WireFormatException("empty " + format + " record");
    }
    JsonNode tree;
    try {
      tree = WireJson.mapper().readTree(bytes);
    } catch (IOException e) {
      String m = String.valueOf(e.getMessage());
      int nl = m.indexOf('\n');
      throw new WireFormatException(
          "not JSON (" + format + "): " + (nl < 0 ? m : m.substring(0, nl)), e);
    }
    if (tree == null || !tree.isObject()) {
      throw new WireFormatException(format + " record is not a JSON object");
    }
    return tree;
  }

  /** The node at a path of nested keys, or null. */
  static JsonNode at(JsonNode n, String... path) {
    for (String p : path) {
      if (n == null || !n.isObject()) {
        return null;
      }
      n = n.get(p);
    }
    return n == null || n.isNull() ? null : n;
  }

  /** A text field (a number is read as its text); null when absent. */
  static String text(JsonNode n, String... path) throws WireFormatException {
    JsonNode v = at(n, path);
    if (v == null) {
      return null;
    }
    if (v.isTextual() || v.isNumber()) {
      return v.asText();
    }
    throw new WireFormatException(String.join(".", path) + " is not text");
  }

  /** A non-negative integer field, as a number or its text; null when absent. */
  static Long offset(JsonNode n, String... path) throws WireFormatException {
    String t = text(n, path);
    if (t == null || t.isEmpty()) {
      return null;
    }
    try {
      long v = Long.parseLong(t);
      if (v >= 0) {
        return v;
      }
    } catch (NumberFormatException e) {
      // falls through to the error below
    }
    throw new WireFormatException(String.join(".", path) + " is not an offset: " + t);
  }

  /** A map of string labels (pod labels); empty when absent. */
  static Map<String, String> labels(JsonNode n, String... path) {
    JsonNode v = at(n, path);
    Map<String, String> out = new LinkedHashMap<>();
    if (v != null && v.isObject()) {
      v.properties()
          .forEach(
              e -> {
                if (e.getValue().isValueNode()) {
                  out.put(e.getKey(), e.getValue().asText());
                }
              });
    }
    return out;
  }

  /**
   * A timestamp: RFC 3339 text, or epoch seconds as a number (Fluent Bit's default "double"). Null
   * when absent; a value that is neither is an error.
   */
  static Instant time(JsonNode n, String... path) throws WireFormatException {
    JsonNode v = at(n, path);
    if (v == null) {
      return null;
    }
    if (v.isNumber()) {
      double s = v.asDouble();
      // NaN, infinities and seconds past Instant's range (1e17) are the record's fault: a reason,
      // never a DateTimeException that fails the task on every retry
      if (!Double.isFinite(s) || Math.abs(s) > MAX_EPOCH_SECONDS) {
        throw new WireFormatException(String.join(".", path) + " is out of range: " + v.asText());
      }
      long sec = (long) Math.floor(s);
      return Instant.ofEpochSecond(sec, Math.round((s - sec) * 1e6) * 1000);
    }
    if (v.isTextual()) {
      try {
        return OffsetDateTime.parse(v.asText()).toInstant();
      } catch (DateTimeException e) { // a parse error, or a valid text out of Instant's range
        throw new WireFormatException(
            String.join(".", path) + " is not an RFC 3339 time: " + v.asText());
      }
    }
    throw new WireFormatException(String.join(".", path) + " is not a time");
  }
}
