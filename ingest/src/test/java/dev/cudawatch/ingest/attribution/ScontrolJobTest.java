package dev.cudawatch.ingest.attribution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** {@code scontrol show job -d} as a real slurm-wlm 22.05 printed it (src/test/resources/slurm). */
class ScontrolJobTest {
  static String recorded(String name) throws Exception {
    return Files.readAllLines(Path.of("src/test/resources/slurm", name)).stream()
        .filter(l -> !l.startsWith("#"))
        .collect(Collectors.joining("\n"));
  }

  @Test
  void aRecordedJobWithTwoGpusOnTheNode() throws Exception {
    ScontrolJob j = ScontrolJob.parse(recorded("scontrol-show-job-d-2gpus.txt"));
    assertEquals("4", j.jobId());
    assertEquals("train-llm", j.name());
    assertEquals("root", j.user());
    assertEquals("/tmp/wt14a-slurm/jobs/train-4.out", j.stdOut());
    assertEquals("/tmp/wt14a-slurm/jobs/train-4.err", j.stdErr());
    assertEquals("/tmp/wt14a-slurm/jobs", j.workDir());
    assertEquals(List.of(1, 2), j.gpusOn("vm"));
    assertEquals(List.of(), j.gpusOn("vm2"), "another node holds none of the job's GPUs");
  }

  @Test
  void aRecordedJobWithDefaultOutputAndOneGpu() throws Exception {
    ScontrolJob j = ScontrolJob.parse(recorded("scontrol-show-job-d-1gpu.txt"));
    assertEquals("3", j.jobId());
    assertEquals("/tmp/wt14a-slurm/jobs/slurm-3.out", j.stdOut());
    assertEquals(j.stdOut(), j.stdErr(), "without -e, stderr goes with stdout");
    assertEquals(List.of(0), j.gpusOn("vm"));
  }

  @Test
  void perNodeDetailLinesWithHostListsAndTypedGres() {
    // the detail-line layout of the recordings, for two nodes (a multi-node job prints one line per
    // group of nodes with the same allocation) and typed GRES
    String text =
        "JobId=77 JobName=big run\n"
            + "   UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A\n"
            + "   JOB_GRES=gpu:h100:12\n"
            + "     Nodes=dgx-[01-02] CPU_IDs=0-31 Mem=0 GRES=gpu:h100:4(IDX:0,2-3,5)\n"
            + "     Nodes=dgx-10 CPU_IDs=0-7 Mem=0 GRES=gpu:h100:2(IDX:6-7),nic:1(IDX:0)\n"
            + "   StdOut=/home/alice/big run-77.out\n";
    ScontrolJob j = ScontrolJob.parse(text);
    assertEquals("big run", j.name());
    assertEquals("alice", j.user());
    assertEquals("/home/alice/big run-77.out", j.stdOut());
    assertEquals(List.of(0, 2, 3, 5), j.gpusOn("dgx-02"));
    assertEquals(List.of(6, 7), j.gpusOn("dgx-10"), "the nic's IDX is not a GPU");
    assertEquals(List.of(), j.gpusOn("dgx-2"), "zero padding is part of the node name");
    assertNull(j.stdErr());
  }

  @Test
  void errorsAndOddInputNameNoJob() {
    assertNull(ScontrolJob.parse("slurm_load_jobs error: Invalid job id specified\n"));
    assertNull(ScontrolJob.parse(""));
    assertEquals(List.of(), ScontrolJob.indexList("N/A"));
    assertEquals(List.of(), ScontrolJob.indexList("5-1"));
    assertEquals(List.of(), ScontrolJob.indexList("0-99999999"), "bounded");
  }

  @Test
  void hostLists() {
    assertTrue(Hostlist.contains("vm", "vm"));
    assertTrue(Hostlist.contains("gpu[1-3,8],cpu1", "gpu8"));
    assertTrue(Hostlist.contains("gpu[1-3,8],cpu1", "cpu1"));
    assertTrue(Hostlist.contains("a[01-10]-ib", "a07-ib"));
    assertFalse(Hostlist.contains("gpu[1-3]", "gpu4"));
    assertFalse(Hostlist.contains("gpu[1-3]", "gpu01"));
    assertFalse(Hostlist.contains("gpu[1-3]", "gpux"));
  }
}
