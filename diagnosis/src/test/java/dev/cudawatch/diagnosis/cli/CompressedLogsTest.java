package dev.cudawatch.diagnosis.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.airlift.compress.zstd.ZstdOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Compressed logs (gzip, zstd, made by the real tools) give the incidents of the plain log, byte
 * for byte; binary files and corrupt compressed data are one clear line and exit status 2.
 */
class CompressedLogsTest {
  @TempDir Path dir;
  private Path plain;

  /** Every golden log in one, with filler so it is read in chunks (over 4 MiB) when plain. */
  @BeforeEach
  void log() throws IOException {
    plain = dir.resolve("plain").resolve("job.log");
    Files.createDirectories(plain.getParent());
    List<Path> golden;
    try (Stream<Path> s = Files.list(Path.of("src/test/resources/golden"))) {
      golden = s.filter(p -> p.toString().endsWith(".log")).sorted().toList();
    }
    try (OutputStream out = Files.newOutputStream(plain)) {
      int step = 0;
      for (Path g : golden) {
        out.write(Files.readAllBytes(g));
        StringBuilder filler = new StringBuilder("\n");
        for (int i = 0; i < 4000; i++) {
          filler.append("step ").append(step++).append(" loss 0.").append(i).append(" ok\n");
        }
        out.write(filler.toString().getBytes(StandardCharsets.US_ASCII));
      }
    }
    assertTrue(Files.size(plain) > 4 << 20, "large enough to be read in chunks when plain");
  }

  private record Result(int code, String out, String err) {}

