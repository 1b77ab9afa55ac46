package dev.cudawatch.it;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dependency rules of the house, checked on the main classes of every module on this test
 * classpath, bench's and the launcher's included.
 *
 * <ul>
 *   <li>Modules: common depends on nothing of ours; diagnosis only on common; the agent (ingest),
 *       the Flink job (processor) and the alerts service never on each other; only launcher and
 *       bench put them together.
 *   <li>No package cycles anywhere in {@code dev.cudawatch}.
 *   <li>Inside diagnosis: the data files' reader under the taxonomy, the taxonomy under the
 *       catalog, the advice under the stream classifier (engine), the offline path on top.
 * </ul>
 */
class ArchitectureTest {
  private static JavaClasses main;

  @BeforeAll
  static void importMainClasses() {
    main =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.cudawatch");
  }

  /** The modules as their poms have them; each layer is one module's packages. */
  static LayeredArchitecture modules() {
    return layeredArchitecture()
        .consideringOnlyDependenciesInLayers()
        .layer("common")
        .definedBy("dev.cudawatch.common..")
        .layer("testkit")
        .definedBy("dev.cudawatch.testkit..")
        .layer("diagnosis")
        .definedBy("dev.cudawatch.diagnosis..")
        .layer("kafka-embedded")
        .definedBy("dev.cudawatch.kafka..")
        .layer("simulator")
        .definedBy("dev.cudawatch.simulator..")
        .layer("ingest")
        .definedBy("dev.cudawatch.ingest..")
        .layer("processor")
        .definedBy("dev.cudawatch.processor..")
        .layer("alerts")
        .definedBy("dev.cudawatch.alerts..")
        .layer("launcher")
        .definedBy("dev.cudawatch.launcher..")
        .layer("bench")
        .definedBy("dev.cudawatch.bench..")
        .whereLayer("common")
        .mayNotAccessAnyLayer()
        .whereLayer("testkit")
        .mayNotAccessAnyLayer()
        .whereLayer("diagnosis")
        .mayOnlyAccessLayers("common")
        .whereLayer("kafka-embedded")
        .mayOnlyAccessLayers("common", "testkit")
        .whereLayer("simulator")
        .mayOnlyAccessLayers("common")
        .whereLayer("ingest")
        .mayOnlyAccessLayers("common", "diagnosis")
        .whereLayer("processor")
        .mayOnlyAccessLayers("common", "diagnosis")
        .whereLayer("alerts")
        .mayOnlyAccessLayers("common", "diagnosis")
        .whereLayer("launcher")
        .mayOnlyBeAccessedByLayers("bench")
        .whereLayer("bench")
        .mayNotBeAccessedByAnyLayer();
  }

  /** The rules bite: an agent class that reaches into the Flink job breaks both module rules. */
  @Test
  void aClassOfTheAgentUsingTheJobIsCaught() {
    JavaClasses bad =
        new ClassFileImporter()
            .importClasses(
                dev.cudawatch.ingest.archfixture.ReachesIntoTheJob.class,
                dev.cudawatch.processor.ProcessorJob.class);
    AssertionError layering = assertThrows(AssertionError.class, () -> modules().check(bad));
    assertTrue(layering.getMessage().contains("ReachesIntoTheJob"), layering.getMessage());
    assertThrows(
        AssertionError.class,
        () ->
            noClasses()
                .that()
                .resideInAPackage("dev.cudawatch.ingest..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("dev.cudawatch.processor..")
                .check(bad));
  }

  @Test
  void modulesDependOnlyDownwards() {
    modules().check(main);
  }

  /** Said on its own, for its message: the agent, the job and the alerts service share no code. */
  @Test
  void ingestProcessorAndAlertsAreIndependent() {
    List<String> apps = List.of("ingest", "processor", "alerts");
    for (String app : apps) {
      String[] others =
          apps.stream()
              .filter(o -> !o.equals(app))
              .map(o -> "dev.cudawatch." + o + "..")
              .toArray(String[]::new);
      noClasses()
          .that()
          .resideInAPackage("dev.cudawatch." + app + "..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(others)
          .check(main);
    }
  }

  @Test
  void noPackageCycles() {
    slices().matching("dev.cudawatch.(**)").should().beFreeOfCycles().check(main);
  }

  /** diagnosis's packages, lowest first; each may use only those below it. */
  static LayeredArchitecture diagnosisPackages() {
    String d = "dev.cudawatch.diagnosis.";
    return layeredArchitecture()
        .consideringOnlyDependenciesInLayers()
        .layer("datafile")
        .definedBy(d + "datafile..")
        .layer("taxonomy")
        .definedBy(d + "taxonomy..")
        .layer("catalog")
        .definedBy(d + "catalog..")
        .layer("advice")
        .definedBy(d + "advice..")
        .layer("jobs")
        .definedBy(d + "jobs..")
        .layer("trend")
        .definedBy(d + "trend..")
        .layer("engine")
        .definedBy(d + "engine..")
        .layer("offline")
        .definedBy(d + "offline..")
        .layer("cli")
        .definedBy(d + "cli..")
        .whereLayer("datafile")
        .mayNotAccessAnyLayer()
        .whereLayer("taxonomy")
        .mayOnlyAccessLayers("datafile")
        .whereLayer("catalog")
        .mayOnlyAccessLayers("datafile", "taxonomy")
        .whereLayer("advice")
        .mayOnlyAccessLayers("taxonomy", "catalog")
        .whereLayer("jobs")
        .mayOnlyAccessLayers("taxonomy")
        .whereLayer("trend")
        .mayOnlyAccessLayers("taxonomy", "advice")
        .whereLayer("engine")
        .mayOnlyAccessLayers("datafile", "taxonomy", "catalog", "advice")
        .whereLayer("offline")
        .mayOnlyAccessLayers("datafile", "taxonomy", "catalog", "advice", "trend", "engine")
        .whereLayer("cli")
        .mayOnlyAccessLayers(
            "datafile", "taxonomy", "catalog", "advice", "jobs", "trend", "engine", "offline");
  }

  @Test
  void diagnosisPackagesAreLayered() {
    diagnosisPackages()
        .ensureAllClassesAreContainedInArchitecture()
        .check(main.that(resideInAPackage("dev.cudawatch.diagnosis..")));
  }
}
