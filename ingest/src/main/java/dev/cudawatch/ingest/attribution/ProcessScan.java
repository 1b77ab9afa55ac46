package dev.cudawatch.ingest.attribution;

import dev.cudawatch.ingest.proc.ExternalCommand;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Attribution from the process that writes a log file: find which process has the file open ({@code
 * /proc/<pid>/fd}), then its GPUs from its own open device files ({@code /dev/nvidiaN}, where N is
 * the minor number that {@code nvidia-smi -q} lists per GPU) and its environment ({@code
 * CUDA_VISIBLE_DEVICES}, {@code NVIDIA_VISIBLE_DEVICES}, rank variables). Works where {@code
 * nvidia-smi --query-compute-apps} lists nothing (a container's own PID namespace).
 */
public final class ProcessScan {
  private static final Duration NVIDIA_SMI_TIMEOUT = Duration.ofSeconds(10);

  /** What the scan found: the writer's pid, GPUs it has open, and its environment's attribution. */
  public record Found(long pid, List<Integer> openGpus, RunAttribution fromEnvironment) {}

  private final Path proc;
  private final Supplier<GpuInventory> inventory;
  private final Supplier<String> nvidiaSmiQ;
  private boolean asked;
  private String q;
  private GpuInventory minorsOf;
  private Map<Integer, Integer> minorToIndex = Map.of();

  /**
   * @param proc the proc file system ({@code /proc}, or a fixture)
   * @param inventory the node's GPUs
   * @param nvidiaSmiQ the text of {@code nvidia-smi -q} (for minor numbers), or null
   */
  public ProcessScan(Path proc, GpuInventory inventory, String nvidiaSmiQ) {
    this(proc, () -> inventory, () -> nvidiaSmiQ);
  }

  /**
   * Asks for the inventory at each scan and for {@code nvidia-smi -q} at the first: both may be
   * slow (a wedged GPU), so they are asked where the scan runs, off the agent's read thread.
   */
  private ProcessScan(Path proc, Supplier<GpuInventory> inventory, Supplier<String> nvidiaSmiQ) {
    this.proc = proc;
    this.inventory = inventory;
    this.nvidiaSmiQ = nvidiaSmiQ;
  }

  /** Minor number to GPU index for this scan (nvidia-smi -q asked once, mapped per inventory). */
  private synchronized Map<Integer, Integer> minorToIndex(GpuInventory inv) {
    if (!asked) {
      asked = true;
      q = nvidiaSmiQ.get();
    }
    if (q != null && inv != minorsOf) {
      minorsOf = inv;
      minorToIndex = minors(q, inv);
    }
    return minorToIndex;
  }

  /** {@code nvidia-smi -q}'s minor number per GPU, as minor to index (through the PCI address). */
  static Map<Integer, Integer> minors(String q, GpuInventory inventory) {
    Map<Integer, Integer> out = new HashMap<>();
    String pci = null;
    for (String line : q.split("\n")) {
      if (line.startsWith("GPU ")) {
        pci = dev.cudawatch.common.gpu.NvidiaSmiCsv.kernelPci(line.substring(4));
      } else if (line.strip().startsWith("Minor Number") && pci != null) {
        try {
          int minor = Integer.parseInt(line.substring(line.indexOf(':') + 1).strip());
          GpuInventory.Gpu g = inventory.byPci(pci);
          out.put(minor, g != null ? g.index() : minor);
        } catch (NumberFormatException e) {
          // "N/A" on some platforms: no mapping for that GPU
        }
      }
    }
    return out;
  }

  /**
   * One pass over every process: each open file under {@code under} (e.g. the watched log
   * directories' common root, or "/" for all) mapped to what its first process tells. One pass
   * serves every followed file, so the cost does not grow with the number of files.
   */
  public Map<String, Found> openFiles(java.util.function.Predicate<String> wanted) {
    Map<String, Found> out = new HashMap<>();
    GpuInventory inv = inventory.get();
    Map<Integer, Integer> minors = minorToIndex(inv);
    try (DirectoryStream<Path> pids = Files.newDirectoryStream(proc, p -> isPid(p))) {
      for (Path pidDir : pids) {
        List<String> links = links(pidDir.resolve("fd"));
        List<String> files = links.stream().filter(wanted).toList();
        if (files.isEmpty()) {
          continue;
        }
        Found f = found(pidDir, links, inv, minors);
        for (String file : files) {
          out.putIfAbsent(file, f);
        }
      }
    } catch (IOException e) {
      return out; // no /proc here
    }
    return out;
  }

  private static Found found(
      Path pidDir, List<String> links, GpuInventory inv, Map<Integer, Integer> minors) {
    TreeSet<Integer> gpus = new TreeSet<>();
    for (String l : links) {
      Integer minor = nvidiaMinor(l);
      if (minor != null) {
        gpus.add(minors.getOrDefault(minor, minor));
      }
    }
    return new Found(
        Long.parseLong(pidDir.getFileName().toString()),
        List.copyOf(gpus),
        RunAttribution.of(environ(pidDir.resolve("environ")), null, null, inv));
  }

  /** The processes that have {@code file} open for writing or reading, with what they tell. */
  public List<Found> writersOf(Path file) {
    List<Found> out = new ArrayList<>();
    GpuInventory inv = inventory.get();
    Map<Integer, Integer> minors = minorToIndex(inv);
    Path target = file.toAbsolutePath().normalize();
    try (DirectoryStream<Path> pids = Files.newDirectoryStream(proc, p -> isPid(p))) {
      for (Path pidDir : pids) {
        List<String> links = links(pidDir.resolve("fd"));
        if (!links.contains(target.toString())) {
          continue;
        }
        out.add(found(pidDir, links, inv, minors));
      }
    } catch (IOException e) {
      return out; // no /proc here: nothing found
    }
    return out;
  }

  private static final String SELF = String.valueOf(ProcessHandle.current().pid());

  /** A process directory, not this agent's own (it has every followed file open). */
  private static boolean isPid(Path p) {
    String n = p.getFileName().toString();
    return !n.isEmpty() && n.chars().allMatch(Character::isDigit) && !n.equals(SELF);
  }

  /** {@code /dev/nvidia3} is minor 3; {@code nvidiactl}, {@code nvidia-uvm} are not GPUs. */
  static Integer nvidiaMinor(String link) {
    if (!link.startsWith("/dev/nvidia")) {
      return null;
    }
    String rest = link.substring("/dev/nvidia".length());
    return !rest.isEmpty() && rest.chars().allMatch(Character::isDigit)
        ? Integer.valueOf(rest)
        : null;
  }

  /**
   * The targets of a process's descriptors: device files, and regular files it opened for writing
   * ({@code fdinfo}'s flags), so a reader such as {@code tail -f} or this agent is no writer.
   */
  private static List<String> links(Path fdDir) {
    List<String> out = new ArrayList<>();
    try (DirectoryStream<Path> fds = Files.newDirectoryStream(fdDir)) {
      for (Path fd : fds) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith("/dev/") || writable(fdDir.resolveSibling("fdinfo"), fd)) {
            out.add(target);
          }
        } catch (IOException | UnsupportedOperationException e) {
          // closed meanwhile, or not ours to read
        }
      }
    } catch (IOException e) {
      // another user's process: its fds are not readable without privileges
    }
    return out;
  }

  /** {@code flags:} in octal; O_WRONLY is 1 and O_RDWR 2. Unknown flags count as writable. */
  static boolean writable(Path fdinfoDir, Path fd) {
    Path info = fdinfoDir.resolve(fd.getFileName().toString());
    try {
      for (String line : Files.readAllLines(info)) {
        if (line.startsWith("flags:")) {
          return (Long.parseLong(line.substring(6).strip(), 8) & 3) != 0;
        }
      }
    } catch (IOException | NumberFormatException e) {
      return true; // no fdinfo (a fixture, an old kernel): keep it
    }
    return true;
  }

  /**
   * The node's /proc with {@code inventory} and nvidia-smi's minor numbers, asked at the first scan
   * with a deadline (without nvidia-smi, or past it, device minors map to themselves).
   */
  public static ProcessScan forNode(String nvidiaSmi, Supplier<GpuInventory> inventory) {
    return forNode(nvidiaSmi, inventory, NVIDIA_SMI_TIMEOUT);
  }

  static ProcessScan forNode(String nvidiaSmi, Supplier<GpuInventory> inventory, Duration timeout) {
    return new ProcessScan(
        Path.of("/proc"), inventory, () -> ExternalCommand.output(timeout, nvidiaSmi, "-q"));
  }

  /** {@code /proc/<pid>/environ}: NUL-separated {@code KEY=VALUE}. */
  static Map<String, String> environ(Path file) {
    Map<String, String> env = new LinkedHashMap<>();
    try {
      for (String kv : new String(Files.readAllBytes(file), StandardCharsets.UTF_8).split("\0")) {
        int eq = kv.indexOf('=');
        if (eq > 0) {
          env.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
      }
    } catch (IOException e) {
      // not readable: no environment
    }
    return env;
  }
}
