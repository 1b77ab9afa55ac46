package dev.cudawatch.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cudawatch.common.Topics;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.ingest.files.FileIdentity;
import dev.cudawatch.ingest.files.PositionStore;
import dev.cudawatch.ingest.spool.SpoolCursor;
import dev.cudawatch.kafka.embedded.EmbeddedKafkaBroker;
import dev.cudawatch.kafka.embedded.KafkaBrokerExtension;
import dev.cudawatch.testkit.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Upgrade of a node agent: today's agent starts on a {@code state_dir} that the previous release's
 * agent (commit 5be5e18, see the fixture's README) left when it was stopped with the broker gone,
 * on the same log files and kernel log. Nothing it had shipped is shipped again, nothing it had not
 * shipped is lost, and its state files are rewritten in today's formats.
 *
 * <p>File identity: positions are kept by device and inode, which no copy of a file keeps. The
 * fixture's {@code positions.json} is therefore copied with each old path and identity replaced by
 * those of this test's copy of the same file (same bytes); every other byte (stream ids, positions,
 * head fingerprints) and its unversioned form are the old release's. The kmsg cursor and the spool
 * are used exactly as written: they name the boot id and spool segments, which the test recreates.
 */
class AgentStateUpgradeIT {
  @RegisterExtension static final KafkaBrokerExtension KAFKA = new KafkaBrokerExtension();

  private static final Path FIXTURE = Path.of("src/test/resources/upgrade/release-5be5e18");

  /** The hosts of this test's records: the new agent's, and the old one's in its spool. */
  private static final Set<String> HOSTS = Set.of("new-node", "old-node");

  private static final String OLD_DIR = "/tmp/cw-fixture-5be5e18/logs/";

  @TempDir Path dir;

