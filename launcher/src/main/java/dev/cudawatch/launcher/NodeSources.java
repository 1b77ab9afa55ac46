package dev.cudawatch.launcher;

import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Which of the machine's own sources {@code local} uses: the kernel log (Xids) and GPU memory
 * samples (leak trends), each on when the machine has it, off by flag, or replayed from a recorded
 * file. Each decision comes with the reason the start-up banner prints.
 *
 * @param kernelLog {@code /dev/kmsg}, a file to follow, or null (off)
 * @param kernelWhy why the kernel log is on or off
 * @param nvidiaSmi the nvidia-smi binary to sample with, or null
 * @param gpuSamples a recorded samples file to replay, or null
 * @param gpuWhy why GPU sampling is on or off
 */
public record NodeSources(
    String kernelLog, String kernelWhy, String nvidiaSmi, Path gpuSamples, String gpuWhy) {

  /** No node sources: the tests and replays that only follow logs. */
  public static NodeSources none() {
    return new NodeSources(null, "off", null, null, "off");
  }

  /**
   * Decides from the flags and the machine: {@code kernelFile}/{@code samplesFile} replay recorded
   * files; otherwise /dev/kmsg when it can be read and nvidia-smi when it is on {@code path}.
   */
  public static NodeSources detect(
      boolean kernelOff,
      Path kernelFile,
      boolean gpuOff,
      Path samplesFile,
      String kmsg,
      String path) {
    String kernel;
    String kernelWhy;
    if (kernelFile != null) {
      kernel = kernelFile.toAbsolutePath().toString();
      kernelWhy = "following " + kernel + " (--kernel-log)";
    } else if (kernelOff) {
      kernel = null;
      kernelWhy = "off (--no-kernel-log)";
    } else if (readable(kmsg)) {
      kernel = kmsg;
      kernelWhy = "following " + kmsg;
    } else {
      kernel = null;
      kernelWhy =
          "off: "
              + kmsg
              + " is not readable here (run as root or with CAP_SYSLOG, or replay a file with"
              + " --kernel-log FILE)";
    }
    String smi = null;
    String gpuWhy;
    if (samplesFile != null) {
      gpuWhy =
          "replaying " + samplesFile.toAbsolutePath() + " at its recorded pace (--gpu-samples)";
    } else if (gpuOff) {
      gpuWhy = "off (--no-gpu-samples)";
    } else {
      smi = onPath("nvidia-smi", path);
      gpuWhy =
          smi != null
              ? "sampling with " + smi + " every 500 ms"
              : "off: nvidia-smi is not on the PATH (no NVIDIA driver here; replay a file with"
                  + " --gpu-samples FILE)";
    }
    return new NodeSources(kernel, kernelWhy, smi, samplesFile, gpuWhy);
  }

  /** Whether the kernel log can really be opened (permissions and dmesg_restrict). */
  static boolean readable(String device) {
    if (device == null || !Files.exists(Path.of(device))) {
      return false;
    }
    try {
      new FileInputStream(device).close();
      return true;
    } catch (IOException | SecurityException e) {
      return false;
    }
  }

  static String onPath(String name, String path) {
    if (path == null) {
      return null;
    }
    for (String dir : path.split(File.pathSeparator)) {
      if (dir.isEmpty()) {
        continue;
      }
      Path p = Path.of(dir, name);
      if (Files.isRegularFile(p) && Files.isExecutable(p)) {
        return p.toString();
      }
    }
    return null;
  }
}
