package dev.cudawatch.diagnosis.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.WireJson;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ClassifyCommandTest {
  @TempDir Path dir;
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(byte[] stdin, String... args) {
    var cmd =
        new ClassifyCommand(
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            new ByteArrayInputStream(stdin));
    return new CommandLine(cmd).execute(args);
  }

  @Test
  void jsonHasTheContractFieldsInOrder() throws Exception {
    Path f = dir.resolve("job.log");
    Files.writeString(
        f, "hello\nRuntimeError: CUDA error: an illegal memory access was encountered\n");
    assertEquals(0, run(new byte[0], "--json", f.toString()));
    JsonNode n = WireJson.mapper().readTree(out.toString(StandardCharsets.UTF_8).strip());
    assertEquals(f.toString(), n.get("file").asText());
    assertEquals(2, n.get("line").asInt());
    assertEquals("illegal_memory_access", n.get("class").asText());
    assertTrue(n.get("root").asBoolean());
    for (String k :
        new String[] {
          "count", "severity", "suspect", "fields", "summary", "explanation", "next_steps"
        }) {
      assertTrue(n.has(k), k);
    }
  }

  @Test
  void anUnreadableFileExitsTwoAfterTheOthers() throws Exception {
    Path f = dir.resolve("ok.log");
    Files.writeString(f, "RuntimeError: CUDA error: misaligned address\n");
    int code = run(new byte[0], "--json", dir.resolve("missing.log").toString(), f.toString());
    assertEquals(2, code);
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("missing.log: no such file"));
    assertTrue(out.toString(StandardCharsets.UTF_8).contains("misaligned_address"));
  }

  @Test
  void readsStdin() {
    assertEquals(
        0,
        run(
            "NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.\n"
                .getBytes(StandardCharsets.UTF_8),
            "--json",
            "-"));
    assertTrue(out.toString(StandardCharsets.UTF_8).contains("\"xid\":79"));
  }

  @Test
  void binaryJunkDoesNotCrash() throws Exception {
    Path f = dir.resolve("junk.bin");
    byte[] junk = new byte[3 << 20];
    new Random(7).nextBytes(junk);
    try (OutputStream o = Files.newOutputStream(f)) {
      // a log first: a file that starts binary is refused (CompressedLogsTest)
      o.write("step 1 loss 0.5\n".repeat(100).getBytes(StandardCharsets.US_ASCII));
      o.write(junk);
      o.write(
          "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
              .getBytes(StandardCharsets.UTF_8));
      o.write(("y".repeat(10 << 20) + "\n").getBytes(StandardCharsets.US_ASCII));
    }
    assertEquals(0, run(new byte[0], "--json", f.toString()));
    assertTrue(out.toString(StandardCharsets.UTF_8).contains("\"class\":\"cuda_oom\""));
  }

  @Test
  void aBadCatalogIsReportedWithItsLine() throws Exception {
    Path cat = dir.resolve("bad.yaml");
    Files.writeString(
        cat, "signatures:\n  - id: x\n    class: nope\n    keywords: [a]\n    match: ['a']\n");
    assertEquals(2, run(new byte[0], "--catalog", cat.toString(), "-"));
    assertTrue(
        err.toString(StandardCharsets.UTF_8).contains("bad.yaml:2"),
        err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void theReadableReportLeadsWithTheRootCause() throws Exception {
    Path f = dir.resolve("t.log");
    Files.writeString(f, "RuntimeError: CUDA error: device-side assert triggered\n");
    assertEquals(0, run(new byte[0], "--no-color", f.toString()));
    String s = out.toString(StandardCharsets.UTF_8);
    assertTrue(s.contains("ROOT CAUSE  device_assert"), s);
    assertTrue(s.contains("Next steps:"), s);
  }
}
