package dev.cudawatch.diagnosis.taxonomy;

import com.fasterxml.jackson.annotation.JsonProperty;

/** A class's part in the Xid correlation of the processor. */
public enum XidRole {
  /** Not correlated. */
  @JsonProperty("none")
  NONE,
  /** An application incident that takes a verdict from the Xids beside it. */
  @JsonProperty("gets_verdict")
  GETS_VERDICT,
  /** The kernel log's Xid events themselves. */
  @JsonProperty("xid")
  XID
}
