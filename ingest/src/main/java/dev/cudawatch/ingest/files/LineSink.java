package dev.cudawatch.ingest.files;

import dev.cudawatch.ingest.framing.FramedLine;

/**
 * Where a tailed file's lines go; {@code onAck} runs once the line is safely stored, {@code
 * onFailure} when it could not be (the file is then read again from before it).
 */
public interface LineSink {
  void line(TailedFile file, FramedLine line, Runnable onAck, Runnable onFailure);

  /**
   * The file's writer wrote nothing after {@code end}, the end of its last line, for the tailer's
   * quiet period, or the file ended: {@code stream} is the lines' own stream (a CRI log's), or
   * null.
   */
  default void quiet(TailedFile file, long end, String stream) {}
}
