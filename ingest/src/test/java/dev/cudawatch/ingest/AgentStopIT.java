package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.Topics;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGTERM to the agent process while the broker refuses connections, with lines of a file and of
 * the kernel log in flight (the file loop and the spool's forwarder both blocked sending): it is
 * gone within 5 s, prints at most a couple of lines doing so, and once the broker is back a new
 * agent ships every line (at least once: nothing was lost or checkpointed past).
 */
class AgentStopIT {
  private static final int FILE_LINES = 300;
  private static final int XIDS = 30;

  @RegisterExtension
  static final KafkaBrokerExtension BROKER = new KafkaBrokerExtension(Topics.ALL, 2);

  @TempDir Path dir;

  @Test
  void sigtermWithTheBrokerRefusingStopsWithinFiveSecondsAndLosesNothing() throws Exception {
    int bp = BROKER.broker().brokerPort();
    BROKER.stop(); // its topics made, its port now refuses connections
    Path logs = Files.createDirectories(dir.resolve("logs"));
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < FILE_LINES; i++) {
      b.append("train step ").append(i).append(" loss 0.5\n");
    }
    Files.writeString(logs.resolve("rank-0.log"), b);
    Path kmsg = dir.resolve("kmsg");
    StringBuilder k = new StringBuilder();
    for (int i = 0; i < XIDS; i++) {
      k.append("4,")
          .append(i)
          .append(",1000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=")
          .append(i)
          .append(", GPU has fallen off the bus.\n");
    }
    Files.writeString(kmsg, k);
    Path proc = dir.resolve("proc");
    KernelLogRebootIT.boot(proc, "11111111-2222-3333-4444-555555555555", 1_763_800_000L);
    Path config = dir.resolve("agent.yaml");
    Files.writeString(
        config,
        String.join(
            "\n",
            "kafka:",
            "  bootstrap_servers: 127.0.0.1:" + bp,
            "host: stop-test",
            "files: ['" + logs + "/*.log']",
            "state_dir: " + dir.resolve("state"),
            "kernel_log: " + kmsg,
            "proc_dir: " + proc,
            "nvidia_smi: " + dir.resolve("no-nvidia-smi"),
            "gpu_sample_interval_ms: 0",
            "http_port: -1",
            "run_spool_root: " + dir.resolve("spools"),
            "slurm:",
            "  enabled: false",
            ""));

    Path out = dir.resolve("agent.out");
    try (AgentProcess agent = AgentProcess.start(config, out)) {
      Await.until(
          "the agent started, its kernel records spooled (the forwarder sending them)",
          () -> agent.output().contains("cudawatch agent: following") && spooledBytes() > 0,
          Boolean.TRUE::equals,
          Duration.ofSeconds(60));
      int before = agent.output().length();
      long t0 = System.nanoTime();
      agent.process.destroy(); // SIGTERM
      boolean exited = agent.process.waitFor(30, TimeUnit.SECONDS);
      long tookMs = (System.nanoTime() - t0) / 1_000_000;
      List<String> printed = agent.linesAfter(before);
      System.out.println(
          "AgentStopIT: stopped " + tookMs + " ms after SIGTERM, printing " + printed);
      assertTrue(exited && tookMs < 5_000, "gone within 5 s of SIGTERM, took " + tookMs + " ms");
      assertTrue(printed.size() <= 3, "no error storm on the way out: " + printed);
      assertFalse(agent.output().contains("after producer has been closed"), agent.output());
    }

    BROKER.restart(); // back on the same port, with its topics
    try (AgentProcess agent = AgentProcess.start(config, out)) {
      Set<String> expected = new TreeSet<>();
      for (int i = 0; i < FILE_LINES; i++) {
        expected.add("train step " + i + " loss 0.5");
      }
      for (int i = 0; i < XIDS; i++) {
        expected.add("NVRM: Xid (PCI:0000:3b:00): 79, pid=" + i + ", GPU has fallen off the bus.");
      }
      Set<String> seen = new HashSet<>();
      for (byte[] v :
          BROKER.readUntil(
              Topics.LOGS,
              got -> texts(got).containsAll(expected),
              Duration.ofSeconds(1),
              Duration.ofSeconds(90),
              false)) {
        seen.addAll(texts(List.of(v)));
      }
      Set<String> missing = new TreeSet<>(expected);
      missing.removeAll(seen);
      assertEquals(Set.of(), missing, "every line shipped after the restart");
      assertTrue(agent.process.isAlive());
    }
  }

  private long spooledBytes() throws Exception {
    Path spool = dir.resolve("state").resolve("spool");
    if (!Files.isDirectory(spool)) {
      return 0;
    }
    try (Stream<Path> s = Files.list(spool)) {
      long n = 0;
      for (Path p : s.filter(p -> p.toString().endsWith(".seg")).toList()) {
        n += Files.size(p);
      }
      return n;
    }
  }

  private static Set<String> texts(List<byte[]> values) {
    Set<String> out = new HashSet<>();
    for (byte[] v : values) {
      LogRecord r;
      try {
        r = WireJson.readLogRecord(v);
      } catch (dev.cudawatch.common.wire.WireFormatException e) {
        throw new AssertionError("not a record: " + e.getMessage(), e);
      }
      if (r.kind() != RecordKind.QUIET) {
        out.add(r.text());
      }
    }
    return out;
  }
}
