package dev.cudawatch.it.slurm;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.cudawatch.testkit.Await;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real one-node Slurm (Debian's slurm-wlm): writes a slurm.conf under a directory of its own,
 * starts slurmctld and slurmd as root (auth/none, proctrack/linuxproc, free loopback ports), waits
 * for the node to be idle, runs sbatch/srun/scontrol against it, and stops the daemons by the pids
 * in their pid files. Needs root and slurm-wlm: without them a test is skipped here and fails in
 * CI.
 */
public final class SlurmCluster implements AutoCloseable {
  private final Path dir;
  private final Path conf;
  private final String node;

  private SlurmCluster(Path dir, String node) {
    this.dir = dir;
    this.conf = dir.resolve("slurm.conf");
    this.node = node;
  }

  /** Skips (workstation) or fails (CI) unless root with slurm-wlm installed. */
  public static void requireSlurm() {
    String why = null;
    if (!"root".equals(System.getProperty("user.name"))) {
      why = "a real slurmd needs root";
    } else {
      for (String bin :
          List.of("/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/sbatch", "/usr/bin/srun")) {
        if (!Files.isExecutable(Path.of(bin))) {
          why = bin + " is not installed (apt-get install slurm-wlm)";
        }
      }
    }
    if (why != null) {
      if (System.getenv("CI") != null) {
        fail(why);
      }
      assumeTrue(false, why);
    }
  }

  /**
   * Starts a cluster whose state, spool, logs and pid files live under {@code dir}.
   *
   * @param prolog the Prolog script, or null
   * @param epilog the Epilog script, or null
   */
  public static SlurmCluster start(Path dir, Path prolog, Path epilog) throws Exception {
    requireSlurm();
    String node = run(List.of("hostname", "-s"), Map.of(), 10).strip();
    SlurmCluster c = new SlurmCluster(dir, node);
    for (String d : List.of("state", "spool", "log")) {
      Files.createDirectories(dir.resolve(d));
    }
    StringBuilder sb = new StringBuilder();
    sb.append("ClusterName=cudawatch-test\n")
        .append("SlurmctldHost=")
        .append(node)
        .append('\n')
        .append("SlurmUser=root\n")
        .append("SlurmdUser=root\n")
        .append("SlurmctldPort=")
        .append(freePort())
        .append('\n')
        .append("SlurmdPort=")
        .append(freePort())
        .append('\n')
        .append("StateSaveLocation=")
        .append(dir.resolve("state"))
        .append('\n')
        .append("SlurmdSpoolDir=")
        .append(dir.resolve("spool"))
        .append('\n')
        .append("SlurmctldPidFile=")
        .append(dir.resolve("slurmctld.pid"))
        .append('\n')
        .append("SlurmdPidFile=")
        .append(dir.resolve("slurmd.pid"))
        .append('\n')
        .append("SlurmctldLogFile=")
        .append(dir.resolve("log/slurmctld.log"))
        .append('\n')
        .append("SlurmdLogFile=")
        .append(dir.resolve("log/slurmd.log"))
        .append('\n')
        .append("ProctrackType=proctrack/linuxproc\n")
        .append("TaskPlugin=task/none\n")
        .append("AuthType=auth/none\n")
        .append("CredType=cred/none\n")
        .append("SwitchType=switch/none\n")
        .append("MpiDefault=none\n")
        .append("ReturnToService=2\n")
        .append("SchedulerType=sched/builtin\n")
        .append("SelectType=select/cons_tres\n")
        .append("JobAcctGatherType=jobacct_gather/none\n")
        .append("MinJobAge=3600\n");
    if (prolog != null) {
      sb.append("Prolog=").append(prolog).append('\n');
    }
    if (epilog != null) {
      sb.append("Epilog=").append(epilog).append('\n');
    }
    int cpus = Math.max(2, Runtime.getRuntime().availableProcessors());
    sb.append("NodeName=")
        .append(node)
        .append(" CPUs=")
        .append(cpus)
        .append(" RealMemory=1000 State=UNKNOWN\n")
        .append("PartitionName=debug Nodes=")
        .append(node)
        .append(" Default=YES MaxTime=INFINITE State=UP\n");
    Files.writeString(c.conf, sb.toString());
    try {
      c.command("/usr/sbin/slurmctld", "-c");
      c.command("/usr/sbin/slurmd", "-c");
      c.await(() -> "idle".equals(c.nodeState()), 60, "the node to be idle");
    } catch (Throwable t) {
      c.close();
      throw t;
    }
    return c;
  }

  public String node() {
    return node;
  }

  public Path dir() {
    return dir;
  }

  /** A Slurm command (sinfo, sbatch, scontrol...) against this cluster, as root. */
  public String command(String... cmd) throws Exception {
    return run(List.of(cmd), Map.of("SLURM_CONF", conf.toString()), 60);
  }

  /** A command run as another user (e.g. sbatch as the job's owner), with auth/none trusting it. */
  public String commandAs(int uid, int gid, Map<String, String> env, String... cmd)
      throws Exception {
    List<String> full =
        new ArrayList<>(
            List.of("setpriv", "--reuid=" + uid, "--regid=" + gid, "--clear-groups", "--"));
    full.addAll(List.of(cmd));
    Map<String, String> e = new java.util.HashMap<>(env);
    e.put("SLURM_CONF", conf.toString());
    return run(full, e, 60);
  }

  /** Submits a batch script as the given user; returns the job id. */
  public String sbatchAs(int uid, int gid, Map<String, String> env, Path script, String... opts)
      throws Exception {
    List<String> cmd = new ArrayList<>(List.of("/usr/bin/sbatch", "--parsable"));
    cmd.addAll(List.of(opts));
    cmd.add(script.toString());
    String out = commandAs(uid, gid, env, cmd.toArray(new String[0])).strip();
    if (!out.matches("\\d+(;.*)?")) {
      fail("sbatch answered: " + out);
    }
    return out.split(";")[0];
  }

  /** scontrol show job ID as KEY=VALUE pairs. */
  public Map<String, String> job(String id) throws Exception {
    return pairs(command("/usr/bin/scontrol", "-o", "show", "job", id));
  }

  /** Waits until the job has ended (any final state) and returns its state. */
  public String awaitJobEnd(String id, long seconds) throws Exception {
    String[] state = {""};
    await(
        () -> {
          try {
            state[0] = job(id).getOrDefault("JobState", "");
          } catch (Exception e) {
            return false;
          }
          return !state[0].isEmpty()
              && !List.of("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED")
                  .contains(state[0]);
        },
        seconds,
        "job " + id + " to end");
    // the epilog runs as the job completes: wait until the node has left COMPLETING too
    await(
        () -> !nodeState().contains("completing") && !nodeState().isEmpty(), seconds, "the epilog");
    return state[0];
  }

  /** The node's state as sinfo prints it: idle, alloc, drain, drained, completing... */
  public String nodeState() {
    try {
      return command("/usr/bin/sinfo", "-h", "-N", "-o", "%T").strip();
    } catch (Exception e) {
      return "";
    }
  }

  /** The node's State= and Reason= from scontrol. */
  public Map<String, String> nodeInfo() throws Exception {
    return pairs(command("/usr/bin/scontrol", "-o", "show", "node", node));
  }

  public String log(String daemon) throws IOException {
    Path f = dir.resolve("log/" + daemon + ".log");
    return Files.exists(f) ? Files.readString(f) : "";
  }

  private static Map<String, String> pairs(String line) {
    Map<String, String> out = new java.util.LinkedHashMap<>();
    Matcher m = Pattern.compile("(\\w+)=(\\S*)").matcher(line);
    while (m.find()) {
      out.putIfAbsent(m.group(1), m.group(2));
    }
    return out;
  }

  /** Stops both daemons by the pids in their pid files: TERM, then KILL after 15 s. */
  @Override
  public void close() {
    for (String d : List.of("slurmd", "slurmctld")) {
      Path pidFile = dir.resolve(d + ".pid");
      try {
        if (!Files.exists(pidFile)) {
          continue;
        }
        long pid = Long.parseLong(Files.readString(pidFile).strip());
        ProcessHandle.of(pid)
            .ifPresent(
                h -> {
                  h.destroy();
                  try {
                    h.onExit().get(15, TimeUnit.SECONDS);
                  } catch (Exception e) {
                    h.destroyForcibly();
                  }
                });
      } catch (IOException | NumberFormatException e) {
        System.err.println("slurm: cannot stop " + d + ": " + e.getMessage());
      }
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static String run(List<String> cmd, Map<String, String> env, long seconds)
      throws Exception {
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    pb.environment().putAll(env);
    Process p = pb.start();
    var out = new java.io.ByteArrayOutputStream();
    Thread reader =
        new Thread(
            () -> {
              try {
                p.getInputStream().transferTo(out);
              } catch (IOException ignored) {
                // ended
              }
            });
    reader.start();
    if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail(String.join(" ", cmd) + " did not finish in " + seconds + " s");
    }
    reader.join();
    String text = out.toString(StandardCharsets.UTF_8);
    if (p.exitValue() != 0) {
      fail(String.join(" ", cmd) + " exited " + p.exitValue() + ":\n" + text);
    }
    return text;
  }

  /** Waits for the state a step asserts. */
  void await(BooleanSupplier ok, long seconds, String what) throws IOException {
    try {
      Await.until(what, ok, java.time.Duration.ofSeconds(seconds));
    } catch (AssertionError e) {
      throw new AssertionError(
          e.getMessage()
              + "; node: "
              + nodeState()
              + "\nslurmctld log:\n"
              + tail(log("slurmctld"))
              + "\nslurmd log:\n"
              + tail(log("slurmd")),
          e);
    }
  }

  private static String tail(String s) {
    return s.length() > 3000 ? s.substring(s.length() - 3000) : s;
  }

  /** Makes a directory reachable by the job's user (temp dirs are 0700). */
  public static void openUp(Path p) throws IOException {
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
  }
}
