package dev.cudawatch.diagnosis.engine;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;

/** Which framework wrote a line, for incidents whose signature does not say. */
final class FrameworkSniffer {
  /** A Python exception's type at the start of a line ({@code torch.OutOfMemoryError: ...}). */
  static final Pattern EXCEPTION_TYPE =
      Pattern.compile(
          "^\\s*((?:[A-Za-z_]\\w*\\.)*[A-Za-z_]\\w*(?:Error|Exception|Failure))(?::|$)");

  private FrameworkSniffer() {}

  /** The framework the line's wording belongs to, or null. */
  static String detect(String text) {
    if (text.contains("torch") || text.contains("PyTorch") || text.contains("c10::")) {
      return "pytorch";
    }
    if (text.contains("cupy")) {
      return "cupy";
    }
    if (text.contains("jax") || text.contains("Xla") || text.contains("XLA")) {
      return "jax";
    }
    if (text.contains("tensorflow")) {
      return "tensorflow";
    }
    if (text.contains("Triton") || text.contains("triton")) {
      return "triton";
    }
    if (text.contains("NCCL") || text.contains("nccl")) {
      return "nccl";
    }
    if (text.contains("NVRM")) {
      return "driver";
    }
    Matcher m = EXCEPTION_TYPE.matcher(text);
    if (m.find() && (m.group(1).indexOf('.') < 0 || m.group(1).startsWith("torch."))) {
      // "RuntimeError: CUDA error: ..." with no other framework named is PyTorch's wording
      return "pytorch";
    }
    if (text.contains("numba")) {
      return "cuda";
    }
    if (text.contains("CUDA error")
        || text.contains("cudaError")
        || text.contains("CUDA_ERROR_")
        || text.contains("GPUassert")) {
      return "cuda";
    }
    return null;
  }
}
