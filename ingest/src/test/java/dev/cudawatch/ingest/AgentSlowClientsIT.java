package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ten clients hold connections to the agent's port, five sending nothing and five a byte of a
 * request every second: /healthz and /metrics still answer at once, over real sockets.
 */
class AgentSlowClientsIT {
  @TempDir Path dir;
  private final List<Socket> slow = new ArrayList<>();

  @AfterEach
  void closeTheSlowOnes() throws Exception {
    for (Socket s : slow) {
      s.close();
    }
  }

  @Test
  void tenSlowClientsDoNotStopHealthz() throws Exception {
    AgentSettings s = HttpOnlyAgent.settings(dir).build();
    try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
      agent.start(false);
      int port = agent.httpPort();
      for (int i = 0; i < 10; i++) {
        Socket c = new Socket();
        c.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
        slow.add(c);
      }
      byte[] request =
          "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
      for (int second = 0; second < 4; second++) {
        for (int i = 5; i < 10; i++) {
          OutputStream o = slow.get(i).getOutputStream();
          o.write(request[second]); // one byte a second, never a whole request head
          o.flush();
        }
        long t0 = System.nanoTime();
        HttpResponse<String> r =
            http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz"))
                    .timeout(Duration.ofSeconds(2))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"status\":\"ok\""), r.body());
        assertTrue(ms < 2_000, "answered in " + ms + " ms beside ten slow clients");
        HttpResponse<String> m =
            http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                    .timeout(Duration.ofSeconds(2))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, m.statusCode());
        assertTrue(m.body().contains("cudawatch_agent_healthy 1"), m.body());
        // a second passes between the slow clients' bytes: the scenario's pace, not a wait
        Thread.sleep(1_000);
      }
    }
  }
}
