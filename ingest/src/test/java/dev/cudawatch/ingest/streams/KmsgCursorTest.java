package dev.cudawatch.ingest.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.wire.WireJson;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KmsgCursorTest {
  private static final Path OLD =
      Path.of("src/test/resources/upgrade/release-5be5e18/state/kernel/kmsg-cursor");
  private static final String BOOT = "6c3e1f0a-aaaa-4c1e-9d0e-0000000005be";

  @TempDir Path dir;

  @Test
  void theUnversionedCursorOfRelease5be5e18IsReadAndMigratedByTheNextSave() throws Exception {
    Files.copy(OLD, dir.resolve("kmsg-cursor"));
    KmsgCursor c = new KmsgCursor(dir);
    assertEquals(6, c.lastSeq(BOOT));
    assertEquals(-1, c.lastSeq("another-boot"), "another boot's cursor says nothing");
    c.save(BOOT, 9);
    JsonNode now = WireJson.mapper().readTree(dir.resolve("kmsg-cursor").toFile());
    assertEquals(KmsgCursor.FORMAT, now.path("format").asInt());
    assertEquals(BOOT, now.path("boot_id").asText());
    assertEquals(9, new KmsgCursor(dir).lastSeq(BOOT));
    assertEquals(0, c.resets());
  }

  @Test
  void aNewerCursorIsCountedAndThisBootIsReadAgainNeverSkipped() throws Exception {
    String newer = "{\"format\":3,\"boot_id\":\"" + BOOT + "\",\"seq\":500,\"ring\":\"x\"}";
    Files.writeString(dir.resolve("kmsg-cursor"), newer);
    KmsgCursor c = new KmsgCursor(dir);
    assertEquals(-1, c.lastSeq(BOOT), "from the start of the ring buffer, not from 500");
    assertEquals(1, c.resets());
    assertEquals(newer, Files.readString(dir.resolve("kmsg-cursor")), "left until the next save");
  }

  @Test
  void aCorruptCursorIsCountedAndThisBootIsReadAgainAsBefore() throws Exception {
    List<String> junk =
        List.of("", BOOT + " x", BOOT, "{\"format\":2,\"boot_id\":\"" + BOOT + "\"}", "{");
    for (int i = 0; i < junk.size(); i++) {
      Files.writeString(dir.resolve("kmsg-cursor"), junk.get(i));
      KmsgCursor c = new KmsgCursor(dir);
      assertEquals(-1, c.lastSeq(BOOT), junk.get(i));
      assertEquals(1, c.resets(), junk.get(i));
    }
  }
}