  private Result run(InputStream stdin, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        new CommandLine(
                new ClassifyCommand(
                    new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8),
                    stdin))
            .execute(args);
    return new Result(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private Result run(String... args) {
    return run(new ByteArrayInputStream(new byte[0]), args);
  }

  /** Runs a real program to its end, failing the test if it fails. */
  private static void sh(String script) throws Exception {
    Process p = new ProcessBuilder("bash", "-c", script).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), script);
    assertEquals(0, p.exitValue(), script + ": " + output);
  }

  private static boolean onPath(String tool) throws Exception {
    Process p = new ProcessBuilder("bash", "-c", "command -v " + tool).start();
    p.getInputStream().readAllBytes();
    return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
  }

  /**
   * {@code zstd} compresses {@code src} into {@code dst}; the library does where the tool is
   * missing.
   */
  private static void zstd(Path src, Path dst, boolean append) throws Exception {
    if (onPath("zstd")) {
      sh("zstd -q -c '" + src + "' " + (append ? ">>" : ">") + " '" + dst + "'");
      return;
    }
    try (OutputStream o =
            append
                ? Files.newOutputStream(
                    dst,
                    java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.APPEND)
                : Files.newOutputStream(dst);
        ZstdOutputStream z = new ZstdOutputStream(o)) {
      z.write(Files.readAllBytes(src));
    }
  }

  @Test
  void gzipAndZstdGiveTheIncidentsOfThePlainLogByteForByte() throws Exception {
    Path gz = dir.resolve("job.log.gz");
    Path zst = dir.resolve("job.log.zst");
    sh("gzip -c '" + plain + "' > '" + gz + "'");
    zstd(plain, zst, false);
    String expected = run("--json", plain.toString()).out();
    assertTrue(expected.split("\n").length > 20, "the golden logs hold incidents");
    byte[] plainBytes = Files.readAllBytes(plain);
    // the same path holding the compressed bytes (compression is told by magic bytes, not by the
    // name), so even the incidents' ids, made from the file name, are the same
    for (Path p : List.of(gz, zst)) {
      Files.copy(p, plain, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      for (String threads : List.of("1", "2")) {
        Result r = run("--json", "--threads", threads, plain.toString());
        assertEquals(0, r.code(), r.err());
        assertEquals("", r.err());
        assertEquals(expected, r.out(), p + ", threads " + threads);
      }
    }
    Files.write(plain, plainBytes);
    // under their own names: the same incidents but for the file name and the ids made from it
    for (Path p : List.of(gz, zst)) {
      assertEquals(
          anonymous(expected, plain),
          anonymous(run("--json", p.toString()).out(), p),
          p.toString());
    }
    // stdin: no file name at all
    String fromStdin = run(Files.newInputStream(plain), "--json", "-").out();
    assertEquals(fromStdin, run(Files.newInputStream(gz), "--json", "-").out());
    assertEquals(fromStdin, run(Files.newInputStream(zst), "--json", "-").out());
  }

  private static String anonymous(String json, Path file) {
    return json.replace(file.toString(), "FILE").replaceAll("\\b[0-9a-f]{16}\\b", "ID");
  }

  @Test
  void concatenatedMembersAndFramesAreReadWhole() throws Exception {
    // log rotation appends: a second member whose incident only the whole read finds
    Path first = dir.resolve("first.log");
    Path second = dir.resolve("second.log");
    Files.writeString(first, "step 1 ok\nstep 2 ok\n");
    Files.writeString(
        second,
        "step 3 ok\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n");
    Path gz = dir.resolve("rotated.gz");
    sh("gzip -c '" + first + "' > '" + gz + "' && gzip -c '" + second + "' >> '" + gz + "'");
    Path zst = dir.resolve("rotated.zst");
    zstd(first, zst, false);
    zstd(second, zst, true);
    for (Path p : List.of(gz, zst)) {
      Result r = run("--json", p.toString());
      assertEquals(0, r.code(), r.err());
      assertTrue(r.out().contains("\"line\":4"), p + ": " + r.out());
      assertTrue(r.out().contains("\"class\":\"cuda_oom\""), p + ": " + r.out());
    }
    // through a real pipe whose second member arrives late: GZIPInputStream must not take the
    // empty pipe between members for the end of the file
    Process late =
        new ProcessBuilder(
                "bash", "-c", "gzip -c '" + first + "'; sleep 1; gzip -c '" + second + "'")
            .start();
    Result r = run(late.getInputStream(), "--json", "-");
    assertTrue(late.waitFor(60, TimeUnit.SECONDS));
    assertEquals(0, r.code(), r.err());
    assertTrue(r.out().contains("\"class\":\"cuda_oom\""), r.out());
  }

  @Test
  void binaryFilesAreSkippedWithOneLineAndTheOthersStillRead() throws Exception {
    Random rnd = new Random(3);
    // a core dump: an ELF header and its tables
    Path core = dir.resolve("core.12345");
    byte[] elf = new byte[6 << 20]; // large: the chunked path must refuse it too
    rnd.nextBytes(elf);
    System.arraycopy(new byte[64], 0, elf, 0, 64);
    System.arraycopy(new byte[] {0x7f, 'E', 'L', 'F', 2, 1, 1}, 0, elf, 0, 7);
    Files.write(core, elf);
    // a PyTorch checkpoint is a zip archive
    Path checkpoint = dir.resolve("model.pt");
    try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(checkpoint))) {
      z.putNextEntry(new ZipEntry("archive/data.pkl"));
      byte[] tensor = new byte[4096];
      rnd.nextBytes(tensor);
      z.write(tensor);
      z.closeEntry();
    }
    // a gzipped tarball is binary once decompressed
    Path tarball = dir.resolve("logs.tar.gz");
    sh("cd '" + dir + "' && tar czf logs.tar.gz plain");
    Path ok = dir.resolve("ok.log");
    Files.writeString(ok, "RuntimeError: CUDA error: misaligned address\n");

    Result r =
        run("--json", core.toString(), checkpoint.toString(), tarball.toString(), ok.toString());
    assertEquals(2, r.code());
    List<String> lines = r.err().lines().toList();
    assertEquals(
        List.of(
            "cudawatch classify: " + core + ": binary file (not a log); skipped",
            "cudawatch classify: " + checkpoint + ": binary file (not a log); skipped",
            "cudawatch classify: " + tarball + ": binary file (not a log); skipped"),
        lines);
    assertTrue(r.out().contains("misaligned_address"), r.out());
    assertFalse(r.out().contains(core.toString()), "nothing classified from the core dump");

    Result one = run("--threads", "1", core.toString(), ok.toString());
    assertEquals(2, one.code());
    assertEquals("cudawatch classify: " + core + ": binary file (not a log); skipped\n", one.err());
  }

  @Test
  void corruptCompressedDataIsOneLineAfterTheIncidentsBeforeIt() throws Exception {
    Path gz = dir.resolve("job.log.gz");
    sh("gzip -c '" + plain + "' > '" + gz + "'");
    String whole = run("--json", gz.toString()).out();
    byte[] bytes = Files.readAllBytes(gz);

    // cut short: a job killed while `| gzip > log.gz` was writing
    Path truncated = dir.resolve("truncated.log.gz");
    Files.write(truncated, java.util.Arrays.copyOf(bytes, bytes.length / 2));
    // damaged in the middle
    Path damaged = dir.resolve("damaged.log.gz");
    byte[] bad = bytes.clone();
    for (int i = bad.length / 2; i < bad.length / 2 + 64; i++) {
      bad[i] = (byte) ~bad[i];
    }
    Files.write(damaged, bad);
    Path zst = dir.resolve("truncated.log.zst");
    zstd(plain, dir.resolve("whole.zst"), false);
    byte[] z = Files.readAllBytes(dir.resolve("whole.zst"));
    Files.write(zst, java.util.Arrays.copyOf(z, z.length / 2));
    // a gzip header and nothing after it
    Path header = dir.resolve("header.gz");
    Files.write(header, new byte[] {0x1f, (byte) 0x8b, 8});

    for (Path p : List.of(truncated, damaged, zst, header)) {
      for (String threads : List.of("1", "2")) {
        Result r = run("--json", "--threads", threads, p.toString());
        assertEquals(2, r.code(), p + ": " + r.err());
        String kind = p.toString().endsWith(".zst") ? "zstd" : "gzip";
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(
            r.err()
                .startsWith("cudawatch classify: " + p + ": corrupt " + kind + " data near byte "),
            r.err());
        assertFalse(r.err().contains("Exception") || r.err().contains("\tat "), r.err());
        if (p != header) {
          // the incidents of the readable part are reported: the whole log's first one
          String first = r.out().lines().findFirst().orElse("");
          assertFalse(first.isEmpty(), p + ": incidents before the corruption");
          String where = first.substring(first.indexOf("\"line\""), first.indexOf(",\"root\""));
          assertTrue(whole.contains(where), where);
        }
      }
    }
  }

  @Test
  void aLogWithBinaryBytesAfterItsFirstKibIsStillALog() throws Exception {
    Path f = dir.resolve("mixed.log");
    byte[] junk = new byte[64 << 10];
    new Random(5).nextBytes(junk);
    List<byte[]> parts = new ArrayList<>();
    parts.add("step 1 ok\n".repeat(200).getBytes(StandardCharsets.US_ASCII));
    parts.add(junk);
    parts.add(
        "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
            .getBytes(StandardCharsets.US_ASCII));
    try (OutputStream o = Files.newOutputStream(f)) {
      for (byte[] p : parts) {
        o.write(p);
      }
    }
    Result r = run("--json", f.toString());
    assertEquals(0, r.code(), r.err());
    assertTrue(r.out().contains("\"class\":\"cuda_oom\""), r.out());
  }
}
