package dev.cudawatch.ingest.attribution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.testkit.Await;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kernel line's pid joined to its process's job, rank and GPU through a fixture proc file system
 * ({@code <pid>/environ}, NUL-separated as the kernel writes it), on a four-GPU node.
 */
class KernelPidJoinTest {
  private static final String XID =
      "NVRM: Xid (PCI:0000:3b:00): 43, pid=1317, name=python3, Ch 00000008";

  @TempDir Path proc;

  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

  private static GpuInventory fourGpus() {
    List<GpuInventory.Gpu> gpus = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      gpus.add(new GpuInventory.Gpu(i, "GPU-0000000" + i, "0000:" + (0x18 + i) + ":00", List.of()));
    }
    return new GpuInventory(gpus);
  }

  private KernelPidJoin join() {
    return new KernelPidJoin(
        proc,
        KernelPidJoinTest::fourGpus,
        Lookups.inline(new Changes()),
        Duration.ofSeconds(5),
        nanos::get);
  }

  private void environ(long pid, String... kvs) throws Exception {
    Path dir = Files.createDirectories(proc.resolve(Long.toString(pid)));
    Files.write(
        dir.resolve("environ"), (String.join("\0", kvs) + "\0").getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void thePidALineNames() {
    assertEquals(1317, KernelPidJoin.pidOf(XID));
    assertEquals(
        -1,
        KernelPidJoin.pidOf(
            "NVRM: Xid (PCI:0000:3b:00): 13, pid=<unknown>, name=<unknown>, Graphics Exception"));
    assertEquals(
        -1,
        KernelPidJoin.pidOf(
            "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."));
    assertEquals(
        -1,
        KernelPidJoin.pidOf("NVRM: Xid (PCI:0000:00:06): 79, pid=0, GPU has fallen off the bus."));
    assertEquals(
        19312, KernelPidJoin.pidOf("Out of memory: Killed process 19312 (python) total-vm:812kB"));
    assertEquals(
        88, KernelPidJoin.pidOf("Memory cgroup out of memory: Killed process 88 (pt_main_thread)"));
    assertEquals(
        1317,
        KernelPidJoin.pidOf(
            "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),task=python3,pid=1317,uid=0"));
    assertEquals(-1, KernelPidJoin.pidOf("NVRM: GPU at PCI:0000:3b:00: GPU-0000003"));
    assertEquals(-1, KernelPidJoin.pidOf("NVRM: Xid (PCI:0000:3b:00): 43, tgid=1317"));
  }

  @Test
  void anXidTakesItsProcesssJobRankAndGpuFromItsEnvironment() throws Exception {
    environ(
        1317,
        "PATH=/usr/bin",
        "TORCHELASTIC_RUN_ID=elastic-1",
        "CUDAWATCH_JOB=job9",
        "RANK=3",
        "LOCAL_RANK=3",
        "CUDA_VISIBLE_DEVICES=0,1,2,3");
    KernelPidJoin j = join();
    RunAttribution who = j.join(XID, null);
    assertEquals("job9", who.job(), "the job run decided wins over torchelastic's run id");
    assertEquals(3, who.rank());
    assertEquals(3, who.localRank());
    assertEquals(3, who.gpu(), "torchrun's set_device(LOCAL_RANK) among four visible GPUs");
    assertEquals("GPU-00000003", who.gpuUuid());
    assertEquals("pid 1317's environment (CUDAWATCH_JOB)", who.attribution().get("job"));
    assertEquals("pid 1317's environment (RANK)", who.attribution().get("rank"));
    assertEquals("pid 1317's environment (LOCAL_RANK)", who.attribution().get("local_rank"));
    assertEquals(
        "pid 1317's environment (CUDA_VISIBLE_DEVICES device LOCAL_RANK + nvidia-smi)",
        who.attribution().get("gpu"));
    assertEquals("0,1,2,3", who.attribution().get("visible_gpus"));
    assertEquals("1317", who.attribution().get("pid"));
    assertEquals(1L, j.counts().get("joined"));
  }

  @Test
  void theGpuTheLineNamesWinsOverTheEnvironments() throws Exception {
    environ(1317, "SLURM_JOB_ID=4242", "SLURM_PROCID=3", "CUDA_VISIBLE_DEVICES=3");
    RunAttribution who = join().join(XID, 1);
    assertEquals("4242", who.job());
    assertEquals("pid 1317's environment (SLURM_JOB_ID)", who.attribution().get("job"));
    assertEquals(1, who.gpu());
    assertEquals("GPU-00000001", who.gpuUuid(), "the line's GPU's UUID, not the environment's");
    assertEquals("the line's PCI address + nvidia-smi", who.attribution().get("gpu"));
    assertEquals("the line's PCI address + nvidia-smi", who.attribution().get("gpu_uuid"));
  }

  @Test
  void missesShipNothingAndAreCountedByWhy() throws Exception {
    environ(20, "PATH=/usr/bin", "RANK=1"); // no job
    Files.createDirectories(proc.resolve("21")); // a zombie: its environ reads empty
    Files.write(proc.resolve("21/environ"), new byte[0]);
    Files.createDirectories(proc.resolve("22/environ")); // cannot be read as a file
    KernelPidJoin j = join();
    assertNull(j.join("NVRM: Xid (PCI:0000:3b:00): 43, pid=20, name=python3", null));
    assertNull(j.join("Out of memory: Killed process 21 (python3)", null));
    assertNull(j.join("NVRM: Xid (PCI:0000:3b:00): 43, pid=22, name=python3", null));
    assertNull(j.join("NVRM: Xid (PCI:0000:3b:00): 43, pid=23, name=python3", null)); // no such
    assertNull(j.join("NVRM: Xid (PCI:0000:3b:00): 79, pid=<unknown>, GPU has fallen off", null));
    assertEquals(
        Map.of("joined", 0L, "gone", 2L, "unreadable", 1L, "no_job", 1L, "slow", 0L), j.counts());
  }

  @Test
  void aHugeEnvironmentIsReadOnlyUpToItsBound() throws Exception {
    Path dir = Files.createDirectories(proc.resolve("1317"));
    try (OutputStream o = Files.newOutputStream(dir.resolve("environ"))) {
      o.write("CUDAWATCH_JOB=job9\0".getBytes(StandardCharsets.UTF_8));
      o.write(
          ("JUNK=" + "x".repeat(KernelPidJoin.MAX_ENVIRON_BYTES - 32) + "\0")
              .getBytes(StandardCharsets.UTF_8));
      o.write("RANK=12345\0".getBytes(StandardCharsets.UTF_8)); // straddles the bound: dropped
      o.write(
          ("MORE=" + "y".repeat(2 << 20) + "\0LOCAL_RANK=2\0").getBytes(StandardCharsets.UTF_8));
    }
    RunAttribution who = join().join(XID, null);
    assertEquals("job9", who.job());
    assertNull(who.rank(), "a variable cut at the bound is not read as a shorter one");
    assertNull(who.localRank(), "nothing past the bound is read");
  }

  @Test
  void anAnswerIsKeptBrieflyThenReadAgain() throws Exception {
    environ(1317, "CUDAWATCH_JOB=job9", "RANK=3");
    KernelPidJoin j = join();
    assertEquals("job9", j.join(XID, null).job());
    environ(1317, "CUDAWATCH_JOB=job10", "RANK=0"); // the pid now names another process
    assertEquals("job9", j.join(XID, null).job(), "an Xid storm reads the environment once");
    nanos.addAndGet(KernelPidJoin.CACHE_FOR.toNanos());
    assertEquals("job10", j.join(XID, null).job(), "a reused pid is read again");
  }

  @Test
  void aReadThatHangsHoldsTheReaderOnlyOnceAndAnswersLater() throws Exception {
    Path dir = Files.createDirectories(proc.resolve("1317"));
    Path fifo = dir.resolve("environ"); // a read that blocks, as one on a wedged process's lock
    assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
    environ(55, "CUDAWATCH_JOB=job5");
    try (Lookups reads = Lookups.pool("test-pid", 1, 1, new Changes());
        KernelPidJoin j =
            new KernelPidJoin(
                proc, KernelPidJoinTest::fourGpus, reads, Duration.ofMillis(200), nanos::get)) {
      assertNull(j.join(XID, null), "the line ships without what the read did not answer");
      assertNull(
          j.join("NVRM: Xid (PCI:0000:3b:00): 43, pid=55, name=python3", null),
          "while one read hangs, the next line does not wait for another");
      assertEquals(2L, j.counts().get("slow"));
      try (OutputStream o = Files.newOutputStream(fifo)) { // the lock is released
        o.write("CUDAWATCH_JOB=job9\0RANK=3\0".getBytes(StandardCharsets.UTF_8));
      }
      Await.until(
          "the late answer to serve the next line",
          () -> j.join(XID, null),
          w -> w != null && "job9".equals(w.job()),
          Duration.ofSeconds(30));
      assertTrue(j.counts().get("joined") >= 1);
    }
  }
}
