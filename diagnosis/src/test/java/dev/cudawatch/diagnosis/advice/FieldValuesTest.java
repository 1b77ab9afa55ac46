package dev.cudawatch.diagnosis.advice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class FieldValuesTest {
  @Test
  void sizesInEveryUnitBecomeBytes() {
    assertEquals(214748364800L, FieldValues.parseBytes("200.00 GiB"));
    assertEquals(543162368L, FieldValues.parseBytes("518.00 MiB"));
    assertEquals(2048L, FieldValues.parseBytes("2.00 KiB"));
    assertEquals(0L, FieldValues.parseBytes("0 bytes"));
    assertEquals(274877906944L, FieldValues.parseBytes("274,877,906,944"));
    assertEquals(1256277934L, FieldValues.parseBytes("1.17GiB"));
    assertNull(FieldValues.parseBytes("lots"));
  }

  @Test
  void typesByFieldName() {
    assertEquals(1024L, FieldValues.typed("free_bytes", "1 KiB"));
    assertEquals(20000L, FieldValues.typed("timeout_ms", "20000"));
    assertEquals(3L, FieldValues.typed("gpu", "3"));
    assertEquals("ALLREDUCE", FieldValues.typed("op_type", "ALLREDUCE"));
  }

  @Test
  void humanBytesReadsBack() {
    assertEquals("200.00 GiB", FieldValues.humanBytes(214748364800L));
    assertEquals("12 bytes", FieldValues.humanBytes(12));
  }

  @Test
  void humanBytesPrintsWhatStringFormatPrints() {
    // the hand-rolled rounding must match %.2f (half-up on the shortest decimal), on any value
    java.util.Random r = new java.util.Random(7);
    for (int k = 0; k < 200_000; k++) {
      long b = r.nextLong() >>> r.nextInt(63);
      String ours = FieldValues.humanBytes(b);
      double v = b;
      int u = 0;
      while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
      }
      if (u > 0) {
        String expected = String.format(java.util.Locale.ROOT, "%.2f", v);
        assertEquals(expected, ours.substring(0, ours.indexOf(' ')), "bytes " + b);
      }
    }
  }
}
