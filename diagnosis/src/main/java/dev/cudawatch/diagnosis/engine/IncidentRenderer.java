package dev.cudawatch.diagnosis.engine;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.advice.Advice;
import dev.cudawatch.diagnosis.advice.Advisor;
import dev.cudawatch.diagnosis.advice.SummaryTemplate;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.catalog.CudaError;
import dev.cudawatch.diagnosis.catalog.Signature;
import dev.cudawatch.diagnosis.taxonomy.IncidentClass;
import dev.cudawatch.diagnosis.taxonomy.XidRole;
import dev.cudawatch.diagnosis.taxonomy.XidVerdict;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Renders a settled incident for people: severity and suspect (the signature's, the CUDA error's,
 * the Xid's or the class's), summary, explanation and next steps.
 */
final class IncidentRenderer {
  private final Catalog catalog;
  private final Advisor advisor;
  private final StreamContext context;

  private static final String NCCL_ERROR = "nccl_error";
  private static final Pattern CUDA_FAILURE = Pattern.compile("Cuda failure (\\d{1,4})\\b");

  IncidentRenderer(Catalog catalog, Advisor advisor, StreamContext context) {
    this.catalog = catalog;
    this.advisor = advisor;
    this.context = context;
  }

  /** The CUDA error a NCCL failure's last error names, when it has a class of its own. */
  private CudaError cudaFailureUnder(Map<String, Object> fields) {
    Object last = fields.get("last_error");
    if (last == null) {
      return null;
    }
    Matcher m = CUDA_FAILURE.matcher(last.toString());
    if (!m.find()) {
      return null;
    }
    return catalog
        .cudaErrors()
        .byCode(Integer.parseInt(m.group(1)))
        // the job's own fault (an illegal access, an OOM); an environment's (no fabric
        // manager, a driver mismatch) stays NCCL's to report
        .filter(e -> !"cuda_error".equals(e.incidentClass()))
        .filter(e -> "application".equals(catalog.taxonomy().get(e.incidentClass()).suspect()))
        .orElse(null);
  }

  Incident render(OpenIncident c, Instant now) {
    Map<String, Object> fields = new LinkedHashMap<>(c.fields);
    if (c.preamble != null) {
      // after the incident's own fields, so a preamble never changes their order
      c.preamble.forEach(fields::putIfAbsent);
    }
    String suspect = c.suspect;
    String severity = c.severity;
    if (c.framework != null) {
      fields.putIfAbsent("framework", c.framework);
    }
    if (context.host() != null) {
      fields.putIfAbsent("host", context.host());
    }
    String job = c.job != null ? c.job : context.job();
    if (job != null) {
      fields.putIfAbsent("job", job);
    }
    Signature sig = catalog.signature(c.signatureId);
    // a library status's own suspect (a lost GPU: hardware) outranks its generic signature's
    boolean statusSuspect =
        c.suspect != null
            && sig != null
            && Signature.FROM_LIBRARY_STATUS.equals(sig.incidentClass());
    if (sig != null && sig.suspect() != null && !statusSuspect) {
      suspect = sig.suspect();
    }
    if (sig != null && sig.severity() != null) {
      severity = sig.severity();
    }
    String cls = c.incidentClass;
    // NCCL's "unhandled cuda error" names the CUDA failure under it ("Cuda failure 700 'an illegal
    // memory access was encountered'"): that failure is what happened, NCCL only carried it
    CudaError under = NCCL_ERROR.equals(cls) ? cudaFailureUnder(fields) : null;
    if (under != null) {
      cls = under.incidentClass();
      IncidentClass to = catalog.taxonomy().get(cls);
      // NCCL's own fields stay only where the class declares them; the CUDA error says the rest
      fields
          .keySet()
          .removeIf(
              k ->
                  !catalog.taxonomy().commonFields().contains(k)
                      && !to.fields().contains(k)
                      && !k.equals("host")
                      && !k.equals("job"));
      fields.putIfAbsent("cuda_error_name", under.name());
      fields.putIfAbsent("cuda_error_code", (long) under.code());
      suspect = under.suspect() != null ? under.suspect() : suspect;
      severity = under.severity() != null ? under.severity() : null;
    }
    IncidentClass klass = catalog.taxonomy().get(cls);
    if (klass.xidCorrelation() == XidRole.XID && fields.get("xid") instanceof Long x) {
      var e = catalog.taxonomy().xid(x.intValue());
      if (e.isPresent()) {
        severity = e.get().severity();
        if (e.get().verdict() != XidVerdict.INFORMATIONAL) {
          suspect = e.get().verdict().id();
        }
      }
    }
    Advice advice = advisor.advise(cls, fields);
    String template = sig != null ? sig.summary() : null;
    String summary = template != null ? SummaryTemplate.render(template, fields) : klass.title();
    if (klass.kernelLineQuoted()) {
      // the signature's severity and advice are the kernel's word; a quote has none
      severity = klass.severity();
      suspect = klass.suspect();
      summary = template != null ? klass.title() + ": " + summary : summary;
      sig = null;
    }
    // a site's own signature may bring its own advice (user catalogs); the built-in one is the
    // class's
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
    return Incident.builder(c.id, cls)
        .root(c.root, c.rootId)
        .count(c.count)
        .severity(severity != null ? severity : klass.severity())
        .suspect(suspect != null ? suspect : klass.suspect())
        .signature(c.signatureId)
        .fields(fields)
        .summary(summary)
        .explanation(explanation)
        .nextSteps(List.copyOf(steps))
        .host(context.host())
        .job(job)
        .source(context.source())
        .line(c.firstLine)
        .firstRecordId(c.firstRecordId)
        .eventTime(c.eventTime)
        .detectedTime(now)
        .excerpt(c.excerpt)
        .build();
  }
}
