package dev.cudawatch.diagnosis.engine;

import java.util.Map;

/** Per-class defaults from TAXONOMY.md: the usual suspect, a severity and a title. */
public final class ClassDefaults {
  private record Entry(String suspect, String severity, String title) {}

  private static final Map<String, Entry> BY_CLASS =
      Map.ofEntries(
          Map.entry("cuda_oom", new Entry("application", "error", "CUDA out of memory")),
          Map.entry(
              "illegal_memory_access",
              new Entry("application", "error", "Illegal memory access in a CUDA kernel")),
          Map.entry(
              "misaligned_address",
              new Entry("application", "error", "Misaligned address in a CUDA kernel")),
          Map.entry(
              "invalid_address_space",
              new Entry("application", "error", "Invalid address space in a CUDA kernel")),
          Map.entry("kernel_exception", new Entry("application", "error", "A CUDA kernel failed")),
          Map.entry(
              "device_assert", new Entry("application", "error", "Device-side assert triggered")),
          Map.entry(
              "launch_config_error",
              new Entry("application", "error", "A kernel could not be launched as configured")),
          Map.entry(
              "no_kernel_image", new Entry("environment", "error", "No kernel image for this GPU")),
          Map.entry(
              "driver_error", new Entry("environment", "error", "GPU driver or device not usable")),
          Map.entry("cuda_error", new Entry("application", "error", "CUDA API error")),
          Map.entry("cublas_error", new Entry("application", "error", "cuBLAS failure")),
          Map.entry("cudnn_error", new Entry("application", "error", "cuDNN failure")),
          Map.entry(
              "cuda_library_error", new Entry("application", "error", "CUDA library failure")),
          Map.entry(
              "nccl_timeout", new Entry("infrastructure", "critical", "NCCL collective timed out")),
          Map.entry("nccl_error", new Entry("infrastructure", "error", "NCCL failure")),
          Map.entry("gpu_xid", new Entry("hardware", "warning", "GPU Xid error")),
          Map.entry("ecc_error", new Entry("hardware", "critical", "Uncorrectable ECC error")),
          Map.entry("gpu_lost", new Entry("hardware", "critical", "GPU lost")),
          Map.entry(
              "internal_assert",
              new Entry("framework", "error", "Framework internal assert failed")),
          Map.entry(
              "sanitizer_report",
              new Entry("application", "error", "compute-sanitizer found errors")),
          Map.entry("host_oom", new Entry("application", "error", "Host out of memory")),
          Map.entry(
              "memory_leak",
              new Entry("application", "warning", "GPU memory leak heading to OOM")));

  private ClassDefaults() {}

  public static String suspect(String cls) {
    Entry e = BY_CLASS.get(cls);
    return e == null ? "application" : e.suspect();
  }

  public static String severity(String cls) {
    Entry e = BY_CLASS.get(cls);
    return e == null ? "error" : e.severity();
  }

  public static String title(String cls) {
    Entry e = BY_CLASS.get(cls);
    return e == null ? cls : e.title();
  }
}
