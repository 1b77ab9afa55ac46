package dev.cudawatch.diagnosis.catalog;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** One table of library-statuses.yaml: a library's status enum, as the YAML writes it. */
record LibraryStatusFamily(
    String library,
    @JsonProperty("enum") String enumName,
    String source,
    @JsonProperty("class") String incidentClass,
    String suspect,
    List<Entry> statuses) {

  /** One status as written: class and suspect default to the table's. */
  record Entry(
      Integer code,
      String name,
      String text,
      @JsonProperty("class") String incidentClass,
      String suspect,
      String since) {}
}
