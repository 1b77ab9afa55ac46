package dev.cudawatch.ingest.ship;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.cudawatch.testkit.Await;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class InFlightBytesTest {
  @Test
  void aSenderWaitsWhileTheBoundIsTakenAndGoesOnceBytesAreGivenBack() throws Exception {
    InFlightBytes inFlight = new InFlightBytes(1000);
    int first = inFlight.take(800, () -> false);
    Thread.State[] state = {null};
    CompletableFuture<Integer> second =
        CompletableFuture.supplyAsync(
            () -> {
              state[0] = Thread.currentThread().getState();
              return inFlight.take(300, () -> false);
            });
    // it waits: 800 + 300 is past the bound
    Await.until("the second sender waits", () -> state[0] != null, Duration.ofSeconds(10));
    assertFalse(second.isDone());
    assertEquals(800, inFlight.taken());
    inFlight.give(first);
    assertEquals(300, (int) second.get(10, java.util.concurrent.TimeUnit.SECONDS));
    assertEquals(300, inFlight.taken());
  }

  @Test
  void aRecordLargerThanTheBoundGoesAloneAndAClosedShipperWakesTheWaiting() {
    InFlightBytes inFlight = new InFlightBytes(1000);
    assertEquals(1000, inFlight.take(5000, () -> false), "takes the whole bound, not more");
    AtomicBoolean closed = new AtomicBoolean();
    CompletableFuture<Integer> waiting =
        CompletableFuture.supplyAsync(() -> inFlight.take(10, closed::get));
    closed.set(true);
    Exception e =
        assertThrows(
            java.util.concurrent.ExecutionException.class,
            () -> waiting.get(10, java.util.concurrent.TimeUnit.SECONDS));
    assertEquals(IllegalStateException.class, e.getCause().getClass());
    assertEquals(1000, inFlight.taken(), "a sender that gave up holds nothing");
  }
}
