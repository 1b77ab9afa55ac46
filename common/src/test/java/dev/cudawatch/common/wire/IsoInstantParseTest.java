package dev.cudawatch.common.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The fast instant reader agrees with {@link Instant#parse}, or leaves the string to it. */
class IsoInstantParseTest {
  @Test
  void readsWhatInstantToStringWritesAsInstantParseDoes() {
    SplittableRandom rnd = new SplittableRandom(35);
    long max = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();
    for (int i = 0; i < 200_000; i++) {
      Instant t =
          Instant.ofEpochSecond(
              rnd.nextLong(0, max),
              switch (i % 4) {
                case 0 -> 0;
                case 1 -> rnd.nextInt(1000) * 1_000_000;
                case 2 -> rnd.nextInt(1_000_000) * 1000;
                default -> rnd.nextInt(1_000_000_000);
              });
      assertEquals(t, IsoInstant.parse(t.toString()), t.toString());
    }
  }

  @Test
  void anythingElseIsLeftToTheGeneralReader() {
    for (String s :
        List.of(
            "2026-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-11-22T24:00:00Z",
            "2016-12-31T23:59:60Z",
            "2026-11-22t03:00:00z",
            "2026-11-22T03:00:00.Z",
            "2026-11-22T03:00:00.1234567890Z",
            "2026-11-22T03:00:00+01:00",
            "+12026-11-22T03:00:00Z",
            "2026-11-22 03:00:00Z",
            "2026-1x-22T03:00:00Z",
            "2026-11-22T03:00Z",
            "")) {
      assertNull(IsoInstant.parse(s), s);
    }
  }

  @Test
  void theFractionIsReadAsWritten() {
    for (String s :
        List.of(
            "2026-11-22T03:00:00.1Z",
            "2026-11-22T03:00:00.12Z",
            "2026-11-22T03:00:00.000000001Z",
            "1970-01-01T00:00:00Z",
            "0001-01-01T00:00:00.5Z",
            "2024-02-29T23:59:59.999999999Z")) {
      assertEquals(parseOrNull(s), IsoInstant.parse(s), s);
    }
  }

  private static Instant parseOrNull(String s) {
    try {
      return Instant.parse(s);
    } catch (DateTimeParseException e) {
      return null;
    }
  }
}
