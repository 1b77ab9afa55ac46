package dev.cudawatch.ingest.framing;

/**
 * One line cut from a byte stream.
 *
 * @param start byte offset of its first byte
 * @param end byte offset just past its terminator: where reading resumes
 * @param text the line, decoded, without terminator
 * @param truncated true when it was longer than the limit and was cut
 * @param raw the line before terminal escapes were removed, or null when it had none
 */
public record FramedLine(long start, long end, String text, boolean truncated, String raw) {
  public FramedLine(long start, long end, String text, boolean truncated) {
    this(start, end, text, truncated, null);
  }
}
