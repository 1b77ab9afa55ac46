package dev.cudawatch.diagnosis.taxonomy;

import com.fasterxml.jackson.annotation.JsonProperty;

/** Who an Xid blames: the verdict the Xid correlation gives an incident beside it. */
public enum XidVerdict {
  /** The process faulted; the GPU is healthy. */
  @JsonProperty("application")
  APPLICATION,
  /** The GPU, its memory or its links failed. */
  @JsonProperty("hardware")
  HARDWARE,
  /** The driver, its firmware or GSP failed. */
  @JsonProperty("driver")
  DRIVER,
  /** Informs (an injected error, a test message, an unused code): blames nobody. */
  @JsonProperty("informational")
  INFORMATIONAL;

  public String id() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
