package dev.cudawatch.alerts;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Links point where the service really serves, unless external_url says otherwise. */
class ExternalUrlTest {
  @Test
  void theConfiguredUrlWinsWithoutATrailingSlash() {
    assertEquals(
        "https://cw.example/x",
        ExternalUrl.of("https://cw.example/x/", "0.0.0.0", 7460, () -> "n"));
  }

  @Test
  void unsetItIsTheBoundHostAndPort() {
    assertEquals("http://127.0.0.1:41234", ExternalUrl.of(null, "127.0.0.1", 41234, () -> "n"));
    assertEquals("http://[::1]:7460", ExternalUrl.of(null, "::1", 7460, () -> "n"));
  }

  @Test
  void aWildcardBindIsTheMachinesHostname() {
    assertEquals(
        "http://gpu-node-3:7460", ExternalUrl.of(null, "0.0.0.0", 7460, () -> "gpu-node-3"));
    assertEquals("http://gpu-node-3:7460", ExternalUrl.of(null, "::", 7460, () -> "gpu-node-3"));
  }
}
