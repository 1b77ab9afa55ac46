package dev.cudawatch.diagnosis.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.offline.ParallelClassifier;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The parallel path must print byte for byte what the single-threaded path prints: the same
 * incidents, in the same order, with the same line numbers, on every corpus in the repository, on
 * all of them at once, and on generated logs made to put every line-level state (tracebacks, diff
 * hunks, progress bars, escapes, long lines) across chunk boundaries.
 */
class ParallelClassifyTest {
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
  private static Catalog catalog;

  @TempDir Path dir;

  @BeforeAll
  static void load() {
    catalog = Catalog.builtIn();
  }

  private static List<Path> corpora() throws IOException {
    List<Path> roots = new ArrayList<>();
    roots.add(Path.of("src/test/resources"));
    String real = System.getProperty("corpus.real");
    if (real != null && Files.isDirectory(Path.of(real))) {
      roots.add(Path.of(real));
    }
    List<Path> files = new ArrayList<>();
    for (Path root : roots) {
      try (Stream<Path> s = Files.walk(root)) {
        s.filter(Files::isRegularFile).sorted().forEach(files::add);
      }
    }
    return files;
  }

  /** --json output of files classified with the given threads and chunk size. */
  private static String json(List<String> files, int threads, int chunk, int tail) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8);
    JsonReport report = new JsonReport(out);
    try (ParallelClassifier pc =
        ParallelClassifier.builder(catalog)
            .clock(CLOCK)
            .threads(threads)
            .chunkBytes(chunk)
            .tailBytes(tail)
            .build()) {
      pc.classifyAll(
          files,
          new ByteArrayInputStream(new byte[0]),
          new ParallelClassifier.Listener() {
            @Override
            public java.util.function.LongConsumer started(String file, long size) {
              return n -> {};
            }

            @Override
            public void settled(String file, List<Incident> incidents) {
              report.settled(file, incidents); // as classify does: lines rendered early
            }

            @Override
            public void done(String file, List<Incident> incidents) {
              report.file(file, incidents);
            }

            @Override
            public void failed(String file, Exception e) {
              out.println("FAILED " + file + ": " + e);
            }
          });
    }
    return buf.toString(StandardCharsets.UTF_8);
  }

  private static void assertSame(List<String> files, int chunk, int tail) {
    String single = json(files, 1, chunk, tail);
    String parallel = json(files, 3, chunk, tail);
    assertEquals(single, parallel, "chunk " + chunk + ", tail " + tail + ": " + files.size());
  }

  @Test
  void everyCorpusFileGivesTheSameJsonInSmallChunks() throws IOException {
    List<String> files = corpora().stream().map(Path::toString).toList();
    assertTrue(files.size() > 500, "the corpora: " + files.size() + " files");
    for (String f : files) {
      for (int chunk : new int[] {97, 4096}) {
        assertSame(List.of(f), chunk, chunk == 97 ? 16 : 1 << 16);
      }
    }
    String all = json(files, 1, 1 << 22, 1 << 16);
    assertTrue(all.split("\n").length > 500, "the corpora hold incidents");
    assertEquals(all, json(files, 3, 512, 64), "every corpus file at once");
  }

  @Test
  void allCorporaAsOneLogGiveTheSameJson() throws IOException {
    Path big = dir.resolve("all.log");
    try (var out = Files.newOutputStream(big)) {
      for (Path p : corpora()) {
        out.write(Files.readAllBytes(p));
      }
    }
    for (int chunk : new int[] {1000, 65536}) {
      assertSame(List.of(big.toString()), chunk, chunk == 1000 ? 100 : 1 << 16);
    }
  }

  @Test
  void generatedLogsWithStateAcrossChunksGiveTheSameJson() throws IOException {
    List<String> errors = new ArrayList<>();
    for (Path p : corpora()) {
      for (String l : Files.readAllLines(p, StandardCharsets.ISO_8859_1)) {
        if (l.length() < 300) {
          errors.add(l);
        }
      }
    }
    String[] tricky = {
      "@@ -1,4 +1,6 @@",
      " context line",
      "+RuntimeError: CUDA error: an illegal memory access was encountered",
      "-torch.OutOfMemoryError: CUDA out of memory.",
      "",
      "Traceback (most recent call last):",
      "  File \"/home/u/train.py\", line 42, in <module>",
      "  File \"/usr/lib/python3/site-packages/torch/x.py\", line 7, in f",
      "\u001b[31mRuntimeError: CUDA\u001b[0m error: device-side assert triggered",
      "RuntimeError: CUDA\u0000error: misaligned address",
      "epoch 1:  10%|\u2588         | 1/10\repoch 1:  20%|\u2588\u2588        | 2/10",
      "[rank3]: RuntimeError: NCCL error in: x, unhandled system error",
      "[rank1]:[W reducer.cpp] warning\r",
      "\u00e9\u00e8 non-ASCII \ufffd CUDA error: out of memory",
      "step 100 loss 0.25 lr 1e-4",
      "-> not a diff",
    };
    Random rnd = new Random(19);
    for (int round = 0; round < 6; round++) {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      int lines = 3000 + rnd.nextInt(3000);
      for (int i = 0; i < lines; i++) {
        int k = rnd.nextInt(100);
        String line;
        if (k < 50) {
          line = "step " + i + " loss " + rnd.nextInt(1000) + " ok";
        } else if (k < 70) {
          line = tricky[rnd.nextInt(tricky.length)];
        } else if (k < 97) {
          line = errors.get(rnd.nextInt(errors.size()));
        } else {
          line = "x".repeat(rnd.nextInt(3000)) + " CUDA error: out of memory " + "y".repeat(200);
        }
        b.writeBytes(line.getBytes(StandardCharsets.UTF_8));
        b.write(rnd.nextInt(20) == 0 ? '\r' : '\n');
        if (rnd.nextInt(40) == 0) {
          b.write('\n');
        }
      }
      if (round % 2 == 1) {
        b.writeBytes("no newline at the end: CUDA error: misaligned address".getBytes());
      }
      Path f = dir.resolve("gen-" + round + ".log");
      Files.write(f, b.toByteArray());
      for (int chunk : new int[] {50, 333, 4096}) {
        assertSame(List.of(f.toString()), chunk, chunk == 4096 ? 1 << 16 : 64);
      }
    }
  }

  @Test
  void theCommandPrintsTheSameWithOneThreadOrAll() throws IOException {
    List<String> args = new ArrayList<>(List.of("--json"));
    corpora().forEach(p -> args.add(p.toString()));
    args.add(dir.resolve("missing.log").toString());
    String one = command(concat("--threads", "1", args));
    String all = command(concat("--threads", "2", args));
    assertTrue(one.contains("\"line\""), one.length() + " bytes");
    assertEquals(one, all);
  }

  private static List<String> concat(String a, String b, List<String> rest) {
    List<String> out = new ArrayList<>(List.of(a, b));
    out.addAll(rest);
    return out;
  }

  private static String command(List<String> args) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8);
    PrintStream err = new PrintStream(buf, true, StandardCharsets.UTF_8);
    int code =
        new CommandLine(new ClassifyCommand(out, err, new ByteArrayInputStream(new byte[0])))
            .execute(args.toArray(String[]::new));
    return code + "\n" + buf.toString(StandardCharsets.UTF_8);
  }
}
