package dev.cudawatch.ingest.streams;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads {@code /dev/kmsg} (one kernel record per read) and keeps the lines that matter to GPU jobs:
 * NVRM messages (Xid), and the OOM killer. PCI addresses are mapped to GPU indices.
 */
public final class KernelLogSource implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(KernelLogSource.class);
  private static final Pattern RELEVANT =
      Pattern.compile("NVRM|Xid|Out of memory|oom-kill|Killed process|fallen off the bus");

  private final Path device;
  private final String host;
  private final Map<String, Integer> pciToGpu;
  private final Consumer<LogRecord> out;
  private final Clock clock;
  private volatile boolean running = true;

  public KernelLogSource(
      Path device,
      String host,
      Map<String, Integer> pciToGpu,
      Consumer<LogRecord> out,
      Clock clock) {
    this.device = device;
    this.host = host;
    this.pciToGpu = pciToGpu;
    this.out = out;
    this.clock = clock;
  }

  /** Whether a kernel message is worth shipping. */
  public static boolean relevant(String message) {
    return RELEVANT.matcher(message).find();
  }

  /** The message of a {@code /dev/kmsg} record {@code "pri,seq,usec,flags;message"}. */
  static String message(String kmsgRecord) {
    int semi = kmsgRecord.indexOf(';');
    return semi < 0 ? kmsgRecord : kmsgRecord.substring(semi + 1);
  }

  static long sequence(String kmsgRecord) {
    String[] f = kmsgRecord.split(",", 3);
    try {
      return f.length > 1 ? Long.parseLong(f[1]) : 0;
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  @Override
  public void run() {
    byte[] buf = new byte[8192];
    try (InputStream in = Files.newInputStream(device)) {
      while (running) {
        int n;
        try {
          n = in.read(buf); // /dev/kmsg returns one record per read
        } catch (IOException e) {
          if (String.valueOf(e.getMessage()).contains("Broken pipe")) {
            continue; // records were overwritten before we read them (EPIPE): go on
          }
          throw e;
        }
        if (n <= 0) {
          return;
        }
        String rec = new String(buf, 0, n, StandardCharsets.UTF_8).strip();
        String msg = message(rec);
        if (!relevant(msg)) {
          continue;
        }
        out.accept(
            LogRecord.builder().host(host).kind(RecordKind.KERNEL).stream("kmsg")
                .source(device.toString())
                .sourceId("boot")
                .offset(sequence(rec))
                .gpu(PciMap.gpuOf(msg, pciToGpu))
                .eventTime(clock.instant())
                .text(msg)
                .build());
      }
    } catch (IOException e) {
      LOG.warn("kernel log {} unavailable: {} (needs root or CAP_SYSLOG)", device, e.getMessage());
    }
  }

  public void stop() {
    running = false;
  }
}
