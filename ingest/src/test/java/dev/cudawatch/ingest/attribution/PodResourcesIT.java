package dev.cudawatch.ingest.attribution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.ingest.kubelet.v1.ContainerDevices;
import dev.cudawatch.ingest.kubelet.v1.ContainerResources;
import dev.cudawatch.ingest.kubelet.v1.ListPodResourcesRequest;
import dev.cudawatch.ingest.kubelet.v1.ListPodResourcesResponse;
import dev.cudawatch.ingest.kubelet.v1.NUMANode;
import dev.cudawatch.ingest.kubelet.v1.PodResources;
import dev.cudawatch.ingest.kubelet.v1.PodResourcesListerGrpc;
import dev.cudawatch.ingest.kubelet.v1.TopologyInfo;
import dev.cudawatch.testkit.StepClock;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client against a real gRPC server on a real unix socket, serving the kubelet's generated
 * PodResourcesLister with what a GPU node's kubelet lists: a training pod holding one GPU through
 * the NVIDIA device plugin (device ids are GPU UUIDs), a pod on a MIG instance (mixed strategy), a
 * time-sliced replica ({@code GPU-...::N}), and devices of other plugins.
 */
class PodResourcesIT {
  @TempDir Path dir;
  private final EventLoopGroup boss =
      new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
  private final EventLoopGroup worker =
      new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
  private Server server;
  private final CountDownLatch release = new CountDownLatch(1);

  static final String H100 = "GPU-a8aa2883-b011-67b6-4887-1b76e067f837";
  static final String OTHER = "GPU-5b1c93b2-2f0e-4f8e-9d3a-0c1d2e3f4a5b";
  static final String MIG = "MIG-0d2c5f7e-6c3b-5a1d-8e9f-1a2b3c4d5e6f";

  static final GpuInventory NODE =
      GpuInventory.parseQuery(
              "0, " + H100 + ", 00000000:00:06.0\n" + "1, " + OTHER + ", 00000000:00:07.0\n")
          .withMig(
              "GPU 0: NVIDIA H100 80GB HBM3 (UUID: "
                  + H100
                  + ")\n"
                  + "GPU 1: NVIDIA H100 80GB HBM3 (UUID: "
                  + OTHER
                  + ")\n"
                  + "  MIG 1g.10gb     Device  0: (UUID: "
                  + MIG
                  + ")\n");

  static ListPodResourcesResponse node() {
    TopologyInfo numa0 = TopologyInfo.newBuilder().addNodes(NUMANode.newBuilder().setID(0)).build();
    return ListPodResourcesResponse.newBuilder()
        .addPodResources(
            PodResources.newBuilder()
                .setNamespace("training")
                .setName("llm-worker-3")
                .addContainers(
                    ContainerResources.newBuilder()
                        .setName("trainer")
                        .addDevices(
                            ContainerDevices.newBuilder()
                                .setResourceName("nvidia.com/gpu")
                                .addDeviceIds(H100)
                                .setTopology(numa0))
                        .addDevices(
                            ContainerDevices.newBuilder()
                                .setResourceName("rdma/hca_shared_devices_a")
                                .addDeviceIds("1")))
                .addContainers(ContainerResources.newBuilder().setName("log-sidecar")))
        .addPodResources(
            PodResources.newBuilder()
                .setNamespace("inference")
                .setName("svc-0")
                .addContainers(
                    ContainerResources.newBuilder()
                        .setName("server")
                        .addDevices(
                            ContainerDevices.newBuilder()
                                .setResourceName("nvidia.com/mig-1g.10gb")
                                .addDeviceIds(MIG))))
        .addPodResources(
            PodResources.newBuilder()
                .setNamespace("shared")
                .setName("notebook-0")
                .addContainers(
                    ContainerResources.newBuilder()
                        .setName("jupyter")
                        .addDevices(
                            ContainerDevices.newBuilder()
                                .setResourceName("nvidia.com/gpu")
                                .addDeviceIds(OTHER + "::3"))))
        .addPodResources(
            PodResources.newBuilder()
                .setNamespace("training")
                .setName("ddp-0")
                .addContainers(
                    ContainerResources.newBuilder()
                        .setName("trainer")
                        .addDevices(
                            ContainerDevices.newBuilder()
                                .setResourceName("nvidia.com/gpu")
                                .addDeviceIds(H100)
                                .addDeviceIds(OTHER))))
        .build();
  }

  private Path serve(boolean answer, AtomicInteger calls) throws IOException {
    Path sock = dir.resolve("kubelet.sock");
    server =
        NettyServerBuilder.forAddress(new DomainSocketAddress(sock.toString()))
            .channelType(EpollServerDomainSocketChannel.class)
            .bossEventLoopGroup(boss)
            .workerEventLoopGroup(worker)
            .addService(
                new PodResourcesListerGrpc.PodResourcesListerImplBase() {
                  @Override
                  public void list(
                      ListPodResourcesRequest req, StreamObserver<ListPodResourcesResponse> out) {
                    calls.incrementAndGet();
                    if (!answer) {
                      return; // a kubelet that hangs: the client's deadline must end the call
                    }
                    out.onNext(node());
                    out.onCompleted();
                  }
                })
            .build()
            .start();
    return sock;
  }

