package dev.cudawatch.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AwaitTest {
  @Test
  void returnsTheFirstValueThatSatisfiesTheCondition() {
    AtomicInteger polls = new AtomicInteger();
    int seen =
        Await.until("three polls", polls::incrementAndGet, n -> n >= 3, Duration.ofSeconds(5));
    assertEquals(3, seen);
  }

  @Test
  void aTimeoutNamesWhatWasAwaitedAndTheLastValueObserved() {
    AssertionError e =
        assertThrows(
            AssertionError.class,
            () -> Await.until("the counter to reach 2", () -> 1, n -> n >= 2, Duration.ZERO));
    assertTrue(e.getMessage().contains("the counter to reach 2"), e.getMessage());
    assertTrue(e.getMessage().contains("last observed: 1"), e.getMessage());
  }

  @Test
  void aProbeThatThrowsIsRetriedAndItsLastErrorReported() {
    AtomicInteger polls = new AtomicInteger();
    String v =
        Await.until(
            "a probe that fails twice",
            () -> {
              if (polls.incrementAndGet() < 3) {
                throw new IllegalStateException("not yet");
              }
              return "up";
            },
            "up"::equals,
            Duration.ofSeconds(5));
    assertEquals("up", v);
    AssertionError e =
        assertThrows(
            AssertionError.class,
            () ->
                Await.until(
                    "a server",
                    () -> {
                      throw new java.io.IOException("connection refused");
                    },
                    x -> true,
                    Duration.ZERO));
    assertTrue(e.getMessage().contains("connection refused"), e.getMessage());
  }
}
