package dev.cudawatch.ingest.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateFileTest {
  @TempDir Path dir;

  /** A counter kept as "N" by earlier releases, as {"format": 2, "n": N} now. */
  private static final StateFile.Codec<Long> COUNTER =
      new StateFile.Codec<>() {
        @Override
        public int format() {
          return 2;
        }

        @Override
        public Long fromJson(int format, JsonNode json) throws IOException {
          if (!json.path("n").isIntegralNumber()) {
            throw new IOException("no n");
          }
          return json.get("n").asLong();
        }

        @Override
        public Long fromUnversioned(byte[] bytes) throws IOException {
          try {
            return Long.parseLong(new String(bytes, StandardCharsets.US_ASCII).strip());
          } catch (NumberFormatException e) {
            throw new IOException("not a number", e);
          }
        }

        @Override
        public void toJson(Long n, ObjectNode into) {
          into.put("n", n);
        }
      };

  @Test
  void noFileIsNoState() throws Exception {
    assertNull(new StateFile<>(dir.resolve("counter"), COUNTER).read());
  }

  @Test
  void theUnversionedFormIsReadAndTheNextWriteMigratesIt() throws Exception {
    Path f = dir.resolve("counter");
    Files.writeString(f, "41\n");
    StateFile<Long> file = new StateFile<>(f, COUNTER);
    assertEquals(41L, file.read());
    file.write(42L);
    assertEquals("{\"format\":2,\"n\":42}", Files.readString(f));
    assertEquals(42L, file.read());
    try (Stream<Path> s = Files.list(dir)) {
      assertEquals(List.of(f), s.toList(), "written through AtomicFiles: no temporaries left");
    }
  }

  @Test
  void aNewerFormatIsRefusedWithOneLineNamingTheFileAndTheFormats() throws Exception {
    Path f = dir.resolve("counter");
    Files.writeString(f, "{\"format\":3,\"n\":7,\"more\":true}");
    StateFile.NewerFormatException e =
        assertThrows(
            StateFile.NewerFormatException.class, () -> new StateFile<>(f, COUNTER).read());
    assertEquals(3, e.format());
    assertEquals(
        f + " is format 3, written by a newer release; this release reads formats 1 to 2",
        e.getMessage());
    assertFalse(e.getMessage().contains("\n"));
  }

  @Test
  void corruptFilesAreUnreadableNamingTheFile() throws Exception {
    Path f = dir.resolve("counter");
    for (String junk :
        List.of(
            "", "abc", "{\"format\":2}", "{\"format\":2,\"n\":\"x\"}", "{\"format\":0,\"n\":1}")) {
      Files.writeString(f, junk);
      IOException e = assertThrows(IOException.class, () -> new StateFile<>(f, COUNTER).read());
      assertFalse(e instanceof StateFile.NewerFormatException, junk);
      assertTrue(e.getMessage().startsWith("cannot read " + f + ": "), e.getMessage());
    }
  }

  @Test
  void theFormatOfBytes() {
    assertEquals(1, StateFile.formatOf("1 1038\n".getBytes(StandardCharsets.US_ASCII)));
    assertEquals(1, StateFile.formatOf("{\"a:1\":{\"position\":3}}".getBytes()));
    assertEquals(1, StateFile.formatOf("{\"format\":{\"position\":3}}".getBytes()));
    assertEquals(1, StateFile.formatOf("{\"format\":\"2\"}".getBytes()));
    assertEquals(2, StateFile.formatOf("{\"format\":2}".getBytes()));
    assertEquals(9, StateFile.formatOf("{\"format\":9,\"x\":[]}".getBytes()));
  }
}