  @AfterEach
  void stop() throws Exception {
    release.countDown();
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    worker.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
  }

  @Test
  void listsTheGpusOfEachContainerOverTheUnixSocket() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    Path sock = serve(true, calls);
    try (PodResourcesClient c = new PodResourcesClient(sock, Duration.ofSeconds(5), 100)) {
      Map<String, List<String>> gpus = c.gpusByContainer();
      assertEquals(List.of(H100), gpus.get("training/llm-worker-3/trainer"));
      assertEquals(List.of(MIG), gpus.get("inference/svc-0/server"));
      assertEquals(List.of(OTHER), gpus.get("shared/notebook-0/jupyter"), "a replica is its GPU");
      assertEquals(List.of(H100, OTHER), gpus.get("training/ddp-0/trainer"));
      assertNull(gpus.get("training/llm-worker-3/log-sidecar"), "no GPU, not listed");
      assertEquals(4, gpus.size());
      assertEquals(1, PodResourcesClient.gpus(node(), 1).size(), "bounded");

      StepClock clock = new StepClock(Instant.parse("2026-11-22T19:00:00Z"));
      KubernetesAttribution k =
          new KubernetesAttribution(
              c, () -> NODE, clock, 30_000, 2_000, Lookups.inline(new Changes()));
      FileAttribution.Of a =
          k.of(
              "/var/log/pods/training_llm-worker-3_3f6b2a1c-8d4e-4b7a-9c2d-1e0f5a6b7c8d/trainer/0.log");
      assertEquals(0, a.gpu());
      assertEquals(H100, a.gpuUuid());
      assertNull(a.job(), "a pod is one rank: the job comes from elsewhere");
      assertEquals("training/llm-worker-3", a.attribution().get("k8s_pod"));
      assertEquals(
          "kubernetes pod-resources (training/llm-worker-3) + nvidia-smi",
          a.attribution().get("gpu"));
      FileAttribution.Of mig =
          k.of(
              "/var/log/containers/svc-0_inference_server-"
                  + "4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c.log");
      assertEquals(1, mig.gpu(), "the MIG instance's GPU");
      assertEquals(MIG, mig.gpuUuid());
      FileAttribution.Of two =
          k.of("/var/log/pods/training_ddp-0_0a1b2c3d-0000-4000-8000-000000000000/trainer/1.log");
      assertNull(two.gpu());
      assertEquals("0,1", two.attribution().get("visible_gpus"));
      assertEquals(
          2, calls.get(), "one List (after the direct one) serves every file until the TTL");
      k.of("/var/log/pods/training_new-0_0a1b2c3d-0000-4000-8000-000000000001/trainer/0.log");
      assertEquals(2, calls.get(), "an unknown container asks again only after min refresh");
      clock.advance(Duration.ofSeconds(3));
      FileAttribution.Of fresh =
          k.of("/var/log/pods/training_new-0_0a1b2c3d-0000-4000-8000-000000000001/trainer/0.log");
      assertEquals(3, calls.get());
      assertNull(fresh.gpu());
      assertEquals("training/new-0", fresh.attribution().get("k8s_pod"));
      FileAttribution.Of plain = k.of("/home/alice/train.log");
      assertTrue(plain.attribution().get("tried").contains("not a pod log path"));
    }
  }

  @Test
  void aHungKubeletEndsAtTheDeadlineAndAMissingOneIsUnavailable() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    Path sock = serve(false, calls);
    try (PodResourcesClient c = new PodResourcesClient(sock, Duration.ofMillis(300), 100)) {
      IOException e = assertThrows(IOException.class, c::gpusByContainer);
      assertTrue(e.getMessage().contains("DEADLINE_EXCEEDED"), e.getMessage());
      StepClock clock = new StepClock(Instant.parse("2026-11-22T19:00:00Z"));
      FileAttribution.Of a =
          new KubernetesAttribution(
                  c, () -> NODE, clock, 30_000, 2_000, Lookups.inline(new Changes()))
              .of("/var/log/pods/a_b_c/d/0.log");
      assertNull(a.gpu());
      assertTrue(a.attribution().get("tried").contains("DEADLINE_EXCEEDED"), a.toString());
    }
    try (PodResourcesClient c =
        new PodResourcesClient(dir.resolve("absent.sock"), Duration.ofSeconds(2), 100)) {
      IOException e = assertThrows(IOException.class, c::gpusByContainer);
      assertTrue(e.getMessage().contains("UNAVAILABLE"), e.getMessage());
    }
  }
}
