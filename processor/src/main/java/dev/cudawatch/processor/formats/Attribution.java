package dev.cudawatch.processor.formats;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import java.io.Serializable;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Who wrote a shipped line: the job and rank, from a configured path pattern, the pod's labels
 * (Kubernetes Jobs, Kubeflow training jobs, Volcano) or a Slurm output file's name.
 */
public final class Attribution implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Pod labels that name a job, most specific first. */
  static final List<String> JOB_LABELS =
      List.of(
          "cudawatch.dev/job",
          "training.kubeflow.org/job-name",
          "batch.kubernetes.io/job-name",
          "job-name",
          "volcano.sh/job-name");

  /** Pod labels that carry the pod's index in its job, which is its rank for one GPU a pod. */
  static final List<String> RANK_LABELS =
      List.of(
          "cudawatch.dev/rank",
          "training.kubeflow.org/replica-index",
          "batch.kubernetes.io/job-completion-index",
          "apps.kubernetes.io/pod-index");

  private static final Pattern SLURM =
      Pattern.compile("(?:^|/)slurm-(?P<job>\\d+(?:_\\d+)?)\\.(?:out|err)$");

  /**
   * Where a shipper reads the kernel log by default: the kernel's own devices and the files only
   * the system logger writes. A name alone is not enough: a job may write {@code kern.log} or a
   * {@code dmesg} capture into its own directory, and only the kernel may speak for the hardware.
   */
  public static final String DEFAULT_KERNEL_FILES =
      "^(?:/dev/kmsg|/proc/kmsg|/var/log/(?:kern\\.log|dmesg)(?:\\.\\d+)?)$";

  /** Paths remembered with what the pattern found in them; a node has few files, lines many. */
  private static final int MAX_PATHS = 4096;

  private final String jobPattern;
  private final String kernelFiles;
  private transient Pattern compiled;
  private transient Pattern kernelCompiled;
  private transient Map<String, String[]> byPath;

  /**
   * @param jobPattern RE2/J with a named group {@code job} and optionally {@code rank}, or null
   * @param kernelFiles RE2/J matching the whole path of each file that holds the kernel log, or
   *     null for {@link #DEFAULT_KERNEL_FILES}
   */
  public Attribution(String jobPattern, String kernelFiles) {
    this.jobPattern = jobPattern;
    this.kernelFiles = kernelFiles == null ? DEFAULT_KERNEL_FILES : kernelFiles;
  }

  /** The job, or null when neither the path nor the labels name one. */
  public String job(String path, Map<String, String> labels) {
    String[] p = fromPath(path);
    if (p[0] != null) {
      return p[0];
    }
    String l = label(labels, JOB_LABELS);
    return l != null ? l : p[2];
  }

  /** The rank, or null when unknown. */
  public Integer rank(String path, Map<String, String> labels) {
    String r = fromPath(path)[1];
    if (r == null) {
      r = label(labels, RANK_LABELS);
    }
    if (r == null || r.isEmpty() || r.length() > 9 || !r.chars().allMatch(Character::isDigit)) {
      return null;
    }
    return Integer.valueOf(r);
  }

  /** Whether a path is one the kernel log is read from (configured, or the system's own). */
  public boolean kernelFile(String path) {
    if (path == null) {
      return false;
    }
    if (kernelCompiled == null) {
      kernelCompiled = Pattern.compile(kernelFiles);
    }
    return kernelCompiled.matcher(path).find();
  }

  /** The pattern's job and rank and the Slurm job in a path, each or all null; memoized. */
  private String[] fromPath(String path) {
    if (path == null) {
      return new String[3];
    }
    if (byPath == null) {
      byPath = new HashMap<>();
    }
    String[] found = byPath.get(path);
    if (found == null) {
      found = new String[3];
      if (jobPattern != null) {
        if (compiled == null) {
          compiled = Pattern.compile(jobPattern);
        }
        Matcher m = compiled.matcher(path);
        if (m.find()) {
          found[0] = group(m, "job");
          found[1] = group(m, "rank");
        }
      }
      Matcher s = SLURM.matcher(path);
      if (s.find()) {
        found[2] = s.group("job");
      }
      if (byPath.size() >= MAX_PATHS) {
        byPath.clear(); // bounded: a node's files change slowly
      }
      byPath.put(path, found);
    }
    return found;
  }

  private static String group(Matcher m, String name) {
    try {
      return m.group(name);
    } catch (IllegalArgumentException e) {
      return null; // the pattern has no such group
    }
  }

  /** A label by name; Filebeat replaces the dots in label names with underscores by default. */
  private static String label(Map<String, String> labels, List<String> names) {
    if (labels == null || labels.isEmpty()) {
      return null;
    }
    for (String n : names) {
      String v = labels.get(n);
      if (v == null) {
        v = labels.get(n.replace('.', '_'));
      }
      if (v != null && !v.isBlank()) {
        return v;
      }
    }
    return null;
  }
}
