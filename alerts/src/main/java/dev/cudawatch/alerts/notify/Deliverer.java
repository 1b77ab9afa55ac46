package dev.cudawatch.alerts.notify;

import dev.cudawatch.alerts.metrics.AlertsMetrics;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.SplittableRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers one receiver's notifications from the outbox, oldest first: retries failures (network
 * errors, 5xx, 408, 429) with exponential backoff and jitter, drops what the receiver rejects
 * (other 4xx) with a count, and removes a notification only once the receiver accepted it. A
 * notification older than {@code max_age_ms} is dead-lettered (a receiver answering 5xx for good
 * does not hold its queue forever), and one whose alerts all ended ({@code endsAt} passed) is
 * dropped as stale. No exception stops the thread: it is counted, and the loop goes on. Logs name
 * the receiver, never its URL, which often carries a token.
 */
final class Deliverer implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(Deliverer.class);

  private final String receiver;
  private final URI url;
  private final Outbox outbox;
  private final HttpClient http;
  private final NotifySettings settings;
  private final AlertsMetrics metrics;
  private final Clock clock;
  private final SplittableRandom jitter = new SplittableRandom();
  private volatile boolean running = true;

  Deliverer(
      String receiver,
      URI url,
      Outbox outbox,
      HttpClient http,
      NotifySettings settings,
      AlertsMetrics metrics,
      Clock clock) {
    this.clock = clock;
    this.receiver = receiver;
    this.url = url;
    this.outbox = outbox;
    this.http = http;
    this.settings = settings;
    this.metrics = metrics;
  }

  @Override
  public void run() {
    int failures = 0;
    while (running) {
      try {
        Optional<Outbox.Entry> next = outbox.next(receiver, 200);
        gauge();
        if (next.isEmpty()) {
          continue;
        }
        Outbox.Entry e = next.get();
        long now = clock.millis();
        if (e.expiresAtMs() > 0 && now >= e.expiresAtMs()) {
          outbox.remove(e); // every alert in it has ended: the receiver knows it by itself
          metrics.notificationDropped(receiver, "stale");
          continue;
        }
        if (e.createdAtMs() > 0 && now - e.createdAtMs() >= settings.maxAgeMs()) {
          outbox.deadLetter(e);
          metrics.notificationDropped(receiver, "max_age");
          LOG.error(
              "{}: a notification was not accepted within max_age_ms; moved to {}",
              receiver,
              outbox.deadDir().resolve(receiver));
          failures = 0;
          continue;
        }
        Outcome o = post(e.payload());
        if (o == Outcome.DELIVERED || o == Outcome.REJECTED) {
          outbox.remove(e);
          gauge();
          failures = 0;
          continue;
        }
        failures++;
        Thread.sleep(backoff(failures));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        // a bug or a disk error must not silently end delivery: count, wait, go on
        metrics.error("deliverer");
        LOG.error(
            "{}: delivery loop failed ({}), retrying", receiver, e.getClass().getSimpleName());
        failures++;
        try {
          Thread.sleep(backoff(failures));
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  private void gauge() {
    metrics.outboxSize(receiver, outbox.size(receiver), outbox.bytes(receiver));
  }

  enum Outcome {
    DELIVERED,
    REJECTED,
    RETRY
  }

  Outcome post(byte[] body) throws InterruptedException {
    HttpRequest req =
        HttpRequest.newBuilder(url)
            .timeout(Duration.ofMillis(settings.timeoutMs()))
            .header("Content-Type", "application/json")
            .header("User-Agent", "cudawatch-alerts")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build();
    int code;
    try {
      code = http.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (java.io.IOException e) {
      metrics.notificationFailed(receiver);
      // the exception's class only: some messages repeat the address
      LOG.warn("{}: delivery failed ({}), will retry", receiver, e.getClass().getSimpleName());
      return Outcome.RETRY;
    }
    if (code >= 200 && code < 300) {
      metrics.notificationSent(receiver);
      return Outcome.DELIVERED;
    }
    if (code == 408 || code == 429 || code >= 500) {
      metrics.notificationFailed(receiver);
      LOG.warn("{}: HTTP {}, will retry", receiver, code);
      return Outcome.RETRY;
    }
    metrics.notificationDropped(receiver, "rejected");
    LOG.error("{}: HTTP {}: the receiver rejected a notification; it is dropped", receiver, code);
    return Outcome.REJECTED;
  }

  /** Exponential from retry_initial_ms up to retry_max_ms, with +-20 % jitter. */
  long backoff(int failures) {
    double base =
        Math.min(
            settings.retryMaxMs(),
            settings.retryInitialMs() * Math.pow(2, Math.min(30, failures - 1)));
    return Math.max(1, Math.round(base * (0.8 + 0.4 * jitter.nextDouble())));
  }

  void stop() {
    running = false;
  }
}
