package dev.cudawatch.it.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.launcher.ConfigKeys;
import dev.cudawatch.launcher.ConfigReference;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/configuration.md is generated from the configuration records: this fails when it is out of
 * date. Regenerate with {@code -Dgolden.update=true}.
 */
class ConfigReferenceTest {
  static final Path DOC = Path.of("../docs/configuration.md");

  @Test
  void theCommittedReferenceMatchesTheConfigurationRecords() throws Exception {
    String generated = ConfigReference.markdown();
    if (Boolean.getBoolean("golden.update")) {
      Files.writeString(DOC, generated);
    }
    assertEquals(
        generated,
        Files.readString(DOC),
        "docs/configuration.md is out of date: run ./mvnw -pl integration-tests -am test"
            + " -Dtest=ConfigReferenceTest -Dsurefire.failIfNoSpecifiedTests=false"
            + " -Dgolden.update=true");
  }

  @Test
  void everyKeyHasItsDefaultAndEnvironmentVariable() {
    String doc = ConfigReference.markdown();
    assertTrue(
        doc.contains(
            "| `notifications.webhook_url` | string | none |"
                + " `CUDAWATCH_ALERTS_NOTIFICATIONS__WEBHOOK_URL` |"),
        doc);
    assertTrue(
        doc.contains("| `http_port` | integer | `7461` | `CUDAWATCH_AGENT_HTTP_PORT` |"), doc);
    assertTrue(doc.contains("| `inputs[].format` | string |"), doc);
    for (ConfigReference.Service s : ConfigReference.SERVICES) {
      for (String key : ConfigKeys.topLevel(s.type())) {
        assertTrue(doc.contains("| `" + key), s.name() + " key " + key + " missing");
      }
    }
  }
}
