package dev.cudawatch.ingest.streams;

/** Test access to the kernel record parser. */
public final class KernelLogSourceAccess {
  private KernelLogSourceAccess() {}

  public static String message(String rec) {
    return KernelLogSource.message(rec);
  }
}
