package dev.cudawatch.processor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cudawatch.common.Topics;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code processor --submit} hands the job to a running cluster through its REST endpoint. */
class ProcessorSubmitIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  @TempDir Path dir;

  @Test
  void submitsToTheClusterAndReturns() throws Exception {
    // a cluster of its own, as `flink run` would find it: not this JVM's test environment
    Configuration conf = new Configuration();
    conf.setString("rest.bind-port", "0");
    conf.setString("rest.bind-address", "127.0.0.1");
    EmbeddedKafkaBroker broker = KAFKA.broker();
    try (MiniCluster cluster =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(2)
                .build())) {
      cluster.start();
      broker.createTopics(Topics.ALL, 1);
      // the MiniCluster runs in this JVM with the job's classes; the shipped jar can be empty
      Path jar = dir.resolve("job.jar");
      try (OutputStream o = Files.newOutputStream(jar);
          JarOutputStream j = new JarOutputStream(o, new Manifest())) {
        j.flush();
      }
      URI rest = cluster.getRestAddress().get();
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      CommandLine cli =
          new CommandLine(new ProcessorMain())
              .setOut(new PrintWriter(out))
              .setErr(new PrintWriter(err));
      int code =
          cli.execute(
              "--submit",
              rest.getHost() + ":" + rest.getPort(),
              "--jar",
              jar.toString(),
              "--bootstrap-servers",
              broker.bootstrapServers());
      assertEquals(0, code, err.toString());
      assertTrue(out.toString().startsWith("submitted job "), out.toString());
      String id = out.toString().split(" ")[2];

      HttpClient http = HttpClient.newHttpClient();
      JsonNode overview =
          new ObjectMapper()
              .readTree(
                  http.send(
                          HttpRequest.newBuilder(rest.resolve("/jobs/" + id)).build(),
                          HttpResponse.BodyHandlers.ofString())
                      .body());
      assertEquals(ProcessorMain.JOB_NAME, overview.path("name").asText());
      http.send(
          HttpRequest.newBuilder(rest.resolve("/jobs/" + id + "?mode=cancel"))
              .method("PATCH", HttpRequest.BodyPublishers.noBody())
              .build(),
          HttpResponse.BodyHandlers.discarding());
    }
  }

  @Test
  void aBadAddressOrAMissingJarIsAClearError() {
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new ProcessorMain()).setErr(new PrintWriter(err));
    assertEquals(2, cli.execute("--submit", "nowhere", "--jar", "x.jar"));
    assertTrue(err.toString().contains("HOST:PORT"), err.toString());
    err.getBuffer().setLength(0);
    assertEquals(
        2, cli.execute("--submit", "localhost:8081", "--jar", dir.resolve("no.jar").toString()));
    assertTrue(err.toString().contains("not found"), err.toString());
  }
}
