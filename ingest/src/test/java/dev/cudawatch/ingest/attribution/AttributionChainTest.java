package dev.cudawatch.ingest.attribution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.cudawatch.testkit.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class AttributionChainTest {
  @Test
  void eachFieldFromTheMostTrustedSourceThatKnowsIt() {
    FileAttribution.Of slurm =
        new FileAttribution.Of(
            "4",
            null,
            null,
            null,
            null,
            Map.of(
                "job", "slurm path pattern slurm-%j.out", "visible_gpus", "1,2", "tried", "slurm"));
    FileAttribution.Of k8s =
        new FileAttribution.Of(
            null, null, null, null, null, Map.of("tried", "kubernetes: not a pod log path"));
    FileAttribution.Of proc =
        new FileAttribution.Of(
            "999",
            3,
            1,
            2,
            "GPU-2",
            Map.of(
                "job", "SLURM_JOB_ID",
                "rank", "RANK",
                "local_rank", "LOCAL_RANK",
                "gpu", "writing process's open /dev/nvidia2",
                "gpu_uuid", "CUDA_VISIBLE_DEVICES",
                "visible_gpus", "0,1,2,3",
                "pid", "77",
                "tried", "writing process"));
    FileAttribution.Of m = AttributionChain.merge(List.of(slurm, k8s, proc));
    assertEquals("4", m.job(), "Slurm's job before the process's environment");
    assertEquals("slurm path pattern slurm-%j.out", m.attribution().get("job"));
    assertEquals(3, m.rank());
    assertEquals("RANK", m.attribution().get("rank"));
    assertEquals(2, m.gpu(), "Slurm gave two GPUs: the process's open device says which");
    assertEquals("GPU-2", m.gpuUuid());
    assertEquals("writing process's open /dev/nvidia2", m.attribution().get("gpu"));
    assertEquals("1,2", m.attribution().get("visible_gpus"), "the job's devices, from Slurm");
    assertEquals("77", m.attribution().get("pid"));
    assertEquals(
        "slurm, kubernetes: not a pod log path, writing process", m.attribution().get("tried"));

    FileAttribution.Of one =
        new FileAttribution.Of(
            "4", null, null, 1, null, Map.of("gpu", "slurm sidecar", "tried", "slurm"));
    FileAttribution.Of both = AttributionChain.merge(List.of(one, proc));
    assertEquals(1, both.gpu(), "the trusted source's GPU");
    assertEquals(null, both.gpuUuid(), "not another source's UUID of another GPU");
  }

  /** A source whose answer for a file comes from a lookup that waits for the test's word. */
  private static final class SlowSource implements FileSource {
    final Lookups lookups;
    final CountDownLatch release = new CountDownLatch(1);
    final Map<String, String> jobs = new ConcurrentHashMap<>();
    final AtomicInteger asked = new AtomicInteger();

    SlowSource(Lookups lookups) {
      this.lookups = lookups;
    }

    @Override
    public FileAttribution.Of of(String file) {
      asked.incrementAndGet();
      String job = jobs.get(file);
      if (job == null) {
        lookups.submit(
            file,
            () -> {
              try {
                release.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
              }
              jobs.put(file, "job of " + file);
            });
      }
      return new FileAttribution.Of(
          job, null, null, null, null, Map.of("job", "slow", "tried", "slow"));
    }

    @Override
    public boolean pending(String file) {
      return !jobs.containsKey(file);
    }
  }

  @Test
  void linesShipWithWhatIsKnownAndLaterLinesGetTheAnswerOncePerFile() throws Exception {
    Changes changes = new Changes();
    AtomicLong nanos = new AtomicLong();
    try (Lookups lookups = Lookups.pool("test", 1, 8, changes)) {
      SlowSource slow = new SlowSource(lookups);
      AttributionChain chain = new AttributionChain(List.of(slow), changes, nanos::get, 20, 2);
      // the lookup cannot end before the latch opens: the chain answers all the same
      assertNull(chain.of("/logs/a.out").job(), "a line ships with what is known");
      assertNull(chain.of("/logs/a.out").job());
      assertNull(chain.of("/logs/b.out").job());
      assertEquals(3, chain.linesBeforeKnown());
      assertEquals(2, chain.waits(), "each new file's first line waited, briefly");
      int asked = slow.asked.get();
      chain.of("/logs/a.out");
      assertEquals(asked, slow.asked.get(), "per file: nothing moved, the kept answer serves");

      slow.release.countDown();
      Await.until(
          "a later line of a.out to carry the answer",
          () -> "job of /logs/a.out".equals(chain.of("/logs/a.out").job()),
          Duration.ofSeconds(30));
      Await.until(
          "b.out's answer",
          () -> "job of /logs/b.out".equals(chain.of("/logs/b.out").job()),
          Duration.ofSeconds(30));
      long late = chain.linesBeforeKnown();
      chain.of("/logs/a.out");
      chain.of("/logs/b.out");
      assertEquals(late, chain.linesBeforeKnown(), "known now: no line counted late");

      // bounded: a third file pushes the least recently read out of the chain's cache
      nanos.addAndGet(2_000_000_000L);
      chain.of("/logs/c.out");
      asked = slow.asked.get();
      chain.of("/logs/a.out");
      assertEquals(asked + 1, slow.asked.get(), "a.out was dropped and is asked again");
    }
  }
}
