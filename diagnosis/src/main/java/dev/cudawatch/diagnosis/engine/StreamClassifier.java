package dev.cudawatch.diagnosis.engine;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.catalog.CudaError;
import dev.cudawatch.diagnosis.catalog.Role;
import dev.cudawatch.diagnosis.catalog.Signature;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
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
 */
public final class StreamClassifier {
  private static final Pattern EXCEPTION_TYPE =
      Pattern.compile(
          "^\\s*((?:[A-Za-z_]\\w*\\.)*[A-Za-z_]\\w*(?:Error|Exception|Failure))(?::|$)");

  private final Catalog catalog;
  private final Advisor advisor;
  private final StreamContext context;
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
    this.advisor = advisor;
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
  }

  public StreamState state() {
    return st;
  }

  /** Takes the next line of the stream; returns the incidents that settled. */
  public List<Incident> accept(String raw, LineMeta meta, Instant now) {
    long n = ++st.lineNo;
    List<Incident> out =
        st.open.isEmpty()
            ? List.of()
            : closeWhere(c -> n - c.lastLine > settings.settleLines(), now);
    NormalizedLine nl = LineNormalizer.normalize(raw);
    String text = nl.text();
    trackTraceback(text, n);
    Arrays.fill(mask, 0L);
    if (!catalog.keywords().scan(text, mask)) {
      return out;
    }
    List<Signature> sigs = catalog.signatures();
    for (int w = 0; w < mask.length; w++) {
      long bits = mask[w];
      while (bits != 0) {
        int i = (w << 6) + Long.numberOfTrailingZeros(bits);
        bits &= bits - 1;
        Signature sig = sigs.get(i);
        Map<String, String> raw2 = sig.match(text);
        if (raw2 != null && sig.role() == Role.RESTART) {
          // a new process: what was open is complete, and its next failure is a root again
          out = append(out, flush(now));
          endEpisode();
          return out;
        }
        if (raw2 != null && handle(sig, raw2, text, nl.rank(), meta, n)) {
          if (st.open.size() > StreamState.MAX_OPEN) {
            out = append(out, closeWhere(c -> c == st.open.get(0), now));
          }
          return out;
        }
      }
    }
    return out;
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
      Signature sig,
      Map<String, String> rawFields,
      String text,
      Integer prefixRank,
      LineMeta meta,
      long n) {
    Map<String, Object> fields = typed(rawFields);
    Optional<CudaError> cudaError = resolveCudaError(fields);
    Attribution.apply(fields, prefixRank, meta);
    Matcher et = EXCEPTION_TYPE.matcher(text);
    if (et.find()) {
      fields.putIfAbsent("exception_type", et.group(1));
    }

    if (sig.role() == Role.ATTACH) {
      OpenIncident target =
          latestOpen(
              c ->
                  (sig.attachTo().isEmpty() || sig.attachTo().contains(c.incidentClass))
                      && n - c.lastLine <= settings.attachWindowLines());
      if (target != null) {
        fields.remove("rank");
        fields.remove("exception_type");
        fields.remove(Attribution.FIELD);
        target.fill(fields);
        target.lastLine = n;
        target.addExcerpt(text);
        return true;
      }
      if (sig.incidentClass() == null) {
        return false;
      }
    }

    String cls = sig.incidentClass();
    if (Signature.FROM_CUDA_ERROR.equals(cls)) {
      cls = cudaError.map(CudaError::incidentClass).orElse("cuda_error");
    }
    boolean episodeLive = st.rootId != null && n - st.lastFailureLine <= settings.episodeGapLines();
    if (Signature.FROM_ROOT.equals(cls)) {
      if (!episodeLive) {
        st.droppedConsequences++;
        return true;
      }
      cls = st.rootClass;
    }
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
      addUserFrame(same);
      if (sig.role() != Role.EVENT) {
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
    inc.id = incidentId(inc.firstRecordId, cls);
    inc.fields.putAll(fields);
    inc.framework = sig.framework() != null ? sig.framework() : detectFramework(text);
    cudaError.ifPresent(
        e -> {
          if (e.suspect() != null) inc.fields.putIfAbsent("_suspect", e.suspect());
          if (e.severity() != null) inc.fields.putIfAbsent("_severity", e.severity());
        });
    inc.addExcerpt(text);
    addUserFrame(inc);
    if (sig.role() == Role.EVENT) {
      inc.root = true;
    } else {
      if (episodeLive) {
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

  /** Types the captured text and derives fields: kernel_file from a path, NCCL names from text. */
  private static Map<String, Object> typed(Map<String, String> raw) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (var e : raw.entrySet()) {
      String k = e.getKey();
      String v = e.getValue();
      switch (k) {
        case "kernel_path" -> out.put("kernel_file", v.substring(v.lastIndexOf('/') + 1));
        case "pci" -> out.put("pci", kernelPci(v));
        case "nccl_error_text" -> out.putIfAbsent("nccl_error", NcclResults.nameOf(v));
        case "ran_for_s" -> {
          Long s = FieldValues.parseLong(v);
          if (s != null) {
            out.put("ran_for_ms", s * 1000);
          }
        }
        default -> out.put(k, FieldValues.typed(k, v));
      }
    }
    return out;
  }

  /** PCI addresses as the kernel log writes them: lower case, a 4-digit domain. */
  static String kernelPci(String v) {
    String[] parts = v.toLowerCase(java.util.Locale.ROOT).split(":");
    if (parts.length == 3 && parts[0].length() > 4) {
      parts[0] = parts[0].substring(parts[0].length() - 4);
    }
    return String.join(":", parts);
  }

  /** Completes cuda_error_name / cuda_error_code from whichever the text stated. */
  private Optional<CudaError> resolveCudaError(Map<String, Object> f) {
    Optional<CudaError> e = Optional.empty();
    if (f.get("cuda_error_name") instanceof String name) {
      e = catalog.cudaErrors().byName(name);
    }
    if (e.isEmpty() && f.get("cuda_error_code") instanceof Long code) {
      e = catalog.cudaErrors().byCode(code.intValue());
    }
    Object text = f.remove("cuda_error_string");
    if (e.isEmpty() && text instanceof String s) {
      e = catalog.cudaErrors().byText(s);
      if (e.isEmpty()) {
        f.putIfAbsent("message", s);
      }
    }
    e.ifPresent(
        err -> {
          f.putIfAbsent("cuda_error_name", err.name());
          f.putIfAbsent("cuda_error_code", (long) err.code());
        });
    return e;
  }

  // ------------------------------------------------------------------ tracebacks

  private void trackTraceback(String text, long n) {
    int i = 0;
    int len = text.length();
    while (i < len && text.charAt(i) == ' ') {
      i++;
    }
    if (i >= len) {
      return;
    }
    char c = text.charAt(i);
    if (c == 'T' && text.startsWith("Traceback (most recent call last)", i)) {
      st.userFrame = null;
      st.tracebackLine = n;
    } else if (c == 'F' && text.startsWith("File \"", i)) {
      int q = text.indexOf('"', i + 6);
      if (q < 0) {
        return;
      }
      String path = text.substring(i + 6, q);
      int l = text.indexOf(", line ", q);
      if (l < 0) {
        return;
      }
      int d = l + 7;
      int e = d;
      while (e < len && Character.isDigit(text.charAt(e))) {
        e++;
      }
      if (e > d && isUserPath(path)) {
        st.userFrame = path + ":" + text.substring(d, e);
        if (st.tracebackLine < n - settings.frameWindowLines()) {
          st.tracebackLine = n; // frames without a header (a truncated log)
        }
      }
    }
  }

  static boolean isUserPath(String path) {
    return !(path.startsWith("<")
        || path.endsWith(".pyx")
        || path.contains("site-packages")
        || path.contains("dist-packages")
        || path.contains("/lib/python")
        || path.contains("/lib64/python")
        || path.contains("\\Lib\\"));
  }

  private void addUserFrame(OpenIncident inc) {
    if (st.userFrame != null && st.tracebackLine >= inc.firstLine - settings.frameWindowLines()) {
      inc.fields.putIfAbsent("user_frame", st.userFrame);
    }
  }

  private static String detectFramework(String text) {
    if (text.contains("torch") || text.contains("PyTorch") || text.contains("c10::")) {
      return "pytorch";
    }
    if (text.contains("cupy")) {
      return "cupy";
    }
    if (text.contains("jax") || text.contains("Xla") || text.contains("XLA")) {
      return "jax";
    }
    if (text.contains("tensorflow")) {
      return "tensorflow";
    }
    if (text.contains("Triton") || text.contains("triton")) {
      return "triton";
    }
    if (text.contains("NCCL") || text.contains("nccl")) {
      return "nccl";
    }
    if (text.contains("NVRM")) {
      return "driver";
    }
    Matcher m = EXCEPTION_TYPE.matcher(text);
    if (m.find() && (m.group(1).indexOf('.') < 0 || m.group(1).startsWith("torch."))) {
      // "RuntimeError: CUDA error: ..." with no other framework named is PyTorch's wording
      return "pytorch";
    }
    if (text.contains("numba")) {
      return "cuda";
    }
    if (text.contains("CUDA error")
        || text.contains("cudaError")
        || text.contains("CUDA_ERROR_")
        || text.contains("GPUassert")) {
      return "cuda";
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
      out.add(toIncident(c, now));
    }
    return out;
  }

  private Incident toIncident(OpenIncident c, Instant now) {
    Map<String, Object> fields = new LinkedHashMap<>(c.fields);
    String suspect = (String) fields.remove("_suspect");
    String severity = (String) fields.remove("_severity");
    if (c.framework != null) {
      fields.putIfAbsent("framework", c.framework);
    }
    if (context.host() != null) {
      fields.putIfAbsent("host", context.host());
    }
    if (context.job() != null) {
      fields.putIfAbsent("job", context.job());
    }
    Signature sig = catalog.signature(c.signatureId);
    if (sig != null && sig.suspect() != null) {
      suspect = sig.suspect();
    }
    if (sig != null && sig.severity() != null) {
      severity = sig.severity();
    }
    if ("gpu_xid".equals(c.incidentClass) && fields.get("xid") instanceof Long x) {
      var e = catalog.xids().get(x.intValue());
      if (e.isPresent()) {
        suspect = e.get().suspect();
        severity = e.get().severity();
      }
    }
    suspect = suspect != null ? suspect : ClassDefaults.suspect(c.incidentClass);
    severity = severity != null ? severity : ClassDefaults.severity(c.incidentClass);
    Advice advice = advisor.advise(c.incidentClass, fields);
    String template = sig != null ? sig.summary() : null;
    String summary =
        template != null
            ? SummaryTemplate.render(template, fields)
            : ClassDefaults.title(c.incidentClass);
    String explanation =
        sig != null && sig.explanation() != null ? sig.explanation() : advice.explanation();
    LinkedHashSet<String> steps = new LinkedHashSet<>(advice.nextSteps());
    if (sig != null) {
      steps.addAll(sig.nextSteps());
    }
    if (!c.root) {
      explanation =
          "A consequence of an earlier failure in this stream ("
              + c.rootId
              + "): fix that one first. "
              + explanation;
    }
    return new Incident(
        WireJson.VERSION,
        c.id,
        c.incidentClass,
        c.root,
        c.rootId,
        c.count,
        severity,
        suspect,
        c.signatureId,
        fields,
        summary,
        explanation,
        List.copyOf(steps),
        context.host(),
        context.job(),
        context.source(),
        c.firstLine,
        c.firstRecordId,
        c.eventTime,
        now,
        c.excerpt,
        null);
  }

  private String incidentId(String firstRecordId, String cls) {
    long h = 0xcbf29ce484222325L;
    String key = context.host() + "|" + context.source() + "|" + firstRecordId + "|" + cls;
    for (int i = 0; i < key.length(); i++) {
      h ^= key.charAt(i);
      h *= 0x100000001b3L;
    }
    return String.format("%016x", h);
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
