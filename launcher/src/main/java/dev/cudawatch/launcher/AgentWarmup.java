package dev.cudawatch.launcher;

import dev.cudawatch.common.text.TrainingOutput;
import dev.cudawatch.ingest.Agent;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Runs healthy training output through the agent's own per-line path before {@code local} reports
 * started, shipping nothing ({@link Agent#warmUp}). Measured with bench/run's first probe: without
 * it the agent met its first lines cold while the job and the broker warmed up too, and ran seconds
 * behind a background starting with it, so a failing job's marker came late.
 */
final class AgentWarmup {
  /** Enough for the JIT's second tier to compile the per-line path (~10,000 calls a method). */
  static final int LINES = 40_000;

  private AgentWarmup() {}

  /** Writes the lines into {@code dir}, reads them through {@code agent}, and removes the file. */
  static long run(Agent agent, Path dir) throws IOException {
    Files.createDirectories(dir);
    Path file = dir.resolve("agent-warmup.log");
    try {
      write(file, LINES);
      return agent.warmUp(file);
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /** Writes {@code lines} lines of healthy training output. */
  static void write(Path file, int lines) throws IOException {
    try (BufferedWriter w = Files.newBufferedWriter(file)) {
      for (int i = 0; i < lines; i++) {
        w.write(TrainingOutput.line(i));
        w.write('\n');
      }
    }
  }
}
