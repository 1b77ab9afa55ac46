package dev.cudawatch.ingest.attribution;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One job as {@code scontrol show job -d <id>} prints it: id, name, user, output paths and, per
 * node, the GPU indexes Slurm gave it (the detail lines {@code Nodes=vm CPU_IDs=1 Mem=100
 * GRES=gpu:2(IDX:1-2)}). Used by the Slurm prolog's sidecar and, when no sidecar exists, by the
 * agent itself.
 *
 * @param jobId {@code JobId}
 * @param name {@code JobName}, or null
 * @param user the user name of {@code UserId=name(uid)}, or null
 * @param stdOut {@code StdOut} (Slurm expands {@code %j} and the like), or null
 * @param stdErr {@code StdErr}, or null
 * @param workDir {@code WorkDir}, or null
 * @param gpusByNodes node expression ({@code vm}, {@code dgx-[40,48]}) to GPU indexes on each
 */
public record ScontrolJob(
    String jobId,
    String name,
    String user,
    String stdOut,
    String stdErr,
    String workDir,
    Map<String, List<Integer>> gpusByNodes) {

  /** The job in {@code text}, or null when it names none (an error such as "Invalid job id"). */
  public static ScontrolJob parse(String text) {
    String id = null;
    String name = null;
    String user = null;
    String out = null;
    String err = null;
    String work = null;
    Map<String, List<Integer>> gpus = new LinkedHashMap<>();
    for (String raw : text.split("\n")) {
      String line = raw.strip();
      if (line.startsWith("JobId=")) {
        if (id != null) {
          break; // a second job (an array's tasks): the first is the one asked for
        }
        id = word(line, "JobId=");
        name = rest(line, "JobName=");
      } else if (line.startsWith("UserId=")) {
        String u = word(line, "UserId=");
        user = u.contains("(") ? u.substring(0, u.indexOf('(')) : u;
      } else if (line.startsWith("StdOut=")) {
        out = nullIfNone(line.substring(7));
      } else if (line.startsWith("StdErr=")) {
        err = nullIfNone(line.substring(7));
      } else if (line.startsWith("WorkDir=")) {
        work = nullIfNone(line.substring(8));
      } else if (line.startsWith("Nodes=") && line.contains("GRES=")) {
        List<Integer> idx = gpuIndexes(word(line, "GRES="));
        if (!idx.isEmpty()) {
          gpus.put(word(line, "Nodes="), idx);
        }
      }
    }
    return id == null || id.isEmpty()
        ? null
        : new ScontrolJob(id, name, user, out, err, work, Map.copyOf(gpus));
  }

  /** GPU indexes this job holds on {@code node} (empty when none or the node is not the job's). */
  public List<Integer> gpusOn(String node) {
    for (Map.Entry<String, List<Integer>> e : gpusByNodes.entrySet()) {
      if (Hostlist.contains(e.getKey(), node)) {
        return e.getValue();
      }
    }
    return List.of();
  }

  /**
   * GPU indexes of a GRES value: {@code gpu:2(IDX:1-2)}, {@code gpu:h100:4(IDX:0,2-3)} or several
   * comma-separated GRES ({@code gpu:a:1(IDX:0),gpu:b:1(IDX:1)}); other GRES are skipped.
   */
  static List<Integer> gpuIndexes(String gres) {
    List<Integer> out = new ArrayList<>();
    int from = 0;
    while (true) {
      int start = gres.indexOf("gpu", from);
      if (start < 0) {
        return out;
      }
      int open = gres.indexOf("(IDX:", start);
      int close = open < 0 ? -1 : gres.indexOf(')', open);
      if (close < 0) {
        return out;
      }
      out.addAll(indexList(gres.substring(open + 5, close)));
      from = close + 1;
    }
  }

  /** {@code 0,2-3} as [0, 2, 3]; empty for anything else (an {@code N/A}). */
  public static List<Integer> indexList(String s) {
    List<Integer> out = new ArrayList<>();
    try {
      for (String part : s.split(",")) {
        String p = part.strip();
        if (p.isEmpty()) {
          continue;
        }
        int dash = p.indexOf('-');
        int a = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
        int b = dash < 0 ? a : Integer.parseInt(p.substring(dash + 1));
        if (b < a || b - a > 4096) {
          return List.of();
        }
        for (int i = a; i <= b; i++) {
          out.add(i);
        }
      }
    } catch (NumberFormatException e) {
      return List.of();
    }
    return out;
  }

  /** The value of {@code key} up to the next space. */
  private static String word(String line, String key) {
    int i = line.indexOf(key);
    if (i < 0) {
      return "";
    }
    int end = line.indexOf(' ', i);
    return line.substring(i + key.length(), end < 0 ? line.length() : end);
  }

  /** The value of {@code key} to the end of the line (a job name may hold spaces). */
  private static String rest(String line, String key) {
    int i = line.indexOf(key);
    return i < 0 ? null : nullIfNone(line.substring(i + key.length()));
  }

  private static String nullIfNone(String v) {
    String s = v.strip();
    return s.isEmpty() || s.equals("(null)") ? null : s;
  }
}
