package dev.cudawatch.diagnosis.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.diagnosis.advice.Advisor;
import dev.cudawatch.diagnosis.catalog.Catalog;
import dev.cudawatch.diagnosis.catalog.LibraryStatus;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Walks every table of library-statuses.yaml: a line from a program no signature knows, carrying a
 * status's name, its library and number, or its message, is an incident of the status's class with
 * the status's fields.
 */
class LibraryStatusTablesTest {
  private static final Catalog CATALOG = Catalog.builtIn();
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  static Stream<Arguments> byName() {
    return CATALOG.libraryStatuses().all().stream()
        .map(s -> Arguments.of(s, "myprog: call failed with " + s.name() + " (" + s.code() + ")"));
  }

  static Stream<Arguments> byNumber() {
    return CATALOG.libraryStatuses().all().stream()
        // cuDNN 9 kept the 7-8 names with new numbers: a number names the entry it is
        .map(s -> Arguments.of(s, "myprog: " + s.library() + " error " + s.code()));
  }

  static Stream<Arguments> byMessage() {
    return CATALOG.libraryStatuses().all().stream()
        .filter(s -> s.text() != null)
        .map(s -> Arguments.of(s, "myprog: " + s.library().toUpperCase() + " error: " + s.text()));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("byName")
  void aStatusNameIsAnIncidentOfItsClass(LibraryStatus s, String line) {
    Incident inc = only(line);
    assertEquals(
        CATALOG.libraryStatuses().byName(s.name()).get().incidentClass(), inc.incidentClass());
    assertEquals(s.library(), inc.fields().get("library"), line);
    assertTrue(names(inc).contains(s.name()), () -> line + " -> " + inc.fields());
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("byNumber")
  void aLibraryAndNumberIsAnIncidentOfTheStatusClass(LibraryStatus s, String line) {
    Incident inc = only(line);
    assertEquals(s.incidentClass(), inc.incidentClass(), line);
    assertEquals((long) s.code(), inc.fields().get("library_status_code"), line);
    assertEquals(s.library(), inc.fields().get("library"), line);
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("byMessage")
  void aLibraryMessageIsAnIncidentOfTheStatusClass(LibraryStatus s, String line) {
    Incident inc = only(line);
    assertEquals(s.incidentClass(), inc.incidentClass(), line);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "cuBLAS status: ok, 0 failures",
        "NCCL INFO Channel 00/02 : 0 1",
        "using cufft plan CUFFT_FORWARD",
        "nvml error count 0",
        "NCCL status 42 of 64 ranks ready",
        "NVML_SUCCESS returned for device 0",
        "benchmark: NVML result 12.5 W",
        "CUDNN_STATUS_SUCCESS",
      })
  void linesWithoutAFailureAreNoIncident(String line) {
    assertEquals(List.of(), all(line), line);
  }

  private static List<String> names(Incident inc) {
    Map<String, Object> f = inc.fields();
    return Stream.of("library_status", "cublas_status", "cudnn_status", "nccl_error")
        .map(f::get)
        .filter(v -> v != null)
        .map(Object::toString)
        .toList();
  }

  private static Incident only(String line) {
    List<Incident> out = all(line);
    assertEquals(1, out.size(), () -> line + " -> " + out);
    return out.get(0);
  }

  private static List<Incident> all(String line) {
    StreamClassifier c =
        new StreamClassifier(
            CATALOG,
            new Advisor(CATALOG.taxonomy()),
            new StreamContext("node-1", "job-7", "/logs/myprog.log"),
            ClassifierSettings.defaults(),
            new StreamState());
    List<Incident> out = new ArrayList<>(c.accept(line, null, T0));
    out.addAll(c.flush(T0));
    return out;
  }
}
