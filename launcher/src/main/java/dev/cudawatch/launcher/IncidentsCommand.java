package dev.cudawatch.launcher;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cudawatch.common.cli.Cli;
import dev.cudawatch.common.cli.LogOptions;
import dev.cudawatch.common.http.DefaultPorts;
import dev.cudawatch.common.wire.WireJson;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code cudawatch incidents}: the incidents a running alerts service holds, filtered on the server
 * (its {@code /api/incidents}), as {@code amtool alert query} does for Alertmanager.
 */
@Command(
    name = "incidents",
    description = {
      "Query the incidents of a running alerts service (GET /api/incidents), newest first.",
      "A table by default; --json prints the API's incident objects, one per line."
    },
    exitCodeListHeading = "%nExit status:%n",
    exitCodeList = {"0:the query ran", "1:the service could not be reached or refused the query"})
public final class IncidentsCommand implements Callable<Integer> {
  private static final Pattern DURATION = Pattern.compile("(\\d+)([smhd])");
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

  @CommandLine.Mixin LogOptions logOptions;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--url",
      paramLabel = "URL",
      defaultValue = "${env:CUDAWATCH_URL:-" + DefaultPorts.ALERTS_LOCAL_URL + "}",
      description = "the alerts service (default: $CUDAWATCH_URL, else ${DEFAULT-VALUE})")
  String url;

  @Option(names = "--host", paramLabel = "HOST", description = "only this host")
  String host;

  @Option(names = "--class", paramLabel = "CLASS", description = "only this incident class")
  String incidentClass;

  @Option(names = "--job", paramLabel = "JOB", description = "only this job")
  String job;

  @Option(
      names = "--since",
      paramLabel = "AGE|TIME",
      description = "only incidents from the last AGE (30s, 10m, 1h, 2d) or since an ISO-8601 TIME")
  String since;

  @Option(
      names = "--limit",
      defaultValue = "100",
      description = "at most this many (default: ${DEFAULT-VALUE}, at most 1000)")
  int limit;

  @Option(names = "--json", description = "one JSON incident per line")
  boolean json;

  private final Clock clock;

  public IncidentsCommand() {
    this(Clock.systemUTC());
  }

  IncidentsCommand(Clock clock) {
    this.clock = clock;
  }

  public static void main(String[] args) {
    Cli.main(new IncidentsCommand(), args);
  }

  @Override
  public Integer call() throws InterruptedException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    URI uri = uri();
    HttpResponse<String> response;
    try {
      response =
          HttpClient.newBuilder()
              .connectTimeout(Duration.ofSeconds(5))
              .build()
              .send(
                  HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).GET().build(),
                  HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      err.println("cudawatch incidents: cannot reach " + url + ": " + e);
      err.flush();
      return 1;
    }
    ObjectMapper mapper = WireJson.mapper();
    JsonNode body;
    try {
      body = mapper.readTree(response.body());
    } catch (IOException e) {
      body = null;
    }
    if (response.statusCode() != 200 || body == null || !body.has("incidents")) {
      String why = body != null && body.has("error") ? body.get("error").asText() : response.body();
      err.println(
          "cudawatch incidents: "
              + uri
              + " answered "
              + response.statusCode()
              + ": "
              + why.lines().findFirst().orElse(""));
      err.flush();
      return 1;
    }
    List<JsonNode> incidents = new ArrayList<>();
    body.get("incidents").forEach(incidents::add);
    if (json) {
      for (JsonNode i : incidents) {
        out.println(i.toString());
      }
    } else {
      table(incidents, out);
    }
    out.flush();
    long total = body.path("total").asLong(incidents.size());
    if (!json && total > incidents.size()) {
      err.println("(" + incidents.size() + " of " + total + " shown; raise --limit)");
      err.flush();
    }
    return 0;
  }

  URI uri() {
    Map<String, String> q = new LinkedHashMap<>();
    if (host != null) {
      q.put("host", host);
    }
    if (incidentClass != null) {
      q.put("class", incidentClass);
    }
    if (job != null) {
      q.put("job", job);
    }
    if (since != null) {
      q.put("since", sinceInstant(since, clock.instant()).toString());
    }
    if (limit < 1 || limit > 1000) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--limit must be 1..1000");
    }
    q.put("limit", Integer.toString(limit));
    StringBuilder sb = new StringBuilder(url.replaceAll("/+$", "")).append("/api/incidents");
    char sep = '?';
    for (var e : q.entrySet()) {
      sb.append(sep)
          .append(e.getKey())
          .append('=')
          .append(URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8));
      sep = '&';
    }
    try {
      URI u = URI.create(sb.toString());
      if (u.getHost() == null || !u.getScheme().startsWith("http")) {
        throw new IllegalArgumentException("not an http URL");
      }
      return u;
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--url " + url + ": " + e.getMessage());
    }
  }

  /** {@code 10m} ago, or an ISO-8601 instant as given. */
  Instant sinceInstant(String value, Instant now) {
    Matcher m = DURATION.matcher(value);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      Duration d =
          switch (m.group(2)) {
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
          };
      return now.minus(d);
    }
    try {
      return Instant.parse(value);
    } catch (DateTimeParseException e) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "--since " + value + ": give an age (30s, 10m, 1h, 2d) or an ISO-8601 time");
    }
  }

  static void table(List<JsonNode> incidents, PrintWriter out) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"TIME (UTC)", "HOST", "JOB", "GPU", "CLASS", "SEVERITY", "SUMMARY"});
    for (JsonNode i : incidents) {
      String time = i.path("event_time").asText("");
      try {
        time = TIME.format(Instant.parse(time));
      } catch (DateTimeParseException e) {
        // shown as the service wrote it
      }
      String summary = i.path("summary").asText("");
      rows.add(
          new String[] {
            time,
            text(i, "host"),
            text(i, "job"),
            i.path("fields").path("gpu").asText("-"),
            text(i, "class"),
            text(i, "severity"),
            summary.length() > 70 ? summary.substring(0, 69) + "…" : summary
          });
    }
    int[] width = new int[rows.get(0).length];
    for (String[] r : rows) {
      for (int c = 0; c < r.length; c++) {
        width[c] = Math.max(width[c], r[c].length());
      }
    }
    for (String[] r : rows) {
      StringBuilder sb = new StringBuilder();
      for (int c = 0; c < r.length; c++) {
        sb.append(c == r.length - 1 ? r[c] : String.format("%-" + width[c] + "s  ", r[c]));
      }
      out.println(sb.toString().stripTrailing());
    }
    if (incidents.isEmpty()) {
      out.println("(no incidents)");
    }
  }

  private static String text(JsonNode i, String field) {
    JsonNode n = i.get(field);
    return n == null || n.isNull() || n.asText().isEmpty() ? "-" : n.asText();
  }
}
