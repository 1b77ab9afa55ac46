package dev.cudawatch.diagnosis.engine;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;

/**
 * What the classifier remembers of one stream between lines: open incidents, the episode's root,
 * and the current Python traceback. Small and bounded, so it can live in Flink keyed state.
 */
public final class StreamState implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Open incidents kept at most; the oldest is closed (emitted) beyond it. */
  static final int MAX_OPEN = 16;

  long lineNo;
  ArrayList<OpenIncident> open = new ArrayList<>();
  String rootId;
  String rootClass;
  long lastFailureLine = Long.MIN_VALUE / 2;
  String userFrame;
  long tracebackLine = Long.MIN_VALUE / 2;
  long droppedConsequences;
  StreamContext context;

  /**
   * Fields of the latest attach-only line that came before any incident it could join (NCCL prints
   * its version at start-up, the kernel names a GPU on the line before "fallen off the bus"): the
   * next incident of a class it attaches to, within the attach window, takes them.
   */
  LinkedHashMap<String, Object> preamble;

  /** The classes the preamble joins; empty for any. */
  LinkedHashSet<String> preambleFor;

  /** The preamble's line number. */
  long preambleLine;

  /** Inside a unified diff hunk ({@code @@ -a,b +c,d @@} and its context, + and - lines). */
  boolean inDiffHunk;

  /** Inside a unified diff hunk: the offline path replays skipped lines until it ends. */
  public boolean inDiffHunk() {
    return inDiffHunk;
  }

  public long lineNo() {
    return lineNo;
  }

  public boolean isIdle() {
    return open.isEmpty();
  }

  /** Lines seen that a consequence-only signature matched with no root before them. */
  public long droppedConsequences() {
    return droppedConsequences;
  }
}
