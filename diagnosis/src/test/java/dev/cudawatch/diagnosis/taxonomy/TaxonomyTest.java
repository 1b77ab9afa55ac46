package dev.cudawatch.diagnosis.taxonomy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.diagnosis.datafile.CatalogException;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TaxonomyTest {
  private static final String GOOD_CLASS =
      """
        - id: gpu_xid
          title: GPU Xid error
          severity: warning
          suspect: hardware
          advice: xid
          xid_correlation: xid
          kernel_log: true
      """;
  private static final String TAIL =
      """
      recovery_actions:
        IGNORE: "Nothing to do."
      xids:
        - {xid: 13, mnemonic: GR, verdict: application, severity: error, recovery: IGNORE, meaning: "fault"}
      """;

  private static Taxonomy load(String yaml) {
    return Taxonomy.load(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)), "t.yaml");
  }

  private static String failure(String yaml) {
    return assertThrows(CatalogException.class, () -> load(yaml)).getMessage();
  }

  @Test
  void aSmallTaxonomyLoads() {
    Taxonomy t = load("version: 1\nclasses:\n" + GOOD_CLASS + TAIL);
    assertEquals(Set.of("gpu_xid"), t.ids());
    assertEquals(XidVerdict.APPLICATION, t.xid(13).orElseThrow().verdict());
    assertEquals("Nothing to do.", t.action(t.xid(13).orElseThrow()));
  }

  @Test
  void anUnknownKeyFailsAtItsLine() {
    String m =
        failure(
            "version: 1\nclasses:\n"
                + GOOD_CLASS
                + "  - id: x\n    title: X\n    severity: error\n    suspect: application\n    colour: red\n"
                + TAIL);
    assertTrue(m.startsWith("t.yaml:10: unknown key 'colour'"), m);
  }

  @Test
  void aClassWithoutAdviceFailsAtItsLine() {
    String m =
        failure(
            "version: 1\nclasses:\n"
                + GOOD_CLASS
                + "  - id: quiet\n    title: Quiet\n    severity: error\n    suspect: application\n"
                + TAIL);
    assertTrue(m.startsWith("t.yaml:10: class 'quiet': has no advice"), m);
  }

  @Test
  void anUnknownSeverityOrVerdictOrRecoveryFails() {
    assertTrue(
        failure("version: 1\nclasses:\n" + GOOD_CLASS.replace("warning", "meh") + TAIL)
            .contains("severity must be one of"));
    assertTrue(
        failure("version: 1\nclasses:\n" + GOOD_CLASS + TAIL.replace("application", "cosmic"))
            .startsWith("t.yaml:"));
    String m =
        failure(
            "version: 1\nclasses:\n"
                + GOOD_CLASS
                + TAIL.replace("recovery: IGNORE", "recovery: PRAY"));
    assertTrue(m.contains("Xid 13: unknown recovery 'PRAY'"), m);
  }

  @Test
  void anXidListedTwiceFails() {
    String twice =
        TAIL
            + "  - {xid: 13, mnemonic: GR, verdict: hardware, severity: error, recovery: IGNORE, meaning: \"again\"}\n";
    assertTrue(
        failure("version: 1\nclasses:\n" + GOOD_CLASS + twice).contains("Xid 13: is listed twice"));
  }

  @Test
  void aClassThatNothingProducesFailsAtItsLine() {
    Taxonomy t =
        load(
            "version: 1\nclasses:\n"
                + GOOD_CLASS
                + "  - id: orphan\n    title: O\n    severity: error\n    suspect: application\n    explanation: e\n    next_steps: [s]\n"
                + TAIL);
    String m =
        assertThrows(CatalogException.class, () -> t.requireProduced(Set.of("gpu_xid")))
            .getMessage();
    assertTrue(
        m.startsWith("t.yaml:10: class 'orphan': no signature or CUDA error produces it"), m);
  }

  @Test
  void theBuiltInTaxonomyStatesTheRolesOnce() {
    Taxonomy t = Taxonomy.builtIn();
    assertEquals(Set.of("gpu_xid"), t.classesWith(XidRole.XID));
    assertTrue(t.lemonClasses().contains("illegal_memory_access"));
    assertTrue(!t.lemonClasses().contains("cuda_oom"), "an OOM is the job's, never the GPU's");
    for (int x : new int[] {32, 48, 54, 57, 58, 79, 95, 110, 121, 122, 140, 171}) {
      assertEquals(XidVerdict.HARDWARE, t.xid(x).orElseThrow().verdict(), "Xid " + x);
    }
    for (int x : new int[] {8, 13, 31, 43, 45, 109}) {
      assertEquals(XidVerdict.APPLICATION, t.xid(x).orElseThrow().verdict(), "Xid " + x);
    }
    for (int x : new int[] {119, 120}) {
      assertEquals(XidVerdict.DRIVER, t.xid(x).orElseThrow().verdict(), "Xid " + x);
    }
    assertEquals(Set.of("nccl_timeout", "nccl_error", "worker_exit"), t.consequenceClasses());
    assertEquals(Set.of("gpu_xid", "gpu_lost", "ecc_error"), t.kernelLogClasses());
  }

  @Test
  void jobRoleAndKernelLogAreCheckedAtTheirLine() {
    Taxonomy t =
        load(
            "version: 1\nclasses:\n"
                + GOOD_CLASS
                + "  - id: timeout\n    title: T\n    severity: error\n    suspect: infrastructure\n"
                + "    job_role: consequence\n    explanation: e\n    next_steps: [s]\n"
                + TAIL);
    assertEquals(Set.of("timeout"), t.consequenceClasses());
    assertEquals(Set.of("gpu_xid"), t.kernelLogClasses());
    assertTrue(
        failure(
                "version: 1\nclasses:\n"
                    + GOOD_CLASS.replace("job_role", "x")
                    + "    job_role: sometimes\n"
                    + TAIL)
            .startsWith("t.yaml:"));
    String m =
        failure("version: 1\nclasses:\n" + GOOD_CLASS.replace("kernel_log: true", "") + TAIL);
    assertTrue(
        m.startsWith("t.yaml:3: class 'gpu_xid': the Xid events come from the kernel log"), m);
  }
}
