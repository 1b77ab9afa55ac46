package dev.cudawatch.diagnosis.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Where an incident's rank and GPU come from, and a printed device ordinal mapped to the GPU. */
class AttributionTest {
  @Test
  void aPrintedOrdinalIsTheJobsOwnNumberingMappedToThePhysicalGpu() {
    Map<String, Object> f = new LinkedHashMap<>(Map.of("gpu", 1L));
    IncidentAttribution.apply(
        f,
        null,
        new LineMeta(
            "r",
            Instant.EPOCH,
            5,
            1,
            null,
            null,
            Map.of("visible_gpus", "4,6", "gpu", "CUDA_VISIBLE_DEVICES", "rank", "RANK")));
    assertEquals(6L, f.get("gpu"));
    Map<?, ?> a = (Map<?, ?>) f.get("attribution");
    assertEquals("log text (device 1 of CUDA_VISIBLE_DEVICES)", a.get("gpu"));
    assertEquals("RANK", a.get("rank"));
    assertEquals("log text", a.get("tried"));
  }

  @Test
  void theTextsRankPrefixWinsAndOfflineThereIsNoAttributionField() {
    Map<String, Object> f = new LinkedHashMap<>();
    IncidentAttribution.apply(f, 3, null);
    assertEquals(3L, f.get("rank"));
    assertFalse(f.containsKey("attribution"));
  }
}
