package dev.cudawatch.ingest.attribution;

/** One source of a followed file's job, rank and GPU; {@link AttributionChain} orders them. */
public interface FileSource {
  /** What this source knows of {@code file}: nulls where it knows nothing, {@code tried} always. */
  FileAttribution.Of of(String file);
}
