package dev.cudawatch.diagnosis.cli;

import dev.cudawatch.common.cli.Cli;
import dev.cudawatch.common.cli.LogOptions;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.datafile.CatalogException;
import dev.cudawatch.diagnosis.jobs.JobVerdicts;
import dev.cudawatch.diagnosis.offline.ParallelClassifier;
import dev.cudawatch.diagnosis.trend.GpuSamplesJoin;
import dev.cudawatch.diagnosis.trend.TrendSettings;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.LongConsumer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code cudawatch classify}: diagnoses logs offline, for the researcher whose job just died. */
@Command(
    name = "classify",
    description = {
      "Diagnose CUDA, PyTorch, NCCL and GPU-driver failures in log files.",
      "Reads each FILE ('-' for stdin) and reports its incidents: the root cause first, what it means and what to do next.",
      "An nvidia-smi --query-gpu CSV with memory.used and memory.total is checked for memory leaks.",
      "gzip and zstd files (rotated logs) are read decompressed, whatever their name; a binary file"
          + " (core dump, checkpoint, tarball) is skipped with an error.",
      "With --gpu-samples, each out-of-memory error also says what its GPU's memory did before it."
    },
    exitCodeListHeading = "%nExit status:%n",
    exitCodeList = {
      "0:every file was read (and, with --fail-on, no incident at or above it)",
      "1:with --fail-on SEVERITY: an incident at or above SEVERITY was found",
      "2:a file could not be read (missing, binary, corrupt compressed data), or the catalog is"
          + " invalid"
    })
public final class ClassifyCommand implements Callable<Integer> {
  @CommandLine.Mixin LogOptions logOptions;

  @Parameters(
      paramLabel = "FILE",
      arity = "1..*",
      description = "log files to diagnose; '-' reads stdin")
  List<String> files = new ArrayList<>();

  @Option(
      names = "--job",
      paramLabel = "NAME",
      description =
          "the files are one job's (its ranks' logs, the node's kernel log): report one root cause"
              + " for the job, with the culprit rank, host and GPU and the evidence")
  String job;

  @Option(
      names = "--gpu-samples",
      paramLabel = "CSV",
      description =
          "the node's GPU memory samples (nvidia-smi --query-gpu with timestamp, index,"
              + " memory.used and memory.total, with or without a header, times in this machine's"
              + " zone): each OOM gets"
              + " memory_before (steady_leak, sudden_spike, fragmentation or steady_high) with its"
              + " evidence, from its GPU's samples of the 30 minutes before it; a log without"
              + " times places its OOM where its GPU's memory was last released")
  Path gpuSamples;

  @Option(names = "--json", description = "one JSON object per incident per line")
  boolean json;

  @Option(
      names = "--catalog",
      paramLabel = "FILE",
      description = "extra signature catalog (YAML); may be repeated")
  List<Path> catalogs = new ArrayList<>();

  @Option(
      names = "--color",
      negatable = true,
      description = "colour the report (default: when stdout is a terminal)")
  Boolean color;

  /** Severities from least to most severe; {@code --fail-on} compares by this order. */
  static final List<String> SEVERITY_ORDER = List.of("info", "warning", "error", "critical");

  @Option(
      names = "--fail-on",
      paramLabel = "SEVERITY",
      description =
          "exit 1 when an incident at or above SEVERITY is found: info, warning, error, critical"
              + " (for CI steps and Slurm epilogs)")
  String failOn;

  @Option(
      names = "--threads",
      hidden = true,
      paramLabel = "N",
      description = "worker threads (default: every core); 1 reads each file in turn on one thread")
  int threads = Runtime.getRuntime().availableProcessors();

  private final PrintStream out;
  private final PrintStream err;
  private final InputStream stdin;

  /** The built-in catalog, loading on another thread while picocli parses the arguments. */
  private java.util.concurrent.CompletableFuture<Catalog> builtIn;

  public ClassifyCommand() {
    this(System.out, System.err, System.in);
  }

  ClassifyCommand(PrintStream out, PrintStream err, InputStream stdin) {
    this.out = out;
    this.err = err;
    this.stdin = stdin;
  }

  public static void main(String[] args) {
    PrintStream out =
        new PrintStream(
            new java.io.FileOutputStream(java.io.FileDescriptor.out),
            false,
            StandardCharsets.UTF_8);
    ClassifyCommand command = new ClassifyCommand(out, System.err, System.in);
    // start-up time: nearly every run uses the built-in catalog alone, so start loading it now
    if (java.util.Arrays.stream(args).noneMatch(a -> a.startsWith("--catalog"))) {
      command.builtIn = new java.util.concurrent.CompletableFuture<>();
      Thread loader =
          new Thread(
              () -> {
                try {
                  command.builtIn.complete(Catalog.builtIn());
                } catch (RuntimeException | Error e) {
                  command.builtIn.completeExceptionally(e);
                }
              },
              "catalog-load");
      loader.setDaemon(true);
      loader.start();
    }
    int code = Cli.commandLine(command).execute(args);
    out.flush();
    System.exit(code);
  }

