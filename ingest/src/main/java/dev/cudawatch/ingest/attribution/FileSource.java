package dev.cudawatch.ingest.attribution;

/** One source of a followed file's job, rank and GPU; {@link AttributionChain} orders them. */
public interface FileSource {
  /**
   * What this source knows of {@code file} now: nulls where it knows nothing, {@code tried} always.
   * Never blocks: a slow lookup it needs runs elsewhere ({@link Lookups}) and a later call sees it.
   */
  FileAttribution.Of of(String file);

  /**
   * Starts this source's first lookups (elsewhere) and says whether they have answered: the agent
   * waits, briefly, at start for what the files already there need.
   */
  default boolean primed() {
    return true;
  }

  /** Whether a lookup that may tell more of {@code file} has not answered yet. */
  default boolean pending(String file) {
    return false;
  }
}
