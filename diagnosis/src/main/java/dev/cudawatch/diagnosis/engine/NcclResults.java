package dev.cudawatch.diagnosis.engine;

import java.util.Locale;
import java.util.Map;

/** NCCL's result codes by the text ncclGetErrorString prints. */
final class NcclResults {
  private static final Map<String, String> BY_TEXT =
      Map.of(
          "unhandled cuda error", "ncclUnhandledCudaError",
          "unhandled system error", "ncclSystemError",
          "internal error", "ncclInternalError",
          "invalid argument", "ncclInvalidArgument",
          "invalid usage", "ncclInvalidUsage",
          "remote process exited or there was a network error", "ncclRemoteError",
          "nccl operation in progress", "ncclInProgress");

  private NcclResults() {}

  static String nameOf(String text) {
    return BY_TEXT.getOrDefault(text.strip().toLowerCase(Locale.ROOT), text);
  }
}
