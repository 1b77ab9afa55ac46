package dev.cudawatch.alerts.handoff;

import java.io.IOException;
import java.net.http.HttpResponse;

/**
 * One call to the API server with the hand-off's bounded retries: a 5xx, a 429 or an I/O error is
 * tried again after a doubling delay, up to {@code max_attempts}; any other answer is final.
 */
final class KubeRetries {
  interface Call {
    HttpResponse<String> run() throws IOException, InterruptedException;
  }

  /** The answer (2xx), or why there is none: a reason to count and a detail to log. */
  record Outcome(HttpResponse<String> response, int status, String reason, String detail) {
    boolean ok() {
      return response != null;
    }
  }

  private KubeRetries() {}

  static Outcome run(NodeConditionSettings s, Call c) throws InterruptedException {
    long delay = s.retryInitialMs();
    String reason = null;
    String detail = null;
    int status = 0;
    for (int attempt = 1; attempt <= s.maxAttempts(); attempt++) {
      if (attempt > 1) {
        Thread.sleep(delay); // the back-off between tries, not a wait for a state
        delay *= 2;
      }
      try {
        HttpResponse<String> r = c.run();
        status = r.statusCode();
        if (status / 100 == 2) {
          return new Outcome(r, status, null, null);
        }
        reason =
            switch (status) {
              case 401 -> "unauthorized";
              case 403 -> "forbidden";
              case 404 -> "not_found";
              default -> status >= 500 || status == 429 ? "server_error" : "rejected";
            };
        detail = "HTTP " + status;
        if (status < 500 && status != 429) {
          break; // the same request would be refused again
        }
      } catch (IOException e) {
        reason = "unreachable";
        detail = e.getClass().getSimpleName() + ": " + e.getMessage();
      }
    }
    return new Outcome(null, status, reason, detail);
  }
}
