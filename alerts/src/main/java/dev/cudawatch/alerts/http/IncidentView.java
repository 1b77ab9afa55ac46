package dev.cudawatch.alerts.http;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.diagnosis.taxonomy.IncidentClass;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
import dev.cudawatch.diagnosis.taxonomy.XidInfo;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An incident as the page's templates see it: plain strings (escaped by the template), times in UTC
 * whatever the server's zone, class titles from the taxonomy.
 */
final class IncidentView {
  static final Taxonomy TAXONOMY = Taxonomy.builtIn();
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'").withZone(ZoneOffset.UTC);

  private IncidentView() {}

  /** The class's title ("CUDA out of memory"), or its id for a class the taxonomy lacks. */
  static String title(Incident i) {
    return TAXONOMY.find(i.incidentClass()).map(IncidentClass::title).orElse(i.incidentClass());
  }

  /** A field as text, or null. */
  static String field(Incident i, String name) {
    Object v = i.fields().get(name);
    return v == null ? null : v.toString();
  }

  static String time(Instant t) {
    return t == null ? "" : TIME.format(t.truncatedTo(ChronoUnit.SECONDS));
  }

  /** A row of an incident table. */
  static Map<String, Object> row(Incident i) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("link", "/incident?id=" + IncidentPages.enc(i.id()));
    m.put("time", time(when(i)));
    m.put("severity", nz(i.severity()));
    m.put("classTitle", title(i));
    m.put("class", i.incidentClass());
    m.put("host", nz(i.host()));
    m.put("gpu", nz(field(i, "gpu")));
    m.put("job", nz(i.job()));
    m.put("rank", nz(field(i, "rank")));
    m.put("summary", nz(i.summary()));
    return m;
  }

  /** A row of the related-Xids table: the code and what the taxonomy says it means. */
  static Map<String, Object> xidRow(Incident i) {
    Map<String, Object> m = row(i);
    String xid = field(i, "xid");
    m.put("xid", nz(xid));
    String meaning = "";
    try {
      meaning =
          xid == null
              ? ""
              : TAXONOMY
                  .xid((int) Double.parseDouble(xid))
                  .map(XidInfo::meaning)
                  .orElse("not in the Xid catalog");
    } catch (NumberFormatException e) {
      meaning = "not a number";
    }
    m.put("meaning", meaning);
    return m;
  }

  /** Everything of the incident page but its neighbours. */
  static Map<String, Object> detail(Incident i) {
    Map<String, Object> m = row(i);
    m.put("id", i.id());
    m.put("suspect", nz(i.suspect()));
    m.put("explanation", nz(i.explanation()));
    m.put("nextSteps", i.nextSteps());
    m.put("hasNextSteps", !i.nextSteps().isEmpty());
    m.put("excerpt", String.join("\n", i.excerpt()));
    m.put("hasExcerpt", !i.excerpt().isEmpty());
    m.put("eventTime", time(i.eventTime()));
    m.put("detectedTime", time(i.detectedTime()));
    m.put("source", nz(i.source()));
    m.put("line", i.line());
    m.put("count", i.count());
    m.put("signature", nz(i.signature()));
    m.put("verdict", nz(i.verdict()));
    m.put("root", i.root());
    List<Map<String, String>> fields = new ArrayList<>();
    i.fields()
        .forEach(
            (k, v) ->
                fields.add(
                    Map.of(
                        "name",
                        k,
                        "value",
                        v instanceof Map<?, ?> || v instanceof List<?>
                            ? WireJson.toJson(v)
                            : String.valueOf(v))));
    m.put("fields", fields);
    m.put("hasFields", !fields.isEmpty());
    return m;
  }

  private static Instant when(Incident i) {
    return i.eventTime() != null ? i.eventTime() : i.detectedTime();
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }
}
