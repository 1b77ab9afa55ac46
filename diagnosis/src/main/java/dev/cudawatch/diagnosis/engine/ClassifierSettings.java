package dev.cudawatch.diagnosis.engine;

/**
 * How far apart, in lines of one stream, related lines may be.
 *
 * @param settleLines an incident is emitted once this many lines passed without adding to it
 * @param mergeWindowLines a match joins an open incident of its class within this distance
 * @param attachWindowLines an attach-only line enriches an incident within this distance
 * @param episodeGapLines after this many lines without a failure, the next failure is a new root
 * @param frameWindowLines a traceback's user frame belongs to an incident this close to it
 */
public record ClassifierSettings(
    int settleLines,
    int mergeWindowLines,
    int attachWindowLines,
    int episodeGapLines,
    int frameWindowLines)
    implements java.io.Serializable {

  public static ClassifierSettings defaults() {
    return new ClassifierSettings(60, 400, 40, 5000, 200);
  }
}
