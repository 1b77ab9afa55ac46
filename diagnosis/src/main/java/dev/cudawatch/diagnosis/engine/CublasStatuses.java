package dev.cudawatch.diagnosis.engine;

import java.util.Map;

/**
 * cuBLAS's cublasStatus_t values (cublas_api.h) by number, for messages that print only the number.
 */
final class CublasStatuses {
  private static final Map<String, String> BY_NUMBER =
      Map.of(
          "1", "CUBLAS_STATUS_NOT_INITIALIZED",
          "3", "CUBLAS_STATUS_ALLOC_FAILED",
          "7", "CUBLAS_STATUS_INVALID_VALUE",
          "8", "CUBLAS_STATUS_ARCH_MISMATCH",
          "11", "CUBLAS_STATUS_MAPPING_ERROR",
          "13", "CUBLAS_STATUS_EXECUTION_FAILED",
          "14", "CUBLAS_STATUS_INTERNAL_ERROR",
          "15", "CUBLAS_STATUS_NOT_SUPPORTED",
          "16", "CUBLAS_STATUS_LICENSE_ERROR");

  private CublasStatuses() {}

  /** The status name for a number cuBLAS returned; an unknown number stays as written. */
  static String nameOf(String number) {
    String n = number.strip();
    return BY_NUMBER.getOrDefault(n, "CUBLAS_STATUS_" + n);
  }
}
