package dev.cudawatch.ingest.attribution;

import dev.cudawatch.common.k8s.PodLogPath;
import dev.cudawatch.ingest.kubelet.v1.ContainerDevices;
import dev.cudawatch.ingest.kubelet.v1.ContainerResources;
import dev.cudawatch.ingest.kubelet.v1.ListPodResourcesRequest;
import dev.cudawatch.ingest.kubelet.v1.ListPodResourcesResponse;
import dev.cudawatch.ingest.kubelet.v1.PodResources;
import dev.cudawatch.ingest.kubelet.v1.PodResourcesListerGrpc;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The kubelet's PodResources API ({@code /var/lib/kubelet/pod-resources/kubelet.sock}), called the
 * way dcgm-exporter does to attribute GPUs to pods: {@code List}, then each container's devices of
 * the NVIDIA resources ({@code nvidia.com/gpu}, and {@code nvidia.com/mig-*} under the mixed MIG
 * strategy). Device ids are GPU or MIG UUIDs; a time-sliced replica's {@code GPU-...::N} is its
 * GPU. Every call has a deadline and the answer is bounded (4 MiB, {@code maxContainers}
 * containers).
 */
public final class PodResourcesClient implements AutoCloseable, KubernetesAttribution.Lister {
  public static final String DEFAULT_SOCKET = "/var/lib/kubelet/pod-resources/kubelet.sock";
  private static final int MAX_MESSAGE_BYTES = 4 << 20;

  private final Path socket;
  private final Duration timeout;
  private final int maxContainers;
  private final EventLoopGroup loop;
  private final ManagedChannel channel;

  /** Opens a channel on {@code socket}; nothing is sent until {@link #gpusByContainer()}. */
  public PodResourcesClient(Path socket, Duration timeout, int maxContainers) throws IOException {
    if (!Epoll.isAvailable()) {
      throw new IOException(
          "no unix socket support (netty epoll): " + Epoll.unavailabilityCause().getMessage());
    }
    this.socket = socket;
    this.timeout = timeout;
    this.maxContainers = maxContainers;
    this.loop =
        new MultiThreadIoEventLoopGroup(
            1, new DefaultThreadFactory("pod-resources", true), EpollIoHandler.newFactory());
    this.channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .eventLoopGroup(loop)
            .channelType(EpollDomainSocketChannel.class)
            .usePlaintext()
            .maxInboundMessageSize(MAX_MESSAGE_BYTES)
            .build();
  }

  /** Whether a resource name is an NVIDIA GPU or MIG resource. */
  static boolean nvidia(String resourceName) {
    return resourceName.equals("nvidia.com/gpu") || resourceName.startsWith("nvidia.com/mig-");
  }

  /**
   * {@code namespace/pod/container} to the GPU (or MIG) UUIDs the kubelet gave it, for containers
   * holding any; a one-line {@link IOException} when the kubelet cannot be asked.
   */
  @Override
  public Map<String, List<String>> gpusByContainer() throws IOException {
    ListPodResourcesResponse r;
    try {
      r =
          PodResourcesListerGrpc.newBlockingStub(channel)
              .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
              .list(ListPodResourcesRequest.getDefaultInstance());
    } catch (StatusRuntimeException e) {
      throw new IOException(
          "kubelet pod-resources at "
              + socket
              + ": "
              + e.getStatus().getCode()
              + (e.getStatus().getDescription() != null
                  ? " (" + e.getStatus().getDescription() + ")"
                  : ""));
    }
    return gpus(r, maxContainers);
  }

  /** The NVIDIA devices per container of one answer, at most {@code max} containers. */
  static Map<String, List<String>> gpus(ListPodResourcesResponse r, int max) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (PodResources p : r.getPodResourcesList()) {
      for (ContainerResources c : p.getContainersList()) {
        List<String> ids = new ArrayList<>();
        for (ContainerDevices d : c.getDevicesList()) {
          if (!nvidia(d.getResourceName())) {
            continue;
          }
          for (String id : d.getDeviceIdsList()) {
            int replica = id.indexOf("::");
            String dev = replica < 0 ? id : id.substring(0, replica);
            if (!ids.contains(dev)) {
              ids.add(dev);
            }
          }
        }
        if (!ids.isEmpty() && out.size() < max) {
          out.put(PodLogPath.key(p.getNamespace(), p.getName(), c.getName()), List.copyOf(ids));
        }
      }
    }
    return out;
  }

  public Path socket() {
    return socket;
  }

  @Override
  public void close() {
    channel.shutdownNow();
    try {
      channel.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
