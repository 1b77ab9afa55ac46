package dev.cudawatch.ingest.attribution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.testkit.StepClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SlurmAttributionTest {
  @TempDir Path dir;

  static final GpuInventory FOUR =
      GpuInventory.parseQuery(
          "0, GPU-00000000-0000-0000-0000-000000000000, 00000000:00:06.0\n"
              + "1, GPU-11111111-1111-1111-1111-111111111111, 00000000:00:07.0\n"
              + "2, GPU-22222222-2222-2222-2222-222222222222, 00000000:00:08.0\n"
              + "3, GPU-33333333-3333-3333-3333-333333333333, 00000000:00:09.0\n");

  private SlurmAttribution source(Function<String, String> scontrol, StepClock clock) {
    return new SlurmAttribution(
        dir.resolve("sidecars"),
        List.of(
            SlurmPathPattern.compile("slurm-%j.out"),
            SlurmPathPattern.compile("/var/log/training/%j/**")),
        scontrol,
        "vm",
        () -> FOUR,
        clock,
        5_000,
        60_000,
        100,
        Lookups.inline(new Changes()),
        Lookups.inline(new Changes()));
  }

  @Test
  void aPlainSlurmOutFileGetsItsJobAndGpuFromScontrol() throws Exception {
    List<String> asked = new ArrayList<>();
    String recorded = ScontrolJobTest.recorded("scontrol-show-job-d-1gpu.txt");
    StepClock clock = new StepClock(Instant.parse("2026-11-22T19:00:00Z"));
    SlurmAttribution s =
        source(
            id -> {
              asked.add(id);
              return id.equals("3") ? recorded : null;
            },
            clock);
    FileAttribution.Of a = s.of("/tmp/wt14a-slurm/jobs/slurm-3.out");
    assertEquals("3", a.job());
    assertEquals(0, a.gpu());
    assertEquals("GPU-00000000-0000-0000-0000-000000000000", a.gpuUuid());
    assertEquals("slurm path pattern slurm-%j.out", a.attribution().get("job"));
    assertEquals("scontrol show job -d (GRES IDX on vm)", a.attribution().get("gpu"));
    assertEquals("0", a.attribution().get("visible_gpus"));
    s.of("/tmp/wt14a-slurm/jobs/slurm-3.out");
    assertEquals(List.of("3"), asked, "scontrol's answer is cached");
    clock.advance(java.time.Duration.ofMinutes(2));
    s.of("/tmp/wt14a-slurm/jobs/slurm-3.out");
    assertEquals(List.of("3", "3"), asked, "and asked again after the TTL");

    FileAttribution.Of unknownJob = s.of("/home/a/slurm-999.out");
    assertEquals("999", unknownJob.job(), "the path still names the job");
    assertNull(unknownJob.gpu());
    FileAttribution.Of none = s.of("/home/a/train.log");
    assertNull(none.job());
    assertEquals(SlurmAttribution.TRIED, none.attribution().get("tried"));
  }

  @Test
  void theProlgSidecarNamesTheJobOfAnyOutputPathAndItsGpus() throws Exception {
    Path side = Files.createDirectories(dir.resolve("sidecars"));
    Path jobs = Files.createDirectories(dir.resolve("jobs"));
    for (String f : List.of("train-4.out", "train-4.err", "eval.out", "n.out")) {
      Files.writeString(jobs.resolve(f), "step 1\n");
    }
    int me = (int) Files.getAttribute(jobs.resolve("eval.out"), "unix:uid");
    String user = Files.getOwner(jobs.resolve("eval.out")).getName();
    Files.writeString(
        side.resolve("4.json"),
        "{\"job_id\":\"4\",\"array_job\":null,\"user\":\""
            + user
            + "\",\"node\":\"vm\",\"gpus\":[1,2],"
            + "\"std_out\":\""
            + jobs.resolve("train-4.out")
            + "\",\"std_err\":\""
            + jobs.resolve("train-4.err")
            + "\",\"work_dir\":\"/tmp/jobs\",\"gpus_from\":\"scontrol show job -d\"}\n");
    Files.writeString(
        side.resolve("5.json"),
        "{\"job_id\":\"5\",\"node\":\"vm\",\"gpus\":[3],\"std_out\":\""
            + jobs.resolve("eval.out")
            + "\",\"uid\":"
            + me
            + "}");
    Files.writeString(side.resolve("6.json"), "{not json");
    Files.writeString(side.resolve("7.json"), "{\"job_id\":\"../../etc\"}");
    StepClock clock = new StepClock(Instant.parse("2026-11-22T19:00:00Z"));
    SlurmAttribution s = source(id -> null, clock);

    FileAttribution.Of err = s.of(jobs.resolve("train-4.err").toString());
    assertEquals("4", err.job());
    assertEquals("slurm sidecar (std_err)", err.attribution().get("job"));
    assertNull(err.gpu(), "two GPUs: which one is the process's is for the line or /proc to say");
    assertEquals("1,2", err.attribution().get("visible_gpus"));
    assertEquals("vm", err.attribution().get("slurm_node"));

    FileAttribution.Of eval = s.of(jobs.resolve("eval.out").toString());
    assertEquals("5", eval.job());
    assertEquals(3, eval.gpu());
    assertEquals("GPU-33333333-3333-3333-3333-333333333333", eval.gpuUuid());
    assertEquals("slurm sidecar", eval.attribution().get("gpu"));

    FileAttribution.Of byDir = s.of("/var/log/training/4/rank0.log");
    assertEquals("4", byDir.job());
    assertEquals("slurm path pattern /var/log/training/%j/**", byDir.attribution().get("job"));
    assertEquals("1,2", byDir.attribution().get("visible_gpus"), "the pattern's job's sidecar");
    assertEquals(2, s.badSidecars(), "the broken sidecars are counted, not fatal");

    // a job started since: seen once the directory is listed again
    String n = jobs.resolve("n.out").toString();
    Files.writeString(
        side.resolve("8.json"),
        "{\"job_id\":\"8\",\"gpus\":[0],\"std_out\":\"" + n + "\",\"uid\":" + me + "}");
    assertNull(s.of(n).job(), "not re-listed within refresh_ms");
    clock.advance(java.time.Duration.ofSeconds(6));
    assertEquals("8", s.of(n).job());
    assertTrue(s.of(n).attribution().get("tried").startsWith("slurm"));
  }

  @Test
  void onlyTheOutputOfThisNodesJobsOwnedByTheJobsUserIsFollowed() throws Exception {
    Path side = Files.createDirectories(dir.resolve("sidecars"));
    Path out = Files.createDirectories(dir.resolve("home/alice"));
    Files.writeString(out.resolve("train-4.out"), "step 1\n");
    Files.writeString(out.resolve("train-4.err"), "warning\n");
    Files.writeString(out.resolve("slurm-9.out"), "another node's job, on the shared home\n");
    Files.writeString(out.resolve("shadow"), "secret\n");
    Files.createSymbolicLink(out.resolve("link-6.out"), out.resolve("shadow"));
    int me = (int) Files.getAttribute(out.resolve("shadow"), "unix:uid");
    Files.setOwner(
        out.resolve("shadow"),
        out.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
    Files.writeString(
        side.resolve("4.json"),
        sidecar("4", "vm", me, out.resolve("train-4.out"), out.resolve("train-4.err")));
    Files.writeString(
        side.resolve("9.json"),
        sidecar("9", "other-node", me, out.resolve("slurm-9.out"), out.resolve("slurm-9.out")));
    Files.writeString(
        side.resolve("5.json"), sidecar("5", "vm", me, out.resolve("shadow"), out.resolve("x")));
    Files.writeString(
        side.resolve("6.json"),
        sidecar("6", "vm", me, out.resolve("link-6.out"), out.resolve("../alice/train-4.out")));
    Files.writeString(
        side.resolve("7.json"),
        sidecar("7", "vm", me, out.resolve("later-7.out"), out.resolve("later-7.out")));
    StepClock clock = new StepClock(Instant.parse("2026-11-22T19:00:00Z"));
    SlurmAttribution s = source(id -> null, clock);

    assertEquals(
        List.of(out.resolve("train-4.err").toString(), out.resolve("train-4.out").toString()),
        s.followedPaths().stream().sorted().toList(),
        "not another node's job, nor another user's file, a link, or a path not yet written");
    assertEquals("9", s.of(out.resolve("slurm-9.out").toString()).job(), "still attributed");

    // job 7 starts writing: the directory is listed again soon, not only every refresh_ms
    Files.writeString(out.resolve("later-7.out"), "step 1\n");
    clock.advance(java.time.Duration.ofMillis(SlurmAttribution.NEW_FILE_MS));
    assertTrue(s.followedPaths().contains(out.resolve("later-7.out").toString()));
  }

  @Test
  void theNewestSidecarOfAReusedPathWins() throws Exception {
    Path side = Files.createDirectories(dir.resolve("sidecars"));
    Path out = Files.createDirectories(dir.resolve("home/alice"));
    Path log = Files.writeString(out.resolve("train.log"), "step 1\n");
    int me = (int) Files.getAttribute(log, "unix:uid");
    Instant now = Instant.parse("2026-11-22T19:00:00Z");
    // job 10 wrote train.log two days ago and ended; job 11 (this morning) and job 12 (just now)
    // reuse -o train.log: job 12 is the one writing it
    for (String[] j : new String[][] {{"10", "2880"}, {"12", "0"}, {"11", "600"}}) {
      Path f = side.resolve(j[0] + ".json");
      Files.writeString(f, sidecar(j[0], "vm", me, log, log).replace("[0]", "[" + j[0] + "]"));
      Files.setLastModifiedTime(
          f, java.nio.file.attribute.FileTime.from(now.minusSeconds(60 * Long.parseLong(j[1]))));
    }
    SlurmAttribution s = source(id -> null, new StepClock(now));
    FileAttribution.Of a = s.of(log.toString());
    assertEquals("12", a.job());
    assertEquals("12", a.attribution().get("visible_gpus"), "and the newest job's GPUs");

    // two prologs in the same second: the later job id is the later job
    Path thirteen = side.resolve("13.json");
    Files.writeString(thirteen, sidecar("13", "vm", me, log, log));
    Files.setLastModifiedTime(thirteen, Files.getLastModifiedTime(side.resolve("12.json")));
    SlurmAttribution again = source(id -> null, new StepClock(now));
    assertEquals("13", again.of(log.toString()).job());
    assertEquals(0, again.refusedSidecars());
  }

  @Test
  void aSidecarClaimingAnotherUsersFileIsRefusedAndCounted() throws Exception {
    Path side = Files.createDirectories(dir.resolve("sidecars"));
    Path out = Files.createDirectories(dir.resolve("home/alice"));
    Path log = Files.writeString(out.resolve("train.log"), "step 1\n");
    int mallory = (int) Files.getAttribute(log, "unix:uid");
    // alice (here: nobody) owns her log; mallory's job 31 names it in advance with sbatch -o
    Files.setOwner(
        log, log.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
    int alice = (int) Files.getAttribute(log, "unix:uid");
    Instant now = Instant.parse("2026-11-22T19:00:00Z");
    Path claim = side.resolve("31.json");
    Files.writeString(claim, sidecar("31", "vm", mallory, log, log));
    StepClock clock = new StepClock(now);
    SlurmAttribution s = source(id -> null, clock);
    assertNull(s.of(log.toString()).job(), "mallory's sidecar does not speak for alice's file");
    assertEquals(List.of(), s.followedPaths());
    assertEquals(1, s.refusedSidecars());
    clock.advance(java.time.Duration.ofSeconds(6));
    s.of(log.toString());
    assertEquals(1, s.refusedSidecars(), "counted once, not once per listing");

    // alice's own job 30 began earlier: the newest sidecar her uid owns the file for wins
    Path own = side.resolve("30.json");
    Files.writeString(own, sidecar("30", "vm", alice, log, log));
    Files.setLastModifiedTime(
        own,
        java.nio.file.attribute.FileTime.from(
            Files.getLastModifiedTime(claim).toInstant().minusSeconds(60)));
    clock.advance(java.time.Duration.ofSeconds(6));
    s.of(log.toString());
    assertEquals("30", s.of(log.toString()).job());
    assertEquals(List.of(log.toString()), s.followedPaths());
    assertEquals(1, s.refusedSidecars());
  }

  private static String sidecar(String job, String node, int uid, Path stdOut, Path stdErr) {
    return "{\"job_id\":\""
        + job
        + "\",\"user\":\"alice\",\"node\":\""
        + node
        + "\",\"gpus\":[0],\"std_out\":\""
        + stdOut
        + "\",\"std_err\":\""
        + stdErr
        + "\",\"uid\":"
        + uid
        + "}";
  }
}
