package dev.cudawatch.ingest.attribution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.testkit.Await;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The lookup threads on real threads: a hung lookup holds no caller, keys, the queue's cap. */
class LookupsTest {
  @Test
  void aHungLookupHoldsNoCallerAndIsRunOncePerKeyWithinTheQueuesCap() throws Exception {
    Changes changes = new Changes();
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger ran = new AtomicInteger();
    Runnable hung =
        () -> {
          ran.incrementAndGet();
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        };
    try (Lookups l = Lookups.pool("test", 1, 2, changes)) {
      long before = changes.generation();
      assertTrue(l.submit("job 1", hung), "the caller returns while the lookup hangs");
      assertFalse(l.submit("job 1", hung), "one lookup per key at a time");
      assertTrue(l.pending("job 1"));
      Await.until("the hung lookup to start", () -> ran.get() == 1, Duration.ofSeconds(30));
      assertTrue(l.submit("job 2", hung), "queued behind it");
      assertTrue(l.submit("job 3", hung), "queued behind it");
      assertFalse(l.submit("job 4", hung), "the queue holds 2");
      assertEquals(1, l.rejected());
      assertFalse(l.pending("job 4"), "a refused lookup is asked for again later");
      assertEquals(before, changes.generation(), "nothing answered yet");

      release.countDown();
      Await.until(
          "every queued lookup to end",
          () -> !l.pending("job 1") && !l.pending("job 2") && !l.pending("job 3"),
          Duration.ofSeconds(30));
      assertEquals(3, ran.get());
      assertEquals(3, l.started());
      assertEquals(before + 3, changes.generation(), "each answer moves the generation");
      assertTrue(l.submit("job 1", ran::incrementAndGet), "asked again once it answered");
    }
  }

  @Test
  void aFailingLookupFreesItsKey() {
    Changes changes = new Changes();
    Lookups l = Lookups.inline(changes);
    assertTrue(
        l.submit(
            "k",
            () -> {
              throw new IllegalStateException("scontrol printed nonsense");
            }));
    assertFalse(l.pending("k"));
    assertEquals(1, changes.generation());
  }
}
