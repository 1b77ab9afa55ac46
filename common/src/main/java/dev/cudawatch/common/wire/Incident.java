package dev.cudawatch.common.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A diagnosed failure: one class of {@code shared/spec/TAXONOMY.md}, its fields, and what to do.
 *
 * @param v wire version
 * @param id stable id: the stream and the record id of the incident's first line
 * @param incidentClass the taxonomy class ({@code cuda_oom}, {@code gpu_xid}, ...)
 * @param root true when this is the first failure of its stream's episode
 * @param rootId the root incident's id when {@code root} is false
 * @param count how many lines of the same signature it stands for (bursts become one incident)
 * @param severity critical, error, warning
 * @param suspect application, hardware, environment, infrastructure, framework
 * @param signature id of the catalog signature that matched first
 * @param fields taxonomy fields stated by the text (sizes in bytes, durations in ms)
 * @param summary one line a person reads first
 * @param explanation why it happens, specific to the fields
 * @param nextSteps what to do, most useful first
 * @param host node
 * @param job job id or null
 * @param source the stream's source (path or name)
 * @param line 1-based line number of the first line in its stream
 * @param firstRecordId record id of the first line
 * @param eventTime when the first line was written
 * @param detectedTime when the classifier emitted it
 * @param excerpt the lines that matched, capped
 * @param verdict fleet verdict added by correlation (e.g. {@code application_fault}), or null
 */
public record Incident(
    int v,
    String id,
    @JsonProperty("class") String incidentClass,
    boolean root,
    String rootId,
    int count,
    String severity,
    String suspect,
    String signature,
    Map<String, Object> fields,
    String summary,
    String explanation,
    List<String> nextSteps,
    String host,
    String job,
    String source,
    long line,
    String firstRecordId,
    Instant eventTime,
    Instant detectedTime,
    List<String> excerpt,
    String verdict) {

  public Incident {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(incidentClass, "class");
    fields = fields == null ? Map.of() : fields;
    nextSteps = nextSteps == null ? List.of() : List.copyOf(nextSteps);
    excerpt = excerpt == null ? List.of() : List.copyOf(excerpt);
    if (count <= 0) {
      count = 1;
    }
  }

  /** The same incident with a fleet verdict attached. */
  public Incident withVerdict(String newVerdict) {
    return toBuilder().verdict(newVerdict).build();
  }

  /**
   * The same incident with more fields and a first next step, from what the fleet knew before it
   * (e.g. the GPU's memory trend before an OOM).
   */
  public Incident withContext(Map<String, Object> moreFields, String firstStep) {
    Map<String, Object> f = new java.util.LinkedHashMap<>(fields);
    f.putAll(moreFields);
    List<String> steps = new java.util.ArrayList<>();
    steps.add(firstStep);
    steps.addAll(nextSteps);
    return toBuilder().fields(f).nextSteps(steps).build();
  }

  /**
   * The same incident attributed to {@code newJob}, learnt from {@code how} (e.g. the job that held
   * a kernel Xid's GPU), recorded under {@code attribution.job} in its fields.
   */
  public Incident withJob(String newJob, String how) {
    Map<String, Object> f = new java.util.LinkedHashMap<>(fields);
    Map<String, Object> attr = new java.util.LinkedHashMap<>();
    if (f.get("attribution") instanceof Map<?, ?> m) {
      m.forEach((k, val) -> attr.put(String.valueOf(k), val));
    }
    attr.put("job", how);
    f.put("attribution", attr);
    return toBuilder().fields(f).job(newJob).build();
  }

  /** A builder holding every part of this incident, its wire version included. */
  public Builder toBuilder() {
    Builder b =
        builder(id, incidentClass)
            .root(root, rootId)
            .count(count)
            .severity(severity)
            .suspect(suspect)
            .signature(signature)
            .fields(fields)
            .summary(summary)
            .explanation(explanation)
            .nextSteps(nextSteps)
            .host(host)
            .job(job)
            .source(source)
            .line(line)
            .firstRecordId(firstRecordId)
            .eventTime(eventTime)
            .detectedTime(detectedTime)
            .excerpt(excerpt)
            .verdict(verdict);
    b.v = v;
    return b;
  }

  /** Starts an incident of this id and class; parts not set stay null, empty, or a count of 1. */
  public static Builder builder(String id, String incidentClass) {
    return new Builder(id, incidentClass);
  }

  /** Builds an {@link Incident} part by part, instead of its 22 positional arguments. */
  public static final class Builder {
    private int v = WireJson.VERSION;
    private final String id;
    private final String incidentClass;
    private boolean root = true;
    private String rootId;
    private int count = 1;
    private String severity;
    private String suspect;
    private String signature;
    private Map<String, Object> fields;
    private String summary;
    private String explanation;
    private List<String> nextSteps;
    private String host;
    private String job;
    private String source;
    private long line;
    private String firstRecordId;
    private Instant eventTime;
    private Instant detectedTime;
    private List<String> excerpt;
    private String verdict;

    private Builder(String id, String incidentClass) {
      this.id = id;
      this.incidentClass = incidentClass;
    }

    /** Whether it is its stream's root failure, and if not, the root's id. */
    public Builder root(boolean isRoot, String rootIncidentId) {
      this.root = isRoot;
      this.rootId = rootIncidentId;
      return this;
    }

    public Builder count(int n) {
      this.count = n;
      return this;
    }

    public Builder severity(String s) {
      this.severity = s;
      return this;
    }

    public Builder suspect(String s) {
      this.suspect = s;
      return this;
    }

    public Builder signature(String s) {
      this.signature = s;
      return this;
    }

    public Builder fields(Map<String, Object> f) {
      this.fields = f;
      return this;
    }

    public Builder summary(String s) {
      this.summary = s;
      return this;
    }

    public Builder explanation(String s) {
      this.explanation = s;
      return this;
    }

    public Builder nextSteps(List<String> s) {
      this.nextSteps = s;
      return this;
    }

    public Builder host(String h) {
      this.host = h;
      return this;
    }

    public Builder job(String j) {
      this.job = j;
      return this;
    }

    public Builder source(String s) {
      this.source = s;
      return this;
    }

    public Builder line(long l) {
      this.line = l;
      return this;
    }

    public Builder firstRecordId(String r) {
      this.firstRecordId = r;
      return this;
    }

    public Builder eventTime(Instant t) {
      this.eventTime = t;
      return this;
    }

    public Builder detectedTime(Instant t) {
      this.detectedTime = t;
      return this;
    }

    public Builder excerpt(List<String> e) {
      this.excerpt = e;
      return this;
    }

    public Builder verdict(String v) {
      this.verdict = v;
      return this;
    }

    public Incident build() {
      return new Incident(
          v,
          id,
          incidentClass,
          root,
          rootId,
          count,
          severity,
          suspect,
          signature,
          fields,
          summary,
          explanation,
          nextSteps,
          host,
          job,
          source,
          line,
          firstRecordId,
          eventTime,
          detectedTime,
          excerpt,
          verdict);
    }
  }
}
