package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.kubelet.v1.ContainerDevices;
import dev.cudawatch.ingest.kubelet.v1.ContainerResources;
import dev.cudawatch.ingest.kubelet.v1.ListPodResourcesRequest;
import dev.cudawatch.ingest.kubelet.v1.ListPodResourcesResponse;
import dev.cudawatch.ingest.kubelet.v1.PodResources;
import dev.cudawatch.ingest.kubelet.v1.PodResourcesListerGrpc;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shaded agent jar as the launcher runs it ({@code bin/cudawatch agent}, its JVM flags), so the
 * natives its shade filters kept are the ones that load: three agents, one per Kafka codec an
 * operator may set (lz4, the default, and zstd and snappy), each following a pod's container log
 * and asking a real gRPC server on a real unix socket, serving the kubelet's PodResources {@code
 * List}, which GPU the pod holds. Every line arrives at a real broker, attributed to that GPU.
 */
class ShadedAgentIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  static final Path LAUNCHER = Path.of("../bin/cudawatch");
  static final List<String> CODECS = List.of("lz4", "zstd", "snappy");

  @TempDir Path dir;

  static String gpu(int i) {
    return "GPU-a8aa2883-b011-47b6-8887-1b76e067f83" + i;
  }

  /** The kubelet's answer: pod {@code trainer-CODEC} holds GPU i. */
  static ListPodResourcesResponse pods() {
    ListPodResourcesResponse.Builder r = ListPodResourcesResponse.newBuilder();
    for (int i = 0; i < CODECS.size(); i++) {
      r.addPodResources(
          PodResources.newBuilder()
              .setNamespace("training")
              .setName("trainer-" + CODECS.get(i))
              .addContainers(
                  ContainerResources.newBuilder()
                      .setName("trainer")
                      .addDevices(
                          ContainerDevices.newBuilder()
                              .setResourceName("nvidia.com/gpu")
                              .addDeviceIds(gpu(i)))));
    }
    return r.build();
  }

  @Test
  void eachCodecShipsPodLogsAttributedByTheKubeletOverItsUnixSocket() throws Exception {
    assertTrue(
        Files.exists(ShadedJarContentsIT.JAR),
        ShadedJarContentsIT.JAR.toAbsolutePath() + " is missing: run through verify");
    AtomicInteger lists = new AtomicInteger();
    Path sock = dir.resolve("kubelet.sock");
    EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    EventLoopGroup worker = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    Server kubelet =
        NettyServerBuilder.forAddress(new DomainSocketAddress(sock.toString()))
            .channelType(EpollServerDomainSocketChannel.class)
            .bossEventLoopGroup(boss)
            .workerEventLoopGroup(worker)
            .addService(
                new PodResourcesListerGrpc.PodResourcesListerImplBase() {
                  @Override
                  public void list(
                      ListPodResourcesRequest req, StreamObserver<ListPodResourcesResponse> out) {
                    lists.incrementAndGet();
                    out.onNext(pods());
                    out.onCompleted();
                  }
                })
            .build()
            .start();
    List<Process> agents = new ArrayList<>();
    EmbeddedKafkaBroker broker = KAFKA.broker();
    try {
      broker.createTopics(Topics.ALL, 1);
      Map<String, Path> logs = new LinkedHashMap<>();
      for (String codec : CODECS) {
        Path home = Files.createDirectories(dir.resolve(codec));
        Path pods = Files.createDirectories(home.resolve("pods"));
        logs.put(
            codec,
            Files.createDirectories(
                    pods.resolve("training_trainer-" + codec + "_" + UUID.randomUUID())
                        .resolve("trainer"))
                .resolve("0.log"));
        agents.add(start(home, broker.bootstrapServers(), codec, pods, sock));
      }

      // a line more each round until a pod's lines come attributed (an agent's start may outrun
      // the kubelet's first answer on a loaded machine: its first lines then ship plain)
      Map<String, List<String>> written = new HashMap<>();
      Map<String, List<LogRecord>> got = new HashMap<>();
      try (KafkaConsumer<byte[], byte[]> c = consumer(broker.bootstrapServers())) {
        c.subscribe(List.of(Topics.LOGS));
        AtomicInteger step = new AtomicInteger();
        Await.until(
            "every agent's lines at the broker, attributed to its pod's GPU",
            () -> {
              int s = step.incrementAndGet();
              for (String codec : CODECS) {
                if (got.getOrDefault(codec, List.of()).stream()
                    .allMatch(r -> r.gpuUuid() == null)) {
                  String line = "[rank0]: " + codec + " step " + s + " loss 0.5";
                  Files.writeString(
                      logs.get(codec),
                      line + "\n",
                      StandardCharsets.UTF_8,
                      StandardOpenOption.CREATE,
                      StandardOpenOption.APPEND);
                  written.computeIfAbsent(codec, k -> new ArrayList<>()).add(line);
                }
              }
              for (var r : c.poll(Duration.ofMillis(300))) {
                LogRecord rec = WireJson.readLogRecord(r.value());
                for (String k : CODECS) {
                  // its lines, not the quiet markers that follow them
                  if (rec.kind() == RecordKind.LOG && rec.source().equals(logs.get(k).toString())) {
                    got.computeIfAbsent(k, x -> new ArrayList<>()).add(rec);
                  }
                }
              }
              for (Process p : agents) {
                assertTrue(p.isAlive(), "an agent exited: " + outputs());
              }
              return CODECS.stream()
                  .map(
                      k ->
                          k
                              + ": wrote "
                              + written.get(k).size()
                              + ", got "
                              + got.getOrDefault(k, List.of()).size()
                              + (attributed(got.get(k), written.get(k))
                                  ? " attributed"
                                  : got.containsKey(k)
                                      ? " " + debug(got.get(k), written.get(k))
                                      : ""))
                  .toList();
            },
            state -> state.stream().allMatch(l -> l.endsWith(" attributed")),
            Duration.ofSeconds(120));
      }
      for (int i = 0; i < CODECS.size(); i++) {
        String codec = CODECS.get(i);
        List<LogRecord> recs = got.get(codec);
        assertEquals(
            written.get(codec),
            recs.stream().map(LogRecord::text).distinct().toList(),
            codec + ": every line, in order");
        LogRecord last = recs.get(recs.size() - 1);
        assertEquals(gpu(i), last.gpuUuid(), codec + ": the GPU the kubelet gave the pod");
        assertEquals("training/trainer-" + codec, last.attribution().get("k8s_pod"));
        String out = Files.readString(dir.resolve(codec).resolve("agent.out"));
        assertTrue(!out.contains("Exception") && !out.contains("Error"), codec + ": " + out);
      }
      assertTrue(lists.get() >= CODECS.size(), "each agent asked the kubelet: " + lists.get());
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "\n" + outputs(), e);
    } finally {
      for (Process p : agents) {
        p.destroy();
      }
      for (Process p : agents) {
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      }
      kubelet.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
      worker.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
  }

  private static String debug(List<LogRecord> got, List<String> written) {
    List<String> missing = new ArrayList<>(written);
    missing.removeAll(got.stream().map(LogRecord::text).toList());
    LogRecord last = got.get(got.size() - 1);
    return "missing "
        + missing.stream().limit(3).toList()
        + " last ["
        + last.text()
        + "] "
        + last.kind()
        + " "
        + last.gpuUuid()
        + " "
        + last.attribution();
  }

  /** What the agents printed, for a failure's message. */
  private String outputs() {
    StringBuilder b = new StringBuilder();
    for (String codec : CODECS) {
      Path out = dir.resolve(codec).resolve("agent.out");
      try {
        b.append("--- agent ").append(codec).append(":\n").append(Files.readString(out));
      } catch (java.io.IOException e) {
        b.append("--- agent ").append(codec).append(": ").append(e).append('\n');
      }
    }
    return b.toString();
  }

  /** Every line written arrived, and the last one carries its pod's GPU. */
  private static boolean attributed(List<LogRecord> got, List<String> written) {
    return got != null
        && written != null
        && got.stream().map(LogRecord::text).toList().containsAll(written)
        && got.get(got.size() - 1).gpuUuid() != null;
  }

  private Process start(Path home, String bootstrap, String codec, Path pods, Path sock)
      throws Exception {
    Path kmsg = Files.writeString(home.resolve("kmsg"), "");
    Path proc = home.resolve("proc");
    KernelLogRebootIT.boot(proc, "11111111-2222-3333-4444-555555555555", 1_763_800_000L);
    Path config =
        Files.writeString(
            home.resolve("agent.yaml"),
            String.join(
                "\n",
                "kafka:",
                "  bootstrap_servers: " + bootstrap,
                "  properties: {compression.type: " + codec + "}",
                "host: node-" + codec,
                "files: ['" + pods + "/*/*/*.log']",
                "state_dir: " + home.resolve("state"),
                "kernel_log: " + kmsg,
                "proc_dir: " + proc,
                "nvidia_smi: " + home.resolve("no-nvidia-smi"),
                "gpu_sample_interval_ms: 0",
                "http_port: -1",
                "run_spool_root: " + home.resolve("spools"),
                "slurm: {enabled: false}",
                "kubernetes: {pod_resources_socket: " + sock + "}",
                ""));
    ProcessBuilder pb =
        new ProcessBuilder(LAUNCHER.toString(), "agent", "--config", config.toString())
            .redirectErrorStream(true)
            .redirectOutput(home.resolve("agent.out").toFile());
    pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
    pb.environment().remove("JAVA_OPTS");
    return pb.start();
  }

  private static KafkaConsumer<byte[], byte[]> consumer(String bootstrap) {
    return new KafkaConsumer<>(
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap,
            ConsumerConfig.GROUP_ID_CONFIG,
            "shaded-agent-it",
            ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
            "earliest"),
        new ByteArrayDeserializer(),
        new ByteArrayDeserializer());
  }
}
