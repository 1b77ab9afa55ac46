package dev.cudawatch.diagnosis.offline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.engine.BigramFilter;
import dev.cudawatch.diagnosis.engine.LineNormalizer;
import dev.cudawatch.diagnosis.engine.LinePrefilter;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whatever the chunk size, a chunk's two prefilter lanes count each line once and flag exactly the
 * lines with a keyword, including lines a lane is still in when it reaches the chunk's end; the
 * stateless pair pass in front of the automaton changes nothing a chunk reports.
 */
class ChunkScannerTest {
  private static final LinePrefilter PREFILTER = new LinePrefilter(Catalog.builtIn());

  @Test
  void everyChunkSizeCountsEachLineOnceAndFlagsTheKeywordLines(@TempDir Path dir) throws Exception {
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      lines.add("step=" + i + " loss=0.5 lr=3e-4 " + "x".repeat(i % 7 * 13));
      if (i % 9 == 4) {
        lines.add("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB");
      }
      if (i % 11 == 3) {
        lines.add(""); // empty lines are lines too
      }
    }
    lines.add("NCCL WARN unfinished last line without a newline");
    Path file = dir.resolve("train.log");
    byte[] bytes = String.join("\n", lines).getBytes(StandardCharsets.UTF_8);
    Files.write(file, bytes);
    List<String> flagged =
        lines.stream().filter(l -> PREFILTER.flags(LineNormalizer.normalize(l).text())).toList();

    ChunkScanner scanner = new ChunkScanner(PREFILTER, LineNormalizer.MAX_LINE_CHARS);
    try (FileChannel ch = FileChannel.open(file)) {
      for (int chunk = 1; chunk <= 400; chunk += chunk < 40 ? 1 : 17) {
        for (int tail : new int[] {8, 1 << 16}) {
          long total = 0;
          List<String> found = new ArrayList<>();
          for (long start = 0; start < bytes.length; start += chunk) {
            long end = Math.min(bytes.length, start + chunk);
            ChunkScanner.Result r = scanner.scan(ch, bytes.length, start, end, tail);
            assertEquals(
                startingIn(bytes, start, end),
                r.lines(),
                "lines of chunk at " + start + "/" + chunk);
            for (int i = 0; i < r.found(); i++) {
              found.add(r.text()[i]);
            }
            total += r.lines();
          }
          assertEquals(lines.size(), total, "chunk " + chunk + ", tail " + tail);
          if (tail > 1024) {
            assertEquals(flagged, found, "chunk " + chunk);
          } else {
            // a line longer than the tail is passed on unscanned: a superset, never a miss
            assertTrue(found.containsAll(flagged), "chunk " + chunk + ", tail " + tail);
          }
        }
      }
    }
  }

  @Test
  void thePairFirstPassFindsWhatTheAutomatonAloneFinds(@TempDir Path dir) throws Exception {
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < 80; i++) {
      lines.add(
          "step=" + i + " loss=0.5 lr=3e-4 cuda_mem_allocated_mb=4.0e4 " + "y".repeat(i % 5 * 9));
      switch (i % 10) {
        case 1 -> lines.add("RUNTIMEERROR: CUDA OUT OF MEMORY. Tried to allocate 2.00 GiB");
        case 3 ->
            lines.add("host:1 \u001b[31mNC\u001b[0mCL WARN coloured, normalised into a keyword");
        case 5 -> lines.add("a NUL\u0000 in the middle of a line");
        case 6 -> lines.add("NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.");
        case 7 -> lines.add("progress 10%\rprogress 20%\r  File \"/x.py\", line 3, in <module>\r");
        case 8 -> lines.add("");
        default -> {}
      }
    }
    lines.add("Traceback (most recent call last): the last line, without a newline");
    Path file = dir.resolve("train.log");
    byte[] bytes = String.join("\n", lines).getBytes(StandardCharsets.UTF_8);
    Files.write(file, bytes);
    // pairs ranked on the file itself, on nothing (every pair as rare), and on unrelated text
    byte[] other = "the quick brown fox jumps over the lazy dog".getBytes(StandardCharsets.UTF_8);
    List<BigramFilter> filters =
        List.of(
            PREFILTER.bigrams(bytes, 0, bytes.length),
            PREFILTER.bigrams(bytes, 0, 0),
            PREFILTER.bigrams(other, 0, other.length));
    long keywordLines =
        lines.stream().filter(l -> PREFILTER.flags(LineNormalizer.normalize(l).text())).count();
    assertTrue(keywordLines >= 8 * 4, "the test's lines hold keywords");
    ChunkScanner plain = new ChunkScanner(PREFILTER, LineNormalizer.MAX_LINE_CHARS);
    ChunkScanner paired = new ChunkScanner(PREFILTER, LineNormalizer.MAX_LINE_CHARS);
    try (FileChannel ch = FileChannel.open(file)) {
      for (BigramFilter filter : filters) {
        for (int chunk = 1; chunk <= 700; chunk += chunk < 40 ? 1 : 23) {
          for (int tail : new int[] {8, 1 << 16}) {
            int flagged = 0;
            for (long start = 0; start < bytes.length; start += chunk) {
              long end = Math.min(bytes.length, start + chunk);
              ChunkScanner.Result want = plain.scan(ch, bytes.length, start, end, tail);
              ChunkScanner.Result got = paired.scan(ch, bytes.length, start, end, tail, filter);
              String at = "chunk " + start + "/" + chunk + ", tail " + tail;
              assertEquals(want.lines(), got.lines(), at);
              assertEquals(want.found(), got.found(), at);
              for (int i = 0; i < want.found(); i++) {
                assertEquals(want.indexOf(i), got.indexOf(i), at);
                assertEquals(want.text()[i], got.text()[i], at);
                assertEquals(want.next()[i], got.next()[i], at);
              }
              flagged += got.found();
            }
            if (tail > 1024) {
              assertEquals(keywordLines, flagged, "chunk " + chunk + ": the keyword lines");
            }
          }
        }
      }
    }
  }

  private static long startingIn(byte[] b, long start, long end) {
    long n = 0;
    for (long i = start; i < end; i++) {
      if (i == 0 || b[(int) i - 1] == '\n') {
        n++;
      }
    }
    return n;
  }
}
