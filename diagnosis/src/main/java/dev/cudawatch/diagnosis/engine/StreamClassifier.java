package dev.cudawatch.diagnosis.engine;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.advice.Advisor;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.catalog.CudaError;
import dev.cudawatch.diagnosis.catalog.LibraryStatus;
import dev.cudawatch.diagnosis.catalog.Role;
import dev.cudawatch.diagnosis.catalog.Signature;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Classifies the lines of one stream, in order, into incidents.
 *
 * <p>Lines of one failure are grouped: a multi-line traceback, a burst of identical device asserts,
 * the hint lines after an error. In a stream the first failure is the root; failures that follow it
 * within an episode are consequences ({@code root: false}) pointing at it. An incident is emitted
 * once it settles (no line added to it for a while) or on {@link #flush}.
 *
 * <p>This class does the prefilter, the matching and the episodes; its parts do one job each:
 * {@link MatchFields} types the captured fields, {@link Tracebacks} follows Python tracebacks for
 * the user's frame, {@link FrameworkSniffer} names the framework, and {@link IncidentRenderer}
 * renders a settled incident with its advice.
 */
public final class StreamClassifier {
  private static final java.util.Set<String> CONSEQUENCES =
      dev.cudawatch.diagnosis.taxonomy.Taxonomy.builtIn().consequenceClasses();
  private final Catalog catalog;
  private final StreamContext context;
  private final MatchFields matchFields;

  /** The catalog's generic library-status signature: what it cannot name is no incident. */
  private static final String GENERIC_LAYER = "library_status";

  private final Tracebacks tracebacks;
  private final IncidentRenderer renderer;
  private final ClassifierSettings settings;
  private final StreamState st;
  private final long[] mask;

  public StreamClassifier(
      Catalog catalog,
      Advisor advisor,
      StreamContext context,
      ClassifierSettings settings,
      StreamState state) {
    this.catalog = catalog;
    this.settings = settings;
    this.st = state;
    // A flush from a timer has no line at hand: it reuses the context of the stream's last line.
    if (context != null) {
      state.context = context;
    }
    this.context =
        context != null
            ? context
            : state.context != null ? state.context : new StreamContext(null, null, null);
    this.mask = new long[catalog.keywords().maskWords()];
    this.matchFields = new MatchFields(catalog.cudaErrors(), catalog.libraryStatuses());
    this.tracebacks = new Tracebacks(state, settings.frameWindowLines());
    this.renderer = new IncidentRenderer(catalog, advisor, this.context);
  }

  public StreamState state() {
    return st;
  }

  /** Takes the next line of the stream; returns the incidents that settled. */
  public List<Incident> accept(String raw, LineMeta meta, Instant now) {
    return accept(new PreparedLine(raw), meta, now);
  }

  /** Takes the next line, which may have been prepared on another thread. */
  public List<Incident> accept(PreparedLine line, LineMeta meta, Instant now) {
    long n = ++st.lineNo;
    List<Incident> out =
        st.open.isEmpty()
            ? List.of()
            : closeWhere(c -> n - c.lastLine > settings.settleLines(), now);
    String text = line.text();
    tracebacks.track(text, n);
    st.inDiffHunk = QuotedText.inDiffHunk(st.inDiffHunk, text);
    int[] candidates = line.candidates(catalog, mask);
    List<Signature> sigs = catalog.signatures();
    for (int k = 0; k < candidates.length; k++) {
      Map<String, String> raw2 = line.match(catalog, k);
      if (raw2 == null) {
        continue;
      }
      Signature sig = sigs.get(candidates[k]);
      if (st.inDiffHunk || QuotedText.isQuoted(text)) {
        return out;
      }
      if (sig.role() == Role.RESTART) {
        // a new process: what was open is complete, and its next failure is a root again
        out = append(out, flush(now));
        endEpisode();
        return out;
      }
      if (handle(sig, raw2, line, meta, n)) {
        if (st.open.size() > StreamState.MAX_OPEN) {
          out = append(out, closeWhere(c -> c == st.open.get(0), now));
        }
        return out;
      }
    }
    return out;
  }

  /**
   * Counts {@code lines} lines that {@link #accept} would only have counted: no keyword, no
   * traceback line, no diff hunk header, and the stream not inside a diff hunk (the caller checks
   * {@link StreamState#inDiffHunk}). Incidents they would have settled settle on the next line.
   */
  public void skipInert(long lines) {
    st.lineNo += lines;
  }

  /** Emits every open incident (end of input, or the stream went quiet). */
  public List<Incident> flush(Instant now) {
    return closeWhere(c -> true, now);
  }

  /** Forgets the episode's root: the next failure starts a new episode. */
  public void endEpisode() {
    st.rootId = null;
    st.rootClass = null;
  }

  // ------------------------------------------------------------------ matching

  private boolean handle(
      Signature sig, Map<String, String> rawFields, PreparedLine line, LineMeta meta, long n) {
    String text = line.text();
    Map<String, Object> fields = matchFields.typed(rawFields);
    Optional<CudaError> cudaError = matchFields.resolveCudaError(fields);
    boolean libraryNamed = fields.containsKey("library");
    Optional<LibraryStatus> libraryStatus = matchFields.resolveLibraryStatus(fields);
    if (libraryNamed && libraryStatus.isEmpty() && GENERIC_LAYER.equals(sig.id())) {
      return false; // a library's number or message the tables do not know names nothing
    }
    IncidentAttribution.apply(fields, line.normalized.rank(), meta);
    String exceptionType = line.exceptionType();
    if (exceptionType != null) {
      fields.putIfAbsent("exception_type", exceptionType);
    }

    if (sig.role() == Role.PREFIX) {
      fields.remove("exception_type");
      fields.remove(IncidentAttribution.FIELD);
      boolean live =
          st.preamble != null
              && n - st.preambleLine <= settings.attachWindowLines()
              && st.preambleFor.equals(new LinkedHashSet<>(sig.attachTo()));
      if (!live) {
        st.preamble = new LinkedHashMap<>();
        st.preambleFor = new LinkedHashSet<>(sig.attachTo());
      }
      st.preamble.putAll(fields);
      st.preambleLine = n;
      return false;
    }

    if (sig.role() == Role.ATTACH) {
      // ranks interleave in one stream: a rank's line joins only that rank's incident
      Object rank = fields.get("rank");
      OpenIncident target =
          latestOpen(
              c ->
                  (sig.attachTo().isEmpty() || sig.attachTo().contains(c.incidentClass))
                      && n - c.lastLine <= settings.attachWindowLines()
                      && (rank == null
                          || c.fields.get("rank") == null
                          || rank.equals(c.fields.get("rank"))));
      fields.remove("exception_type");
      fields.remove(IncidentAttribution.FIELD);
      if (target != null) {
        fields.remove("rank");
        target.fill(fields);
        target.lastLine = n;
        target.addExcerpt(text);
        return true;
      }
      if (sig.incidentClass() == null) {
        st.preamble = new LinkedHashMap<>(fields);
        st.preambleFor = new LinkedHashSet<>(sig.attachTo());
        st.preambleLine = n;
        return false;
      }
    }

    String cls = sig.incidentClass();
    if (Signature.FROM_CUDA_ERROR.equals(cls)) {
      cls = cudaError.map(CudaError::incidentClass).orElse("cuda_error");
    }
    if (Signature.FROM_LIBRARY_STATUS.equals(cls)) {
      cls = libraryStatus.map(LibraryStatus::incidentClass).orElse("cuda_library_error");
    }
    boolean episodeLive = st.rootId != null && n - st.lastFailureLine <= settings.episodeGapLines();
    if (sig.role() == Role.CONSEQUENCE && !episodeLive) {
      st.droppedConsequences++; // a launcher's summary alone names no failure
      return true;
    }
    if (Signature.FROM_ROOT.equals(cls)) {
      cls = st.rootClass;
    }
    boolean quoted = quotesKernel(cls, meta);
    if (quoted) {
      fields.put(QUOTED_CLASS, cls);
      cls = catalog.taxonomy().kernelLineQuoted();
      if (cls == null) {
        return true; // no class for it: a job's word on the hardware makes nothing
      }
    }
    // a quoted kernel line is recorded on its own: it neither starts nor joins an episode
    boolean event = sig.role() == Role.EVENT || quoted;
    final String klass = cls;
    OpenIncident same =
        latestOpen(
            c ->
                c.incidentClass.equals(klass)
                    && n - c.lastLine <= settings.mergeWindowLines()
                    && mergeable(c, sig, fields)
                    // a launcher's summary stays its own consequence, never part of the root
                    && (sig.role() != Role.CONSEQUENCE || sig.id().equals(c.signatureId)));
    if (same != null) {
      same.fill(fields);
      if (sig.id().equals(same.signatureId)) {
        same.count++;
      }
      same.lastLine = n;
      same.addExcerpt(text);
      tracebacks.addUserFrame(same);
      if (!event) {
        st.lastFailureLine = n;
      }
      return true;
    }

    OpenIncident inc = new OpenIncident();
    inc.incidentClass = cls;
    inc.signatureId = sig.id();
    inc.firstLine = n;
    inc.lastLine = n;
    inc.firstRecordId =
        meta != null && meta.recordId() != null ? meta.recordId() : context.source() + "@" + n;
    inc.eventTime = meta != null ? meta.eventTime() : null;
    inc.job = context.job();
    inc.id = incidentId(inc.firstRecordId, cls);
    inc.fields.putAll(fields);
    if (st.preamble != null
        && n - st.preambleLine <= settings.attachWindowLines()
        && (st.preambleFor.isEmpty() || st.preambleFor.contains(cls))) {
      inc.preamble = new LinkedHashMap<>(st.preamble);
    }
    inc.framework = sig.framework() != null ? sig.framework() : line.framework();
    cudaError.ifPresent(
        e -> {
          inc.suspect = e.suspect();
          inc.severity = e.severity();
        });
    if (Signature.FROM_LIBRARY_STATUS.equals(sig.incidentClass())) {
      libraryStatus.ifPresent(s -> inc.suspect = s.suspect());
    }
    inc.addExcerpt(text);
    tracebacks.addUserFrame(inc);
    if (event) {
      inc.root = true;
    } else {
      OpenIncident promoted = episodeLive ? consequenceRoot(cls) : null;
      if (promoted != null) {
        // processes share the stream: a NCCL error seen first is what another rank's real fault
        // did to this one; while it is still open, the fault takes its place as the root
        inc.root = true;
        String old = st.rootId;
        st.rootId = inc.id;
        st.rootClass = cls;
        for (OpenIncident o : st.open) {
          if (o == promoted || old.equals(o.rootId)) {
            o.root = false;
            o.rootId = inc.id;
          }
        }
      } else if (episodeLive) {
        inc.root = false;
        inc.rootId = st.rootId;
      } else {
        inc.root = true;
        st.rootId = inc.id;
        st.rootClass = cls;
      }
      st.lastFailureLine = n;
    }
    st.open.add(inc);
    return true;
  }

  /**
   * The episode's root, when it is still open, of a class that is what a rank reports when another
   * failed (taxonomy.yaml's {@code job_role: consequence}) while {@code cls} is not.
   */
  private OpenIncident consequenceRoot(String cls) {
    if (CONSEQUENCES.contains(cls)) {
      return null;
    }
    for (OpenIncident o : st.open) {
      if (o.id.equals(st.rootId) && o.root && CONSEQUENCES.contains(o.incidentClass)) {
        return o;
      }
    }
    return null;
  }

  /** The field of a quoted kernel line's incident that names the class the kernel's would have. */
  public static final String QUOTED_CLASS = "quoted_class";

  /**
   * Whether a line of a kernel-log class came from anything but a kernel source: the processor's
   * lines carry their source ({@link LineMeta#fromKernel}); offline ({@code classify}, no meta) the
   * person chose the file, so its kernel lines stand.
   */
  private boolean quotesKernel(String cls, LineMeta meta) {
    return meta != null
        && !meta.fromKernel()
        && catalog.taxonomy().find(cls).map(c -> c.kernelLog()).orElse(false);
  }

  /** Two matches are one incident unless a merge_on field differs. */
  private static boolean mergeable(OpenIncident c, Signature sig, Map<String, Object> fields) {
    for (String k : sig.mergeOn()) {
      Object a = c.fields.get(k);
      Object b = fields.get(k);
      if (a != null && b != null && !a.equals(b)) {
        return false;
      }
    }
    return true;
  }

  private OpenIncident latestOpen(Predicate<OpenIncident> p) {
    for (int i = st.open.size() - 1; i >= 0; i--) {
      if (p.test(st.open.get(i))) {
        return st.open.get(i);
      }
    }
    return null;
  }

  // ------------------------------------------------------------------ emitting

  private List<Incident> closeWhere(Predicate<OpenIncident> p, Instant now) {
    List<OpenIncident> closing = new ArrayList<>();
    st.open.removeIf(
        c -> {
          if (p.test(c)) {
            closing.add(c);
            return true;
          }
          return false;
        });
    if (closing.isEmpty()) {
      return List.of();
    }
    closing.sort(Comparator.comparingLong(c -> c.firstLine));
    List<Incident> out = new ArrayList<>(closing.size());
    for (OpenIncident c : closing) {
      out.add(renderer.render(c, now));
    }
    return out;
  }

  private String incidentId(String firstRecordId, String cls) {
    long h = 0xcbf29ce484222325L;
    String key = context.host() + "|" + context.source() + "|" + firstRecordId + "|" + cls;
    for (int i = 0; i < key.length(); i++) {
      h ^= key.charAt(i);
      h *= 0x100000001b3L;
    }
    String hex = Long.toHexString(h); // String.format's parser costs more than the hash
    return "0".repeat(16 - hex.length()) + hex;
  }

  private static <T> List<T> append(List<T> a, List<T> b) {
    if (b.isEmpty()) {
      return a;
    }
    List<T> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }
}
