package dev.cudawatch.diagnosis.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.WireJson;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code classify JOB.log --gpu-samples CSV} end to end on the H100 field trial ({@code
 * field-h100/}): leak-1's stderr (no times in it) and the node's nvidia-smi samples.
 */
class ClassifyGpuSamplesTest {
  private static final Path TRIAL = Path.of("src/test/resources/field-h100");
  private static final double MIB = 1 << 20;

  @TempDir Path dir;
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    var cmd =
        new ClassifyCommand(
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            new ByteArrayInputStream(new byte[0]));
    return new CommandLine(cmd).execute(args);
  }

  private JsonNode oom() throws Exception {
    for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
      JsonNode n = WireJson.mapper().readTree(line);
      if ("cuda_oom".equals(n.get("class").asText())) {
        return n;
      }
    }
    throw new AssertionError("no OOM in " + out);
  }

  @Test
  void theFieldTrialsOomFollowedItsSteadyLeak() throws Exception {
    int code =
        run(
            "--json",
            "--gpu-samples",
            TRIAL.resolve("nvidia-smi-samples.csv").toString(),
            TRIAL.resolve("leak-job.stderr.log").toString());
    assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
    JsonNode f = oom().get("fields");
    assertEquals("steady_leak", f.get("memory_before").asText(), f.toString());
    double growth = f.get("memory_growth_bytes_per_second").asDouble();
    assertEquals(995 * MIB, growth, 0.25 * 995 * MIB, "MiB/s: " + growth / MIB);
    assertTrue(f.get("memory_used_fraction").asDouble() > 0.95, f.toString());
    assertTrue(oom().get("next_steps").get(0).asText().contains("steady leak"));
    assertEquals("", err.toString(StandardCharsets.UTF_8), "the recording's rows all read");
  }

  @Test
  void theTrialsFlatStartAndJumpThenTheOomIsASuddenSpike() throws Exception {
    // the recording up to its 40 GiB jump, the card then held there 30 s and freed by the OOM
    List<String> rows = Files.readAllLines(TRIAL.resolve("nvidia-smi-samples.csv"));
    List<String> shaped = new ArrayList<>(rows.subList(0, 27)); // the comment and 26 samples
    String jump = shaped.get(26);
    assertTrue(jump.startsWith("2026/11/22 15:27:17.509") && jump.contains(", 43221,"), jump);
    for (int i = 1; i <= 60; i++) {
      long ms = 17_509 + 500L * i;
      shaped.add(
          String.format(
              "2026/11/22 15:27:%02d.%03d, 0, 00000000:00:06.0, %d, 81559",
              ms / 1000, ms % 1000, i < 60 ? 43_221 : 0));
    }
    Path csv = dir.resolve("jump.csv");
    Files.write(csv, shaped);
    assertEquals(
        0,
        run(
            "--json",
            "--gpu-samples",
            csv.toString(),
            TRIAL.resolve("leak-job.stderr.log").toString()));
    JsonNode f = oom().get("fields");
    assertEquals("sudden_spike", f.get("memory_before").asText(), f.toString());
    assertEquals((43_221 - 593) * MIB, f.get("memory_jump_bytes").asDouble(), f.toString());
    assertEquals(30.0, f.get("memory_jump_seconds_before").asDouble(), 0.05, f.toString());
    assertEquals(0.53, f.get("memory_used_fraction").asDouble(), 0.005);
  }

  @Test
  void withoutSamplesOfItsGpuTheOomStaysWithoutAndABadFileIsOneLine() throws Exception {
    Path other = dir.resolve("gpu3.csv");
    Files.writeString(
        other,
        "timestamp, index, memory.used [MiB], memory.total [MiB]\n"
            + "2026/11/22 15:27:04.831, 3, 100 MiB, 81559 MiB\n"
            + "2026/11/22 15:27:05.331, 3, 100 MiB, 81559 MiB\n"
            + "not a sample\n");
    assertEquals(
        0,
        run(
            "--json",
            "--gpu-samples",
            other.toString(),
            TRIAL.resolve("leak-job.stderr.log").toString()));
    assertFalse(oom().get("fields").has("memory_before"), "GPU 0's OOM, GPU 3's samples");
    assertTrue(
        err.toString(StandardCharsets.UTF_8).contains("1 rows skipped"),
        err.toString(StandardCharsets.UTF_8));

    out.reset();
    err.reset();
    int code =
        run(
            "--gpu-samples",
            dir.resolve("missing.csv").toString(),
            TRIAL.resolve("leak-job.stderr.log").toString());
    assertEquals(2, code);
    String e = err.toString(StandardCharsets.UTF_8);
    assertEquals(1, e.strip().lines().count(), e);
    assertTrue(e.contains("--gpu-samples: cannot read"), e);
  }

  @Test
  void theHelpNamesTheOption() {
    String help = new CommandLine(new ClassifyCommand()).getUsageMessage();
    assertTrue(help.contains("--gpu-samples=CSV"), help);
    assertTrue(help.contains("memory_before"), help);
  }
}
