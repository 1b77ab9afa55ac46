package dev.cudawatch.diagnosis.taxonomy;

import com.fasterxml.jackson.annotation.JsonProperty;

/** A class's part in a failed job's story, when a job's incidents are grouped into one failure. */
public enum JobRole {
  /** It can be what made the job fail. */
  @JsonProperty("root")
  ROOT,
  /**
   * What a rank reports when another rank failed (a collective that timed out, a communicator
   * aborted because a peer died): the root cause only when nothing else is.
   */
  @JsonProperty("consequence")
  CONSEQUENCE
}
