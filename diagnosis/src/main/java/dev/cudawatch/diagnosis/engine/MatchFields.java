package dev.cudawatch.diagnosis.engine;

import dev.cudawatch.diagnosis.catalog.CudaError;
import dev.cudawatch.diagnosis.catalog.CudaErrorTable;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Turns a match's captured text into typed fields: sizes and durations as numbers, kernel_file from
 * a path, NCCL result and cuBLAS status names from their text or number, and the CUDA error
 * completed from whichever of its name, number or message the line stated.
 */
final class MatchFields {
  private final CudaErrorTable cudaErrors;

  MatchFields(CudaErrorTable cudaErrors) {
    this.cudaErrors = cudaErrors;
  }

  /** Types the captured text and derives fields. */
  static Map<String, Object> typed(Map<String, String> raw) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (var e : raw.entrySet()) {
      String k = e.getKey();
      String v = e.getValue();
      switch (k) {
        case "kernel_path" ->
            // a Windows build's assert names its file with backslashes
            out.put(
                "kernel_file", v.substring(Math.max(v.lastIndexOf('/'), v.lastIndexOf('\\')) + 1));
        case "pci" -> out.put("pci", kernelPci(v));
        case "nccl_error_text" -> out.putIfAbsent("nccl_error", NcclResults.nameOf(v));
        case "cublas_status_code" -> out.putIfAbsent("cublas_status", CublasStatuses.nameOf(v));
        case "ran_for_s" -> {
          Long s = FieldValues.parseLong(v);
          if (s != null) {
            out.put("ran_for_ms", s * 1000);
          }
        }
        default -> out.put(k, FieldValues.typed(k, v));
      }
    }
    return out;
  }

  /** PCI addresses as the kernel log writes them: lower case, a 4-digit domain. */
  static String kernelPci(String v) {
    String[] parts = v.toLowerCase(Locale.ROOT).split(":");
    if (parts.length == 3 && parts[0].length() > 4) {
      parts[0] = parts[0].substring(parts[0].length() - 4);
    }
    return String.join(":", parts);
  }

  /** Completes cuda_error_name / cuda_error_code from whichever the text stated. */
  Optional<CudaError> resolveCudaError(Map<String, Object> f) {
    Optional<CudaError> e = Optional.empty();
    if (f.get("cuda_error_name") instanceof String name) {
      e = cudaErrors.byName(name);
    }
    if (e.isEmpty() && f.get("cuda_error_code") instanceof Long code) {
      e = cudaErrors.byCode(code.intValue());
    }
    Object text = f.remove("cuda_error_string");
    if (!(f.get("cuda_error_name") instanceof String) && text instanceof String s) {
      Optional<CudaError> byText = cudaErrors.byText(s);
      if (byText.isPresent() && e.isPresent() && byText.get() != e.get()) {
        // the number is from an older numbering (PyTorch 0.x's THC printed legacy codes, e.g. 4
        // for a launch failure): the text names the error, the stated number stays as stated
        return byText;
      }
      if (e.isEmpty()) {
        e = byText;
        if (e.isEmpty()) {
          f.putIfAbsent("message", s);
        }
      }
    }
    e.ifPresent(
        err -> {
          f.putIfAbsent("cuda_error_name", err.name());
          f.putIfAbsent("cuda_error_code", (long) err.code());
        });
    return e;
  }
}
