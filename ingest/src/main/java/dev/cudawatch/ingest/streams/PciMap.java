package dev.cudawatch.ingest.streams;

import dev.cudawatch.common.gpu.NvidiaSmiCsv;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** PCI address (the kernel log's form) to GPU index, from {@code nvidia-smi}. */
public final class PciMap {
  private PciMap() {}

  /** The map, or an empty one when nvidia-smi is absent or fails. */
  public static Map<String, Integer> query(String nvidiaSmi) {
    Map<String, Integer> out = new HashMap<>();
    try {
      Process p =
          new ProcessBuilder(nvidiaSmi, "--query-gpu=index,pci.bus_id", "--format=csv,noheader")
              .redirectErrorStream(true)
              .start();
      String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
        return out;
      }
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
    } catch (IOException e) {
      // no nvidia-smi: no mapping
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return out;
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
