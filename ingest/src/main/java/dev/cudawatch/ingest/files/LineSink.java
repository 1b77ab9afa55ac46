package dev.cudawatch.ingest.files;

import dev.cudawatch.ingest.framing.FramedLine;

/**
 * Where a tailed file's lines go; {@code onAck} runs once the line is safely stored, {@code
 * onFailure} when it could not be (the file is then read again from before it).
 */
public interface LineSink {
  void line(TailedFile file, FramedLine line, Runnable onAck, Runnable onFailure);
}
