package dev.cudawatch.ingest.attribution;

import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import dev.cudawatch.ingest.proc.ExternalCommand;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The node's physical GPUs as nvidia-smi numbers them: index, UUID, PCI address and their MIG
 * instances. From {@code nvidia-smi --query-gpu=index,uuid,pci.bus_id --format=csv} and {@code
 * nvidia-smi -L}.
 */
public final class GpuInventory {
  /** One physical GPU. {@code pci} is in the kernel log's form ({@code 0000:00:06}). */
  public record Gpu(int index, String uuid, String pci, List<String> migUuids) {}

  private final List<Gpu> gpus;

  public GpuInventory(List<Gpu> gpus) {
    this.gpus = List.copyOf(gpus);
  }

  public static GpuInventory empty() {
    return new GpuInventory(List.of());
  }

  public List<Gpu> gpus() {
    return gpus;
  }

  public boolean isEmpty() {
    return gpus.isEmpty();
  }

  /** Parses {@code --query-gpu=index,uuid,pci.bus_id[,...]} CSV, with or without its header. */
  public static GpuInventory parseQuery(String csv) {
    List<Gpu> out = new ArrayList<>();
    for (String line : csv.split("\n")) {
      String[] f = line.split(",");
      if (f.length < 3) {
        continue;
      }
      try {
        int index = Integer.parseInt(f[0].strip());
        out.add(new Gpu(index, f[1].strip(), NvidiaSmiCsv.kernelPci(f[2]), List.of()));
      } catch (NumberFormatException e) {
        // the header or a line that is not a row
      }
    }
    return new GpuInventory(out);
  }

  /** This inventory with the MIG instances that {@code nvidia-smi -L} lists under each GPU. */
  public GpuInventory withMig(String listing) {
    List<Gpu> out = new ArrayList<>();
    String currentUuid = null;
    java.util.Map<String, List<String>> migs = new java.util.HashMap<>();
    for (String line : listing.split("\n")) {
      String uuid = uuidIn(line);
      if (uuid == null) {
        continue;
      }
      if (line.startsWith("GPU ")) {
        currentUuid = uuid;
      } else if (line.strip().startsWith("MIG") && currentUuid != null) {
        migs.computeIfAbsent(currentUuid, k -> new ArrayList<>()).add(uuid);
      }
    }
    for (Gpu g : gpus) {
      out.add(new Gpu(g.index(), g.uuid(), g.pci(), migs.getOrDefault(g.uuid(), List.of())));
    }
    return new GpuInventory(out);
  }

  private static String uuidIn(String line) {
    int i = line.indexOf("(UUID: ");
    int end = i < 0 ? -1 : line.indexOf(')', i);
    return end < 0 ? null : line.substring(i + 7, end).strip();
  }

  /** The GPU with this index, or null. */
  public Gpu byIndex(int index) {
    for (Gpu g : gpus) {
      if (g.index() == index) {
        return g;
      }
    }
    return null;
  }

  /**
   * The GPU a UUID names: a GPU's ({@code GPU-...}, or a unique prefix as CUDA accepts it) or one
   * of its MIG instances' ({@code MIG-...}, or the older {@code MIG-GPU-<uuid>/gi/ci}); null if
   * none.
   */
  public Gpu byUuid(String id) {
    String u = id.strip().toLowerCase(Locale.ROOT);
    if (u.startsWith("mig-gpu-")) {
      u = u.substring(4, u.contains("/") ? u.indexOf('/') : u.length());
    }
    Gpu found = null;
    for (Gpu g : gpus) {
      boolean hit = g.uuid().toLowerCase(Locale.ROOT).startsWith(u);
      for (String m : g.migUuids()) {
        hit |= m.equalsIgnoreCase(u);
      }
      if (hit) {
        if (found != null) {
          return null; // an ambiguous prefix names no GPU
        }
        found = g;
      }
    }
    return found;
  }

  /** The GPU at a kernel-form PCI address, or null. */
  public Gpu byPci(String kernelPci) {
    for (Gpu g : gpus) {
      if (g.pci().equalsIgnoreCase(kernelPci)) {
        return g;
      }
    }
    return null;
  }

  /** Asks nvidia-smi; an empty inventory when it is absent, fails or takes over 10 s. */
  public static GpuInventory query(String nvidiaSmi) {
    String csv = run(nvidiaSmi, "--query-gpu=index,uuid,pci.bus_id", "--format=csv,noheader");
    if (csv == null) {
      return empty();
    }
    GpuInventory inv = parseQuery(csv);
    String listing = run(nvidiaSmi, "-L");
    return listing == null ? inv : inv.withMig(listing);
  }

  private static String run(String... cmd) {
    // read while waiting and killed at the deadline: a wedged GPU makes nvidia-smi hang
    return ExternalCommand.output(Duration.ofSeconds(10), cmd);
  }
}
