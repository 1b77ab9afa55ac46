package dev.cudawatch.diagnosis.catalog;

import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import java.util.List;

/**
 * Everything the classifier knows: signatures in priority order, their keyword automaton, and the
 * CUDA error table and the taxonomy. Immutable and shared by every stream.
 */
public final class Catalog {
  private final List<Signature> signatures;
  private final KeywordMatcher keywords;
  private final CudaErrorTable cudaErrors;
  private final LibraryStatusTable libraryStatuses;
  private final Taxonomy taxonomy;
  private final java.util.Map<String, Signature> byId = new java.util.HashMap<>();
  private StepTimeExtractor stepTimes =
      new StepTimeExtractor(List.of(), new KeywordMatcher(List.of(), 0));

  Catalog(
      List<Signature> signatures,
      KeywordMatcher keywords,
      CudaErrorTable cudaErrors,
      LibraryStatusTable libraryStatuses,
      Taxonomy taxonomy) {
    this.libraryStatuses = libraryStatuses;
    this.signatures = List.copyOf(signatures);
    this.keywords = keywords;
    this.cudaErrors = cudaErrors;
    this.taxonomy = taxonomy;
    for (Signature s : signatures) {
      byId.put(s.id(), s);
    }
  }

  /** Sets the step-time patterns, once, while loading. */
  Catalog withStepTimes(StepTimeExtractor s) {
    this.stepTimes = s;
    return this;
  }

  /** The step-time patterns (the catalog's {@code step_times} section). */
  public StepTimeExtractor stepTimes() {
    return stepTimes;
  }

  /** The signature with this id, or null. */
  public Signature signature(String id) {
    return byId.get(id);
  }

  /** The built-in catalog, plus any extra catalog files. */
  public static Catalog load(List<java.nio.file.Path> extraFiles) {
    return new CatalogLoader().load(extraFiles);
  }

  public static Catalog builtIn() {
    return load(List.of());
  }

  public List<Signature> signatures() {
    return signatures;
  }

  public KeywordMatcher keywords() {
    return keywords;
  }

  /** The CUDA libraries' status tables (library-statuses.yaml). */
  public LibraryStatusTable libraryStatuses() {
    return libraryStatuses;
  }

  public CudaErrorTable cudaErrors() {
    return cudaErrors;
  }

  public Taxonomy taxonomy() {
    return taxonomy;
  }
}
