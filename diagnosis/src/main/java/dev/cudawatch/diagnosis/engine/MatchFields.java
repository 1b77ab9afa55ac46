package dev.cudawatch.diagnosis.engine;

import dev.cudawatch.diagnosis.advice.FieldValues;
import dev.cudawatch.diagnosis.catalog.CudaError;
import dev.cudawatch.diagnosis.catalog.CudaErrorTable;
import dev.cudawatch.diagnosis.catalog.LibraryStatus;
import dev.cudawatch.diagnosis.catalog.LibraryStatusTable;
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
  /** The fields that name a library status, with the library they belong to. */
  private static final Map<String, String> NAME_FIELDS =
      Map.of(
          "library_status", "",
          "cublas_status", "cublas",
          "cudnn_status", "cudnn",
          "nccl_error", "nccl");

  private final CudaErrorTable cudaErrors;
  private final LibraryStatusTable libraryStatuses;

  MatchFields(CudaErrorTable cudaErrors, LibraryStatusTable libraryStatuses) {
    this.cudaErrors = cudaErrors;
    this.libraryStatuses = libraryStatuses;
  }

  /** Types the captured text and derives fields. */
  Map<String, Object> typed(Map<String, String> raw) {
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
        case "nccl_error_text" ->
            out.putIfAbsent(
                "nccl_error",
                libraryStatuses.byText("nccl", v).map(LibraryStatus::name).orElse(v.strip()));
        case "cublas_status_code" -> {
          Long n = FieldValues.parseLong(v.strip());
          out.putIfAbsent(
              "cublas_status",
              (n == null ? Optional.<LibraryStatus>empty() : libraryStatuses.byCode("cublas", n))
                  .map(LibraryStatus::name)
                  .orElse("CUBLAS_STATUS_" + v.strip()));
        }
        case "library" -> out.put("library", v.toLowerCase(Locale.ROOT));
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

  /**
   * The library status the fields name, by name, or by library and number or message; completes
   * {@code library} and {@code library_status_code} (and {@code library_status} where no library's
   * own field names it).
   */
  Optional<LibraryStatus> resolveLibraryStatus(Map<String, Object> f) {
    Object text = f.remove("library_status_text");
    Optional<LibraryStatus> s = Optional.empty();
    String field = null;
    for (var e : NAME_FIELDS.entrySet()) {
      if (f.get(e.getKey()) instanceof String name) {
        s = libraryStatuses.byName(name);
        if (s.isPresent()) {
          field = e.getKey();
          break;
        }
      }
    }
    if (s.isEmpty() && f.get("library") instanceof String lib) {
      if (f.get("library_status_code") instanceof Long code) {
        s = libraryStatuses.byCode(lib, code);
      } else if (text instanceof String t) {
        s = libraryStatuses.byText(lib, t);
      }
    }
    if (s.isPresent()) {
      LibraryStatus st = s.get();
      f.put("library", st.library());
      if (field == null || field.equals("library_status")) {
        f.putIfAbsent("library_status", st.name());
      }
      f.putIfAbsent("library_status_code", (long) st.code());
    }
    return s;
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
