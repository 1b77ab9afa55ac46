package dev.cudawatch.alerts.notify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OutboxTest {
  @TempDir Path dir;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void whatWasNotDeliveredSurvivesARestartInOrder() throws Exception {
    List<String> drops = new ArrayList<>();
    Outbox o = new Outbox(dir, 100, (r, why) -> drops.add(r + ":" + why));
    o.add("webhook", b("one"));
    o.add("webhook", b("two"));
    o.add("slack", b("three"));
    Outbox.Entry first = o.next("webhook", 0).orElseThrow();
    o.remove(first);
    Files.writeString(dir.resolve("webhook").resolve("00000000000000000009.tmp"), "half");

    Outbox again = new Outbox(dir, 100, (r, why) -> drops.add(r + ":" + why));
    assertEquals(
        "two",
        new String(again.next("webhook", 0).orElseThrow().payload(), StandardCharsets.UTF_8));
    assertEquals(1, again.size("webhook"));
    assertEquals(1, again.size("slack"));
    assertTrue(
        Files.notExists(dir.resolve("webhook").resolve("00000000000000000009.tmp")),
        "a cut write is cleared");
    again.add("webhook", b("four"));
    Outbox.Entry e = again.next("webhook", 0).orElseThrow();
    again.remove(e);
    assertEquals(
        "four",
        new String(again.next("webhook", 0).orElseThrow().payload(), StandardCharsets.UTF_8),
        "new entries come after old ones");
    assertTrue(drops.isEmpty());
  }

  @Test
  void aFullOutboxDropsTheOldestAndSaysSo() throws Exception {
    List<String> drops = new ArrayList<>();
    Outbox o = new Outbox(dir, 2, (r, why) -> drops.add(r + ":" + why));
    o.add("am", b("1"));
    o.add("am", b("2"));
    o.add("am", b("3"));
    assertEquals(List.of("am:outbox_full"), drops);
    assertEquals("2", new String(o.next("am", 0).orElseThrow().payload(), StandardCharsets.UTF_8));
    assertEquals(2, o.size("am"));
  }

  @Test
  void theOutboxIsBoundedInBytesAndKeepsAgesAcrossARestart() throws Exception {
    List<String> drops = new ArrayList<>();
    Path box = dir.resolve("outbox");
    Outbox o = new Outbox(box, dir.resolve("dead"), 1000, 25, (r, why) -> drops.add(r + ":" + why));
    o.add("am", b("0123456789"), 1_000, 9_000);
    o.add("am", b("0123456789"), 2_000, 0);
    assertEquals(20, o.bytes("am"));
    o.add("am", b("0123456789"), 3_000, 0);
    assertEquals(List.of("am:outbox_full"), drops, "30 bytes > 25: the oldest went");
    assertEquals(20, o.bytes("am"));
    Outbox again = new Outbox(box, dir.resolve("dead"), 1000, 25, (r, why) -> drops.add(r));
    Outbox.Entry e = again.next("am", 0).orElseThrow();
    assertEquals(2_000, e.createdAtMs());
    assertEquals(0, e.expiresAtMs());
    assertEquals(20, again.bytes("am"));
    again.deadLetter(e);
    assertEquals(1, again.size("am"));
    try (var dead = Files.list(dir.resolve("dead").resolve("am"))) {
      assertEquals(1, dead.count(), "the given-up notification is kept for an operator");
    }
  }
}
