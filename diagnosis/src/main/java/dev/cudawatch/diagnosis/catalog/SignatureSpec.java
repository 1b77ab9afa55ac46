package dev.cudawatch.diagnosis.catalog;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** One signature as written in a catalog YAML file, before it is compiled. */
public record SignatureSpec(
    String id,
    @JsonProperty("class") String incidentClass,
    String role,
    List<String> attachTo,
    String severity,
    String suspect,
    String framework,
    List<String> keywords,
    List<String> match,
    List<String> extract,
    List<String> exclude,
    List<String> mergeOn,
    String summary,
    String explanation,
    List<String> nextSteps) {

  public SignatureSpec {
    attachTo = attachTo == null ? List.of() : attachTo;
    keywords = keywords == null ? List.of() : keywords;
    match = match == null ? List.of() : match;
    extract = extract == null ? List.of() : extract;
    exclude = exclude == null ? List.of() : exclude;
    mergeOn = mergeOn == null ? List.of() : mergeOn;
    nextSteps = nextSteps == null ? List.of() : nextSteps;
  }
}
