package dev.cudawatch.ingest.streams;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

/**
 * Which boot of the node this is, and when it started: kmsg sequence numbers and timestamps count
 * from each boot, so a kernel record is named by (boot id, sequence) and dated from the boot time.
 *
 * @param bootId {@code /proc/sys/kernel/random/boot_id}, new at every boot
 * @param bootTime {@code btime} of {@code /proc/stat}, or null when unknown
 */
public record BootInfo(String bootId, Instant bootTime) {

  /** Reads both from a proc file system mounted at {@code procDir} ({@code /proc} on a node). */
  public static BootInfo read(Path procDir) throws IOException {
    String id = Files.readString(procDir.resolve("sys/kernel/random/boot_id")).strip();
    if (id.isEmpty()) {
      throw new IOException("empty boot id in " + procDir);
    }
    Instant btime = null;
    Path stat = procDir.resolve("stat");
    if (Files.isReadable(stat)) {
      for (String line : Files.readAllLines(stat)) {
        if (line.startsWith("btime ")) {
          try {
            btime = Instant.ofEpochSecond(Long.parseLong(line.substring(6).strip()));
          } catch (NumberFormatException e) {
            // unknown boot time: records fall back to the agent's clock
          }
        }
      }
    }
    return new BootInfo(id, btime);
  }
}
