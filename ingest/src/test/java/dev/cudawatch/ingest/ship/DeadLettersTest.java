package dev.cudawatch.ingest.ship;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.WireJson;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DeadLettersTest {
  @TempDir Path dir;

  @Test
  void eachLineNamesItsFormatAndAnOldFileIsAppendedTo() throws Exception {
    Path file = dir.resolve("dead-letters.jsonl");
    // a line as release 5be5e18 wrote it: no format
    String old =
        "{\"time\":\"2025-11-22T08:26:42Z\",\"reason\":\"too_large\",\"error\":\"e\","
            + "\"key\":\"k\",\"record\":\"{}\"}\n";
    Files.writeString(file, old);
    DeadLetters d = new DeadLetters(dir, 1 << 20, Clock.systemUTC());
    assertTrue(
        d.put(
            "too_large",
            "RecordTooLargeException",
            "k2".getBytes(StandardCharsets.UTF_8),
            "{\"text\":\"x\"}".getBytes(StandardCharsets.UTF_8)));
    List<String> lines = Files.readAllLines(file);
    assertEquals(2, lines.size());
    assertEquals(old.strip(), lines.get(0), "the old line is kept as it was");
    JsonNode n = WireJson.mapper().readTree(lines.get(1));
    assertEquals(DeadLetters.FORMAT, n.path("format").asInt());
    assertEquals("format", n.fieldNames().next());
    assertEquals("k2", n.path("key").asText());
  }
}
