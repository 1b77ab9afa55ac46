package dev.cudawatch.alerts;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.alerts.metrics.SeriesLimiter;
import dev.cudawatch.alerts.store.IncidentStore;
import dev.cudawatch.common.config.ConfigException;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.common.wire.Alert;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StoresAndLimitsTest {
  @TempDir Path dir;

  @Test
  void theIncidentStoreIsBoundedFilteredAndPaged() {
    IncidentStore s = new IncidentStore(3);
    for (int i = 0; i < 5; i++) {
      s.add(
          Fixtures.incident(
              "i" + i,
              i % 2 == 0 ? "cuda_oom" : "gpu_xid",
              "h" + i,
              "j",
              Fixtures.T0.plusSeconds(i)));
    }
    assertFalse(
        s.add(Fixtures.incident("i4", "cuda_oom", "h4", "j", Fixtures.T0)),
        "duplicates are kept once");
    assertEquals(3, s.size());
    assertEquals(2, s.evicted());
    var all = s.query(new IncidentStore.IncidentQuery(null, null, null, null, 0, 10));
    assertEquals("i4", all.items().get(0).id(), "newest first");
    var oom = s.query(new IncidentStore.IncidentQuery("cuda_oom", null, null, null, 0, 10));
    assertEquals(2, oom.total());
    var page =
        s.query(
            new IncidentStore.IncidentQuery(null, null, null, Fixtures.T0.plusSeconds(3), 1, 1));
    assertEquals(2, page.total());
    assertEquals("i3", page.items().get(0).id());
  }

  @Test
  void theIncidentStoreIsBoundedInBytesToo() {
    long one =
        dev.cudawatch.common.wire.WireJson.toBytes(
                Fixtures.incident("i0", "cuda_oom", "node-1", "j", Fixtures.T0))
            .length;
    IncidentStore s = new IncidentStore(1000, 3 * one + one / 2);
    for (int i = 0; i < 10; i++) {
      s.add(Fixtures.incident("i" + i, "cuda_oom", "node-1", "j", Fixtures.T0.plusSeconds(i)));
    }
    assertEquals(3, s.size(), "count allows 1000, bytes allow 3");
    assertEquals(7, s.evicted());
    assertTrue(s.bytes() <= 3 * one + one / 2);
  }

  @Test
  void alertsArePagedNewestFirst() {
    dev.cudawatch.alerts.store.AlertStore s = new dev.cudawatch.alerts.store.AlertStore(100);
    for (int i = 0; i < 5; i++) {
      s.put(AlertsFaultsIT.alert(i, i % 2 == 0 ? Alert.State.FIRING : Alert.State.RESOLVED));
    }
    var page = s.page(null, 1, 2);
    assertEquals(5, page.total());
    assertEquals(2, page.items().size());
    assertEquals(3, s.page("firing", 0, 10).total());
    assertEquals(2, s.page("resolved", 0, 10).items().size());
    assertEquals(0, s.page(null, 10, 10).items().size());
  }

  @Test
  void aVerdictUpdatesTheStoredIncidentInPlace() {
    IncidentStore s = new IncidentStore(10);
    s.add(Fixtures.incident("a", "illegal_memory_access", "h", "j", Fixtures.T0));
    s.add(Fixtures.incident("b", "cuda_oom", "h", "j", Fixtures.T0));
    assertFalse(
        s.add(
            Fixtures.incident("a", "illegal_memory_access", "h", "j", Fixtures.T0)
                .withVerdict("application_fault")),
        "not a new incident");
    var page =
        s.query(new IncidentStore.IncidentQuery("illegal_memory_access", null, null, null, 0, 10));
    assertEquals(1, page.total());
    assertEquals("application_fault", page.items().get(0).verdict());
    assertEquals(2, s.size());
  }

  @Test
  void seriesPastTheCapFoldIntoOther() {
    AtomicInteger capped = new AtomicInteger();
    SeriesLimiter l =
        new SeriesLimiter(2, new boolean[] {false, true}, v -> capped.incrementAndGet());
    assertArrayEquals(new String[] {"cuda_oom", "a"}, l.admit("cuda_oom", "a"));
    assertArrayEquals(new String[] {"cuda_oom", "b"}, l.admit("cuda_oom", "b"));
    assertArrayEquals(new String[] {"cuda_oom", "other"}, l.admit("cuda_oom", "c"));
    assertArrayEquals(new String[] {"cuda_oom", "a"}, l.admit("cuda_oom", "a"));
    assertEquals(1, capped.get());
  }

  @Test
  void configRejectsUnknownKeysAndBadUrlsWithoutEchoingThem() throws Exception {
    Path f = dir.resolve("alerts.yaml");
    Files.writeString(f, "http_port: 7460\nhttp_prot: 1\n");
    ConfigException e =
        assertThrows(
            ConfigException.class,
            () -> new ConfigLoader("CUDAWATCH_ALERTS", Map.of()).load(f, AlertsSettings.class));
    assertEquals(true, e.getMessage().startsWith(f + ":2: http_prot: unknown key"), e.getMessage());
    Files.writeString(f, "notifications:\n  webhook_url: ftp://hooks.example/T0KEN-SECRET\n");
    e =
        assertThrows(
            ConfigException.class,
            () -> new ConfigLoader("CUDAWATCH_ALERTS", Map.of()).load(f, AlertsSettings.class));
    assertFalse(e.getMessage().contains("T0KEN-SECRET"), e.getMessage());
    assertEquals(
        f + ":2: notifications.webhook_url: must be an http:// or https:// URL", e.getMessage());
    assertEquals(
        List.of(f + ":2: notifications.webhook_url: must be an http:// or https:// URL"),
        ConfigLoader.problems(f, AlertsSettings.class));
  }

  @Test
  void environmentOverridesTheFile() throws Exception {
    Path f = dir.resolve("alerts.yaml");
    Files.writeString(f, "http_port: 7460\nkafka:\n  bootstrap_servers: a:1\n");
    AlertsSettings s =
        new ConfigLoader(
                "CUDAWATCH_ALERTS",
                Map.of(
                    "CUDAWATCH_ALERTS_HTTP_PORT",
                    "9999",
                    "CUDAWATCH_ALERTS_KAFKA__BOOTSTRAP_SERVERS",
                    "b:2"))
            .load(f, AlertsSettings.class);
    assertEquals(9999, s.httpPort());
    assertEquals("b:2", s.kafka().bootstrapServers());
    ConfigException e =
        assertThrows(
            ConfigException.class,
            () ->
                new ConfigLoader("CUDAWATCH_ALERTS", Map.of("CUDAWATCH_ALERTS_NOPE", "1"))
                    .load(f, AlertsSettings.class));
    assertEquals(true, e.getMessage().contains("CUDAWATCH_ALERTS_NOPE"), e.getMessage());
  }
}