  @Test
  void theStateOfThePreviousReleaseIsHonouredAndRewrittenInTheNewFormats() throws Exception {
    Path state = dir.resolve("state");
    copyTree(FIXTURE.resolve("state"), state);
    Path logs = Files.createDirectories(dir.resolve("logs"));
    for (String f : List.of("train-a.log", "train-b.log")) {
      Files.copy(FIXTURE.resolve("input").resolve(f), logs.resolve(f));
    }
    Path kmsg = Files.createDirectories(dir.resolve("dev")).resolve("kmsg");
    Files.copy(FIXTURE.resolve("input/kmsg"), kmsg);
    Path proc = dir.resolve("proc");
    KernelLogRebootIT.boot(
        proc, Files.readString(FIXTURE.resolve("input/boot_id")).strip(), 1_763_800_000L);
    String oldPositions = Files.readString(state.resolve("positions.json"));
    Files.writeString(state.resolve("positions.json"), onThisMachine(oldPositions, logs));
    assertFalse(oldPositions.contains("\"format\""), "the fixture predates formats");
    assertEquals("1 1038", Files.readString(state.resolve("spool/cursor")).strip());

    EmbeddedKafkaBroker broker = KAFKA.broker();
    try (var consumer = KernelLogRebootIT.consumer(broker)) {
      broker.createTopics(Topics.ALL, 2);
      AgentSettings s =
          AgentSettings.builder()
              .kafka(new KafkaSettings(broker.bootstrapServers(), Map.of()))
              .globs(List.of(logs + "/*.log"))
              .stateDir(state.toString())
              .runSpoolRoot(dir.resolve("run-spools").toString()) // adopts no other test's run
              .kernelLog(kmsg.toString())
              .gpuSampleIntervalMs(0)
              .httpPort(-1)
              .closeInactiveMs(300_000)
              .procDir(proc.toString())
              .host("new-node")
              .build();
      List<LogRecord> got = new ArrayList<>();
      Set<String> foreign = new TreeSet<>();
      try (AgentRuntime agent = new AgentRuntime(s, Clock.systemUTC())) {
        agent.start(false);
        // written after the upgrade: a line and an Xid
        Files.writeString(
            logs.resolve("train-a.log"), "a5 after the upgrade\n", StandardOpenOption.APPEND);
        Files.writeString(
            kmsg,
            "3,7,6000000,-;NVRM: Xid (PCI:0000:18:00): 94, pid=0, after the upgrade\n",
            StandardOpenOption.APPEND);
        List<String> expected =
            List.of(
                "a4 epoch 4 loss 0.52", // after the old position, read by the old agent, unsent
                "b3 rank 1 step 20",
                "a5 after the upgrade",
                "NVRM: Xid (PCI:0000:18:00): 79, pid=0, GPU has fallen off the bus: phase-2 first",
                "NVRM: Xid (PCI:0000:18:00): 48, pid=0, DBE: phase-2 second",
                "NVRM: Xid (PCI:0000:18:00): 94, pid=0, after the upgrade");
        Await.until(
            "the unsent lines and Xids of the old release and the new ones in Kafka",
            () -> {
              for (var r : consumer.poll(Duration.ofMillis(200))) {
                LogRecord rec = WireJson.readLogRecord(r.value());
                if (rec.kind() != RecordKind.LOG && rec.kind() != RecordKind.KERNEL) {
                  continue;
                }
                if (HOSTS.contains(rec.host())) {
                  got.add(rec);
                } else {
                  foreign.add(rec.host() + " " + rec.source()); // not this agent's: named below
                }
              }
              return texts(got);
            },
            t -> t.containsAll(expected),
            Duration.ofSeconds(60));

        // Each stream's records share a key, so a partition, in order: had the old lines or Xids
        // been sent again, they would have arrived before the later ones awaited above.
        assertEquals(
            expected.stream().sorted().toList(),
            texts(got).stream().sorted().toList(),
            "each unsent record once; nothing the old release shipped (a1-a3, b1-b2, the Xids"
                + " at seq 1 and 3) again");
        if (!foreign.isEmpty()) { // another test's client outliving it: not this agent's doing
          System.out.println("AgentStateUpgradeIT: records of other programs: " + foreign);
        }
        // the spooled Xids are the old agent's records, forwarded as they were spooled
        for (LogRecord r : got) {
          boolean fromOldSpool = r.text().contains("phase-2");
          assertEquals(fromOldSpool ? "old-node" : "new-node", r.host(), r.text());
        }
        Await.until(
            "the kernel source to skip the 7 records (seq 0 to 6) the old cursor covers",
            () -> agent.kernelSource().skipped(),
            n -> n == 7L,
            Duration.ofSeconds(10));
        assertEquals(0, agent.kernelSource().cursorResets());
        assertEquals(0, agent.spool().cursorResets());

        // the rewritten state files carry today's formats
        Await.until(
            "positions.json in format 2, past a5",
            () -> json(state.resolve("positions.json")),
            j ->
                j.path("format").asInt() == PositionStore.FORMAT
                    && j.toString().contains("\"position\":105"),
            Duration.ofSeconds(30));
        Await.until(
            "the kmsg cursor in format 2, at seq 7",
            () -> json(state.resolve("kernel/kmsg-cursor")),
            j -> j.path("format").asInt() == 2 && j.path("seq").asLong() == 7,
            Duration.ofSeconds(30));
        Await.until(
            "the spool cursor in format 2",
            () -> json(state.resolve("spool/cursor")),
            j -> j.path("format").asInt() == SpoolCursor.FORMAT,
            Duration.ofSeconds(30));
      }
    }
  }

  /** The old checkpoint with the old paths and identities replaced by those of the copies. */
  private static String onThisMachine(String positions, Path logs) throws Exception {
    JsonNode old = WireJson.mapper().readTree(positions);
    String out = positions;
    for (Iterator<Map.Entry<String, JsonNode>> it = old.properties().iterator(); it.hasNext(); ) {
      JsonNode p = it.next().getValue();
      String oldPath = p.path("path").asText();
      assertTrue(oldPath.startsWith(OLD_DIR), oldPath);
      Path now = logs.resolve(oldPath.substring(OLD_DIR.length()));
      String id = p.path("identity").asText();
      String newId = FileIdentity.of(now);
      out =
          out.replace("\"path\":\"" + oldPath + "\"", "\"path\":\"" + now + "\"")
              .replace("\"" + id + "\":{", "\"" + newId + "\":{")
              .replace("\"identity\":\"" + id + "\"", "\"identity\":\"" + newId + "\"");
    }
    return out;
  }

  private static JsonNode json(Path p) {
    try {
      return WireJson.mapper().readTree(p.toFile());
    } catch (Exception e) {
      return WireJson.mapper().createObjectNode(); // not there yet, or the old form
    }
  }

  private static List<String> texts(List<LogRecord> got) {
    return got.stream().map(LogRecord::text).toList();
  }

  private static void copyTree(Path from, Path to) throws Exception {
    try (Stream<Path> s = Files.walk(from)) {
      for (Path p : s.toList()) {
        Path t = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(t);
        } else {
          Files.copy(p, t);
        }
      }
    }
  }
}
