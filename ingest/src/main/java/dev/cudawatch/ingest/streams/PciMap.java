package dev.cudawatch.ingest.streams;

import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.ingest.proc.ExternalCommand;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * PCI address (the kernel log's form) to GPU index, from {@code nvidia-smi}. The agent asks once,
 * off its start path ({@link #ask}): until the answer arrives, and for good if nvidia-smi hangs,
 * the map is empty and a kernel line ships without a GPU index; its text still names the PCI
 * address. A hung call is not tried again: every try would leave a process the kernel may not let
 * die.
 */
public final class PciMap {
  /** How long nvidia-smi may take to list the GPUs. */
  public static final Duration DEADLINE = Duration.ofSeconds(10);

  private volatile Map<String, Integer> map = Map.of();
  private final CountDownLatch answered = new CountDownLatch(1);

  private PciMap() {}

  /** Asks nvidia-smi on a daemon thread; the map is empty until it answers. */
  public static PciMap ask(String nvidiaSmi, NvidiaSmiHealth health) {
    PciMap m = new PciMap();
    Thread t =
        new Thread(
            () -> {
              ExternalCommand.Result r = ExternalCommand.run(command(nvidiaSmi), DEADLINE);
              if (r.outcome() == ExternalCommand.Outcome.TIMED_OUT) {
                health.timedOut();
              } else if (r.outcome() == ExternalCommand.Outcome.EXITED) {
                health.answered();
              }
              m.map = r.ok() ? parse(r.output()) : Map.of();
              m.answered.countDown();
            },
            "cudawatch-pci-map");
    t.setDaemon(true);
    t.start();
    return m;
  }

  /** The map now: empty until nvidia-smi answered, or when it failed. */
  public Map<String, Integer> current() {
    return map;
  }

  /** Waits up to {@code timeout} for nvidia-smi's answer; true once it came (or failed). */
  public boolean await(Duration timeout) {
    try {
      return answered.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The map, or an empty one when nvidia-smi is absent, fails or takes over {@link #DEADLINE}. */
  public static Map<String, Integer> query(String nvidiaSmi) {
    ExternalCommand.Result r = ExternalCommand.run(command(nvidiaSmi), DEADLINE);
    return r.ok() ? parse(r.output()) : Map.of();
  }

  private static List<String> command(String nvidiaSmi) {
    return List.of(nvidiaSmi, "--query-gpu=index,pci.bus_id", "--format=csv,noheader");
  }

  static Map<String, Integer> parse(String text) {
    Map<String, Integer> out = new HashMap<>();
    for (String line : text.split("\n")) {
      String[] f = line.split(",");
      if (f.length == 2) {
        try {
          out.put(NvidiaSmiCsv.kernelPci(f[1]), Integer.parseInt(f[0].strip()));
        } catch (NumberFormatException e) {
          // a line that is not a row
        }
      }
    }
    return Map.copyOf(out);
  }

  /** The GPU index an NVRM line's PCI address names, or null. */
  public static Integer gpuOf(String line, Map<String, Integer> map) {
    int i = line.indexOf("PCI:");
    if (i < 0 || map.isEmpty()) {
      return null;
    }
    int end = line.indexOf(')', i);
    if (end < 0) {
      end = Math.min(line.length(), i + 16);
    }
    return map.get(NvidiaSmiCsv.kernelPci(line.substring(i + 4, end)));
  }
}
