package dev.cudawatch.ingest;

import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.common.config.KafkaSettings;
import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.ingest.framing.LineFramer;
import dev.cudawatch.ingest.ship.Shipper;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code cudawatch run [--job ID] -- CMD ARGS...}: runs a training command, passes its output
 * through unchanged, ships both streams and the exit status, and exits with the command's status.
 * The job never waits for Kafka: lines queue in a bounded buffer, and what cannot be shipped is
 * counted and reported on exit.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = "Run a training command and ship its output to Kafka.")
public final class RunMain implements Callable<Integer> {
  @Option(
      names = "--job",
      paramLabel = "ID",
      description = "job id (default: SLURM_JOB_ID, TORCHELASTIC_RUN_ID, pod name)")
  String job;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "agent YAML configuration (kafka settings)")
  Path config;

  @Option(
      names = "--bootstrap-servers",
      paramLabel = "HOST:PORT",
      description = "overrides kafka.bootstrap_servers")
  String bootstrap;

  @Option(
      names = "--queue",
      defaultValue = "100000",
      description = "lines buffered for shipping (default: ${DEFAULT-VALUE})")
  int queueSize;

  @Parameters(
      arity = "1..*",
      paramLabel = "CMD",
      description = "the command and its arguments (after --)")
  List<String> command = new ArrayList<>();

  private record Item(LogRecord record) {}

  public static void main(String[] args) {
    CommandLine cl = new CommandLine(new RunMain());
    cl.setStopAtPositional(true);
    System.exit(cl.execute(args));
  }

  @Override
  public Integer call() throws Exception {
    AgentSettings s =
        new ConfigLoader("CUDAWATCH_AGENT", System.getenv()).load(config, AgentSettings.class);
    KafkaSettings configured =
        bootstrap == null ? s.kafka() : s.kafka().withBootstrapServers(bootstrap);
    Map<String, String> props = new HashMap<>(configured.properties());
    props.putIfAbsent("max.block.ms", "5000"); // never hold the job hostage to an absent broker
    KafkaSettings kafka = new KafkaSettings(configured.bootstrapServers(), props);
    String jobId =
        job != null
            ? job
            : s.job() != null ? s.job() : "run-" + UUID.randomUUID().toString().substring(0, 8);
    String runId = UUID.randomUUID().toString();
    Map<String, String> env = System.getenv();
    Integer rank = NodeEnvironment.intEnv(env, "RANK");
    Integer localRank = NodeEnvironment.intEnv(env, "LOCAL_RANK");
    Clock clock = Clock.systemUTC();

    Process p;
    try {
      p = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.INHERIT).start();
    } catch (IOException e) {
      System.err.println("cudawatch run: cannot start " + command.get(0) + ": " + e.getMessage());
      return 127;
    }
    BlockingQueue<Item> queue = new ArrayBlockingQueue<>(queueSize);
    AtomicLong dropped = new AtomicLong();
    Thread shipping =
        new Thread(
            () -> {
              try (Shipper shipper = new Shipper(kafka)) {
                while (true) {
                  Item it = queue.poll(200, TimeUnit.MILLISECONDS);
                  if (it == null) {
                    continue;
                  }
                  if (it.record() == null) {
                    break;
                  }
                  if (shipper.failed() > 0) {
                    dropped
                        .incrementAndGet(); // the broker is unreachable: count, never block the job
                    continue;
                  }
                  try {
                    shipper.send(it.record(), () -> {});
                  } catch (RuntimeException e) {
                    dropped.incrementAndGet();
                  }
                }
                shipper.flush();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } catch (RuntimeException e) {
                System.err.println("cudawatch run: shipping stopped: " + e.getMessage());
              }
            },
            "cudawatch-run-ship");
    shipping.setDaemon(true);
    shipping.start();

    String source = "run:" + jobId + (rank != null ? "/rank" + rank : "");
    Thread out =
        pump(
            p.getInputStream(),
            System.out,
            "stdout",
            source,
            runId,
            jobId,
            rank,
            localRank,
            s,
            queue,
            dropped,
            clock);
    Thread err =
        pump(
            p.getErrorStream(),
            System.err,
            "stderr",
            source,
            runId,
            jobId,
            rank,
            localRank,
            s,
            queue,
            dropped,
            clock);
    int code = p.waitFor();
    out.join();
    err.join();
    String status =
        code > 128 ? "signal=" + (code - 128) + " exit_code=" + code : "exit_code=" + code;
    LogRecord exit =
        LogRecord.builder()
            .host(s.host())
            .job(jobId)
            .rank(rank)
            .localRank(localRank)
            .kind(RecordKind.EXIT)
            .stream("exit")
            .source(source)
            .sourceId(runId)
            .offset(Long.MAX_VALUE / 2)
            .eventTime(clock.instant())
            .text("cudawatch run: " + String.join(" ", command) + " finished with " + status)
            .build();
    if (!queue.offer(new Item(exit))) {
      dropped.incrementAndGet();
    }
    queue.put(new Item(null));
    shipping.join(30_000);
    if (dropped.get() > 0) {
      System.err.println(
          "cudawatch run: Kafka at "
              + kafka.bootstrapServers()
              + " was unreachable: "
              + dropped.get()
              + " lines not shipped");
    }
    return code;
  }

  private static Thread pump(
      InputStream in,
      OutputStream passThrough,
      String stream,
      String source,
      String runId,
      String job,
      Integer rank,
      Integer localRank,
      AgentSettings s,
      BlockingQueue<Item> queue,
      AtomicLong dropped,
      Clock clock) {
    Thread t =
        new Thread(
            () -> {
              LineFramer framer = new LineFramer(s.maxLineBytes(), true, 0);
              byte[] buf = new byte[8192];
              java.util.function.Consumer<dev.cudawatch.ingest.framing.FramedLine> sink =
                  l -> {
                    LogRecord r =
                        LogRecord.builder()
                            .host(s.host())
                            .job(job)
                            .rank(rank)
                            .localRank(localRank)
                            .stream(stream)
                            .source(source + "/" + stream)
                            .sourceId(runId)
                            .offset(l.start())
                            .eventTime(clock.instant())
                            .text(l.text())
                            .build();
                    if (!queue.offer(new Item(r))) {
                      dropped.incrementAndGet();
                    }
                  };
              try {
                for (int n; (n = in.read(buf)) > 0; ) {
                  passThrough.write(buf, 0, n); // unchanged, before anything else
                  passThrough.flush();
                  framer.feed(buf, 0, n, sink);
                }
              } catch (IOException e) {
                // the child closed its stream
              }
              framer.flush(sink);
            },
            "cudawatch-run-" + stream);
    t.start();
    return t;
  }
}
