package dev.cudawatch.processor.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.processor.config.ProcessorSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * deploy/shippers: the processor's config loads and validates, and each shipper's config sends
 * training logs and the kernel log to the topic the processor reads in that shipper's format.
 * (rsyslog's drop-in runs for real in {@link RsyslogShipperIT}.)
 */
class ShipperConfigsTest {
  private static final Path DIR = Path.of("../deploy/shippers");
  private static final YAMLMapper YAML = new YAMLMapper();

  private static Map<String, String> topicFormats() {
    ProcessorSettings s =
        new ConfigLoader("CUDAWATCH_PROCESSOR", Map.of())
            .load(DIR.resolve("processor.yaml"), ProcessorSettings.class);
    s.validate("");
    return s.inputs().stream()
        .collect(Collectors.toMap(InputSettings::topic, InputSettings::format));
  }

  @Test
  void theProcessorReadsEveryShippersTopicInItsFormat() {
    Map<String, String> t = topicFormats();
    assertEquals(6, t.size(), t.toString());
    assertEquals(RecordFormat.NAMES.size(), t.values().stream().distinct().count());
  }

  @Test
  void fluentBit() throws Exception {
    JsonNode c = YAML.readTree(DIR.resolve("fluent-bit/fluent-bit.yaml").toFile());
    JsonNode out = c.at("/pipeline/outputs/0");
    assertEquals("kafka", out.get("name").asText());
    assertEquals(RecordFormat.FLUENT_BIT, topicFormats().get(out.get("topics").asText()));
    assertEquals("json", out.get("format").asText());
    String inputs = c.at("/pipeline/inputs").toString();
    assertTrue(inputs.contains("/var/log/jobs/") && inputs.contains("\"kmsg\""), inputs);
    assertTrue(inputs.contains("\"offset_key\":\"offset\""), "the offset the job dedups by");
  }

  @Test
  void vector() throws Exception {
    JsonNode c = YAML.readTree(DIR.resolve("vector/vector.yaml").toFile());
    JsonNode sink = c.at("/sinks/cudawatch");
    assertEquals("kafka", sink.get("type").asText());
    assertEquals(RecordFormat.VECTOR, topicFormats().get(sink.get("topic").asText()));
    assertEquals("json", sink.at("/encoding/codec").asText());
    for (JsonNode in : sink.get("inputs")) {
      assertTrue(c.at("/sources").has(in.asText()), "source " + in);
    }
    assertTrue(c.at("/sources").toString().contains("kern.log"));
    for (String file : new String[] {"training", "kernel"}) {
      assertEquals(
          "offset",
          c.at("/sources/" + file + "/offset_key").asText(),
          file + ": the offset the job dedups by and tells a rotation by");
    }
  }

  @Test
  void filebeat() throws Exception {
    JsonNode c = YAML.readTree(DIR.resolve("filebeat/filebeat.yml").toFile());
    JsonNode out = c.get("output.kafka");
    assertEquals(RecordFormat.FILEBEAT, topicFormats().get(out.get("topic").asText()));
    String inputs = c.get("filebeat.inputs").toString();
    assertTrue(inputs.contains("/var/log/jobs/") && inputs.contains("kern.log"), inputs);
    assertTrue(!inputs.contains("file_identity.path"), "the file's identity, not its name");
  }

  @Test
  void otelCollector() throws Exception {
    JsonNode c = YAML.readTree(DIR.resolve("otel-collector/config.yaml").toFile());
    JsonNode kafka = c.at("/exporters/kafka/logs");
    assertEquals(RecordFormat.OTLP, topicFormats().get(kafka.get("topic").asText()));
    assertTrue(kafka.get("encoding").asText().startsWith("otlp_"));
    JsonNode pipeline = c.at("/service/pipelines/logs");
    for (JsonNode r : pipeline.get("receivers")) {
      assertTrue(c.at("/receivers").has(r.asText()), "receiver " + r);
    }
    for (JsonNode p : pipeline.get("processors")) {
      assertTrue(c.at("/processors").has(p.asText()), "processor " + p);
    }
    assertTrue(c.at("/receivers").toString().contains("kern.log"));
  }

  @Test
  void rsyslog() throws Exception {
    String c = Files.readString(DIR.resolve("rsyslog/cudawatch.conf"));
    assertTrue(c.contains("topic=\"cudawatch.rsyslog\""));
    assertEquals(RecordFormat.RSYSLOG, topicFormats().get("cudawatch.rsyslog"));
  }
}
