package dev.cudawatch.ingest.framing;

/**
 * One line cut from a byte stream.
 *
 * @param start byte offset of its first byte
 * @param end byte offset just past its terminator: where reading resumes
 * @param text the line, decoded, without terminator
 * @param truncated true when it was longer than the limit and was cut
 */
public record FramedLine(long start, long end, String text, boolean truncated) {}
