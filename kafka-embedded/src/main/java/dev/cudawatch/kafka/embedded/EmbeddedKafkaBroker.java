package dev.cudawatch.kafka.embedded;

import dev.cudawatch.common.Topics;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real single-node KRaft Kafka broker (broker and controller in one), started in-process from
 * Kafka's own production jars. Used by {@code cudawatch local} and by the tests: no mocks.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedKafkaBroker.class);

  /** Every port {@link #freePort()} gave in this JVM. */
  private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

  private final Path dir;
  private final int brokerPort;
  private final int controllerPort;
  private final String clusterId;
  private KafkaRaftServer server;

  private EmbeddedKafkaBroker(Path dir, int brokerPort, int controllerPort, String clusterId) {
    this.dir = dir;
    this.brokerPort = brokerPort;
    this.controllerPort = controllerPort;
    this.clusterId = clusterId;
  }

  /**
   * Formats {@code dataDir} (unless already formatted) and starts a broker on free loopback ports.
   */
  public static EmbeddedKafkaBroker start(Path dataDir) throws IOException {
    return start(dataDir, freePort(), freePort());
  }

  /** Starts on fixed ports: a restarted broker keeps its address and its data. */
  public static EmbeddedKafkaBroker start(Path dataDir, int brokerPort, int controllerPort)
      throws IOException {
    Files.createDirectories(dataDir);
    Path idFile = dataDir.resolve("cudawatch-cluster-id");
    String clusterId =
        Files.exists(idFile) ? Files.readString(idFile).strip() : Uuid.randomUuid().toString();
    EmbeddedKafkaBroker b = new EmbeddedKafkaBroker(dataDir, brokerPort, controllerPort, clusterId);
    if (!Files.exists(idFile)) {
      b.format();
      Files.writeString(idFile, clusterId);
    }
    b.startServer();
    return b;
  }

  private Properties props() {
    Properties p = new Properties();
    p.put("process.roles", "broker,controller");
    p.put("node.id", "1");
    p.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
    p.put(
        "listeners",
        "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
    p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
    p.put("controller.listener.names", "CONTROLLER");
    p.put("inter.broker.listener.name", "PLAINTEXT");
    p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    p.put("log.dirs", dir.resolve("log").toString());
    p.put("metadata.log.dir", dir.resolve("meta").toString());
    p.put("offsets.topic.replication.factor", "1");
    p.put("offsets.topic.num.partitions", "4");
    p.put("transaction.state.log.replication.factor", "1");
    p.put("transaction.state.log.min.isr", "1");
    p.put("transaction.state.log.num.partitions", "4");
    p.put("share.coordinator.state.topic.replication.factor", "1");
    p.put("share.coordinator.state.topic.min.isr", "1");
    p.put("group.initial.rebalance.delay.ms", "0");
    p.put("num.partitions", "2");
    p.put("auto.create.topics.enable", "false");
    p.put("log.segment.bytes", String.valueOf(64 << 20));
    return p;
  }

  private void format() throws IOException {
    KafkaConfig config = KafkaConfig.fromProps(props(), false);
    try {
      new Formatter()
          .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
          .setNodeId(1)
          .setClusterId(clusterId)
          .setDirectories(List.of(dir.resolve("log").toString(), dir.resolve("meta").toString()))
          .setMetadataLogDirectory(dir.resolve("meta").toString())
          .setControllerListenerName("CONTROLLER")
          .setReleaseVersion(MetadataVersion.latestProduction())
          .setSupportedFeatures(Feature.PRODUCTION_FEATURES)
          .run();
    } catch (Exception e) {
      throw new IOException(
          "cannot format the embedded broker's storage in " + dir + ": " + e.getMessage(), e);
    }
    LOG.debug("formatted {} for cluster {} ({})", dir, clusterId, config.nodeId());
  }

  private void startServer() throws IOException {
    server = new KafkaRaftServer(KafkaConfig.fromProps(props(), false), Time.SYSTEM);
    try {
      server.startup();
    } catch (RuntimeException e) {
      close(); // the broker's threads are not daemons: never leave them behind
      throw new IOException("embedded broker failed to start: " + e.getMessage(), e);
    }
    awaitReady();
  }

  private void awaitReady() throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    try (Admin admin = admin()) {
      while (true) {
        try {
          admin.describeCluster().nodes().get(5, TimeUnit.SECONDS);
          return;
        } catch (Exception e) {
          if (System.nanoTime() > deadline) {
            close();
            throw new IOException("embedded broker did not become ready: " + e.getMessage(), e);
          }
        }
      }
    }
  }

  public String bootstrapServers() {
    return "127.0.0.1:" + brokerPort;
  }

  public int brokerPort() {
    return brokerPort;
  }

  public int controllerPort() {
    return controllerPort;
  }

  public Path dataDir() {
    return dir;
  }

  public Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()));
  }

  /** Creates the topics that do not exist yet. */
  public void createTopics(Collection<String> names, int partitions) throws IOException {
    try (Admin admin = admin()) {
      Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
      List<NewTopic> todo = new ArrayList<>();
      for (String n : names) {
        if (!existing.contains(n)) {
          todo.add(new NewTopic(n, partitions, (short) 1).configs(Topics.configs(n)));
        }
      }
      if (!todo.isEmpty()) {
        try {
          admin.createTopics(todo).all().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof TopicExistsException)) {
            throw e;
          }
        }
      }
      LOG.debug("topics ready: {}", names.stream().collect(Collectors.joining(", ")));
    } catch (Exception e) {
      throw new IOException("cannot create topics " + names + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    KafkaRaftServer s = server;
    server = null;
    if (s != null) {
      s.shutdown();
      s.awaitShutdown();
    }
  }

  /**
   * A free port on the loopback interface, never one this JVM was given before: tests point clients
   * at a free port as a broker that refuses, and such a client may outlive its test (a `run`
   * draining, a producer retrying); had a later broker been given the same port, that client's
   * records would land in another test's topics.
   */
  public static int freePort() throws IOException {
    for (int tries = 0; ; tries++) {
      int port;
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        s.setReuseAddress(true);
        port = s.getLocalPort();
      }
      if (HANDED_OUT.add(port) || tries >= 1_000) {
        return port;
      }
    }
  }
}
