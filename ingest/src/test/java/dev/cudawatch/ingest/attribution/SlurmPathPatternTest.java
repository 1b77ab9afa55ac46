package dev.cudawatch.ingest.attribution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SlurmPathPatternTest {
  @Test
  void sbatchDefaultsAndArrays() {
    SlurmPathPattern p = SlurmPathPattern.compile("slurm-%j.out");
    assertEquals("4", p.jobOf("/tmp/wt14a-slurm/jobs/slurm-4.out"));
    assertEquals("123", p.jobOf("slurm-123.out"));
    assertNull(p.jobOf("/home/a/slurm-123.out.bak"));
    assertNull(p.jobOf("/home/a/xslurm-123.out"));
    assertNull(p.jobOf("/home/a/slurm-12a.out"));
    assertEquals("88_3", SlurmPathPattern.compile("slurm-%A_%a.out").jobOf("/x/slurm-88_3.out"));
  }

  @Test
  void namesUsersWildcardsAndAbsolutePatterns() {
    SlurmPathPattern p = SlurmPathPattern.compile("%x-%j.%N.log");
    assertEquals("4", p.jobOf("/home/a/train-llm-4.vm.log"));
    SlurmPathPattern deep = SlurmPathPattern.compile("/var/log/training/%j/**");
    assertEquals("42", deep.jobOf("/var/log/training/42/rank3/out.log"));
    assertNull(deep.jobOf("/srv/var/log/training/42/out.log"), "an absolute pattern is anchored");
    assertEquals("7", SlurmPathPattern.compile("runs/*/%j.log").jobOf("/h/runs/llm/7.log"));
    assertNull(SlurmPathPattern.compile("runs/*/%j.log").jobOf("/h/runs/a/b/7.log"));
    assertEquals("9", SlurmPathPattern.compile("100%%-%j.log").jobOf("/h/100%-9.log"));
    assertEquals(
        "5", SlurmPathPattern.compile("a.(b)+[c]-%j.log").jobOf("/a.(b)+[c]-5.log"), "literal");
  }

  @Test
  void aPatternThatNamesNoJobIsAClearError() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> SlurmPathPattern.compile("slurm.out"));
    assertTrue(e.getMessage().contains("needs %j"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> SlurmPathPattern.compile("x-%q-%j"));
  }
}