  @Override
  public Integer call() {
    if (failOn != null && !SEVERITY_ORDER.contains(failOn)) {
      err.println(
          "cudawatch classify: --fail-on: unknown severity '"
              + failOn
              + "' (use info, warning, error, critical)");
      return 2;
    }
    // the built-in catalog is still loading: classify starts reading without waiting for it
    boolean builtInOnly = builtIn != null && catalogs.isEmpty();
    Catalog catalog = null;
    if (!builtInOnly) {
      try {
        catalog = Catalog.load(catalogs);
      } catch (CatalogException e) {
        err.println("cudawatch classify: invalid catalog: " + e.getMessage());
        return 2;
      }
    }
    if (json) {
      // the JSON mapper builds on the idle core while this thread reads and classifies the input
      Thread warm = new Thread(() -> WireJson.toJson(Map.of("warm", List.of(1))), "json-warm");
      warm.setDaemon(true);
      warm.start();
    }
    boolean tty = System.console() != null;
    boolean useColor = color != null ? color : tty && System.getenv("NO_COLOR") == null;
    if (threads < 1) {
      err.println("cudawatch classify: --threads must be at least 1");
      return 2;
    }
    if (gpuSamples != null && !java.nio.file.Files.isReadable(gpuSamples)) {
      err.println("cudawatch classify: --gpu-samples: cannot read " + gpuSamples);
      return 2;
    }
    Report report = json ? new JsonReport(out) : new TextReport(out, useColor, job != null);
    Map<String, List<Incident>> ofJob = new java.util.LinkedHashMap<>();
    int[] status = {0};
    boolean[] failed = {false};
    // the machine's zone: nvidia-smi CSVs carry local times with no zone
    try (ParallelClassifier classifier =
        builtInOnly
            ? ParallelClassifier.ofBuiltIn(builtIn)
                .clock(Clock.systemDefaultZone())
                .threads(threads)
                .build()
            : ParallelClassifier.builder(catalog)
                .clock(Clock.systemDefaultZone())
                .threads(threads)
                .build()) {
      classifier.classifyAll(
          files,
          stdin,
          new ParallelClassifier.Listener() {
            private Progress progress;

            @Override
            public LongConsumer started(String file, long size) {
              progress = new Progress(err, size, tty && !json);
              return progress::update;
            }

            @Override
            public void settled(String file, List<Incident> incidents) {
              if (gpuSamples == null) { // with samples, OOMs change once the file is done
                report.settled(file, incidents);
              }
            }

            @Override
            public void done(String file, List<Incident> found) {
              if (progress != null) { // null when a corrupt file failed before it started
                progress.done();
                progress = null;
              }
              List<Incident> incidents = withSamples(found, status);
              report.file(file, incidents);
              if (job != null) {
                ofJob.put(file, incidents);
              } else if (!json && JobVerdicts.severalRanks(incidents)) {
                // the readable report only: --json keeps one object per incident unless --job
                report.job(file, JobVerdicts.of(incidents), incidents.size());
              }
              failed[0] |= failOn != null && incidents.stream().anyMatch(i -> atOrAboveFailOn(i));
              out.flush();
            }

            @Override
            public void failed(String file, Exception e) {
              if (progress != null) {
                progress.done();
                progress = null;
              }
              err.println("cudawatch classify: " + file + ": " + describe(e));
              status[0] = 2;
              out.flush();
            }
          });
    }
    int n = ofJob.values().stream().mapToInt(List::size).sum();
    if (job != null && n > 0) {
      report.job(job, JobVerdicts.ofFiles(ofJob), n);
    }
    report.end();
    out.flush();
    return status[0] != 0 ? status[0] : failed[0] ? 1 : 0;
  }

  /** The OOMs joined with {@code --gpu-samples}; the incidents as they are without it. */
  private List<Incident> withSamples(List<Incident> incidents, int[] status) {
    if (gpuSamples == null
        || incidents.stream().noneMatch(i -> "cuda_oom".equals(i.incidentClass()))) {
      return incidents;
    }
    try (var in = java.nio.file.Files.newBufferedReader(gpuSamples, StandardCharsets.UTF_8)) {
      var r =
          new GpuSamplesJoin(TrendSettings.defaults(), java.time.ZoneId.systemDefault())
              .join(incidents, in);
      if (r.skipped() > 0) {
        err.println(
            "cudawatch classify: "
                + gpuSamples
                + ": "
                + r.skipped()
                + " rows skipped (not samples,"
                + " or out of order)");
      }
      return r.incidents();
    } catch (java.io.IOException | java.io.UncheckedIOException e) {
      err.println(
          "cudawatch classify: --gpu-samples: "
              + gpuSamples
              + ": "
              + describe(e instanceof java.io.UncheckedIOException u ? u.getCause() : e));
      status[0] = 2;
      return incidents;
    }
  }

  private boolean atOrAboveFailOn(Incident i) {
    return SEVERITY_ORDER.indexOf(i.severity()) >= SEVERITY_ORDER.indexOf(failOn);
  }

  private static String describe(Exception e) {
    if (e instanceof java.nio.file.NoSuchFileException) {
      return "no such file";
    }
    if (e instanceof java.nio.file.AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof java.nio.file.FileSystemException fse && fse.getReason() != null) {
      return fse.getReason();
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}
