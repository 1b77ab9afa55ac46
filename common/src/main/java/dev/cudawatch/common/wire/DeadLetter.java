package dev.cudawatch.common.wire;

import java.time.Instant;

/**
 * A record some stage could not read, kept with the reason so nothing is lost silently.
 *
 * @param v wire version
 * @param stage the stage that rejected it (processor, alerts)
 * @param topic the topic it was read from
 * @param reason why it was rejected
 * @param payload the original bytes as text (invalid UTF-8 replaced), capped
 * @param time when it was rejected
 */
public record DeadLetter(
    int v, String stage, String topic, String reason, String payload, Instant time) {

  /** Dead letters keep at most this many characters of the original payload. */
  public static final int MAX_PAYLOAD_CHARS = 64 * 1024;

  public static DeadLetter of(
      String stage, String topic, String reason, byte[] payload, Instant t) {
    String text =
        payload == null ? "" : new String(payload, java.nio.charset.StandardCharsets.UTF_8);
    if (text.length() > MAX_PAYLOAD_CHARS) {
      text = text.substring(0, MAX_PAYLOAD_CHARS);
    }
    return new DeadLetter(WireJson.VERSION, stage, topic, reason, text, t);
  }
}
