package dev.cudawatch.ingest.framing;

/**
 * One line cut from a byte stream.
 *
 * @param start byte offset of its first byte
 * @param end byte offset just past its terminator: where reading resumes
 * @param text the line, decoded, without terminator
 * @param truncated true when it was longer than the limit and was cut
 * @param raw the line before terminal escapes were removed, or null when it had none
 * @param stream the stream a container runtime recorded ({@code stdout}, {@code stderr}), or null
 * @param time when the container runtime recorded the line, or null
 */
public record FramedLine(
    long start,
    long end,
    String text,
    boolean truncated,
    String raw,
    String stream,
    java.time.Instant time) {
  public FramedLine(long start, long end, String text, boolean truncated) {
    this(start, end, text, truncated, null, null, null);
  }

  public FramedLine(long start, long end, String text, boolean truncated, String raw) {
    this(start, end, text, truncated, raw, null, null);
  }
}
