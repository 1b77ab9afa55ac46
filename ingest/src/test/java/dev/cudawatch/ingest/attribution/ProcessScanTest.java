package dev.cudawatch.ingest.attribution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A /proc fixture as the recorded H100 node showed it: the training process holds {@code
 * /dev/nvidia0} and {@code /dev/nvidia-uvm} open and has {@code NVIDIA_VISIBLE_DEVICES=0} from the
 * container runtime, while nvidia-smi's compute-apps list is empty.
 */
class ProcessScanTest {
  @TempDir Path dir;

  @Test
  void theProcessWritingTheLogNamesItsGpu() throws Exception {
    Path res = Path.of("src/test/resources/node-h100");
    assertEquals(
        1,
        Files.readAllLines(res.resolve("compute-apps.csv")).size(),
        "nvidia-smi saw no process: only the header");
    GpuInventory inv = GpuInventory.parseQuery(Files.readString(res.resolve("query-gpu.csv")));
    Path log = Files.writeString(dir.resolve("train.log"), "step 1\n");
    Path proc = Files.createDirectories(dir.resolve("proc"));
    Path pid = Files.createDirectories(proc.resolve("4242/fd"));
    Files.createSymbolicLink(pid.resolve("1"), log.toAbsolutePath());
    Files.createSymbolicLink(pid.resolve("7"), Path.of("/dev/nvidia0"));
    Files.createSymbolicLink(pid.resolve("8"), Path.of("/dev/nvidia-uvm"));
    Files.createSymbolicLink(pid.resolve("9"), Path.of("/dev/nvidiactl"));
    Files.write(
        proc.resolve("4242/environ"),
        "PATH=/usr/bin\0NVIDIA_VISIBLE_DEVICES=0\0RANK=2\0".getBytes());
    Files.createDirectories(proc.resolve("4343/fd")); // another process, not writing it
    Files.createDirectories(proc.resolve("self"));

    ProcessScan scan =
        new ProcessScan(proc, inv, Files.readString(res.resolve("nvidia-smi-q.txt")));
    List<ProcessScan.Found> found = scan.writersOf(log);
    assertEquals(1, found.size());
    ProcessScan.Found f = found.get(0);
    assertEquals(4242, f.pid());
    assertEquals(List.of(0), f.openGpus(), "minor 0 is GPU 0 by nvidia-smi -q");
    assertEquals(0, f.fromEnvironment().gpu());
    assertEquals("GPU-a8aa2883-b011-67b6-4887-1b76e067f837", f.fromEnvironment().gpuUuid());
    assertEquals(2, f.fromEnvironment().rank());
    assertTrue(scan.writersOf(dir.resolve("other.log")).isEmpty());

    // a reader of the log (tail -f: fdinfo flags O_RDONLY) is not its writer
    Path reader = Files.createDirectories(proc.resolve("5000/fd"));
    Files.createSymbolicLink(reader.resolve("3"), log.toAbsolutePath());
    Files.createDirectories(proc.resolve("5000/fdinfo"));
    Files.writeString(proc.resolve("5000/fdinfo/3"), "pos:\t0\nflags:\t0100000\nmnt_id:\t1\n");
    Files.createDirectories(proc.resolve("4242/fdinfo"));
    Files.writeString(proc.resolve("4242/fdinfo/1"), "pos:\t7\nflags:\t02100001\nmnt_id:\t1\n");
    assertEquals(List.of(4242L), scan.writersOf(log).stream().map(ProcessScan.Found::pid).toList());

    // the agent's view: one pass over /proc, the file's records take the writer's GPU and rank
    FileAttribution.Of a =
        new FileAttribution(
                scan, java.time.Clock.systemUTC(), 60_000, Lookups.inline(new Changes()))
            .of(log.toAbsolutePath().toString());
    assertEquals(0, a.gpu());
    assertEquals(2, a.rank());
    assertEquals("writing process's open /dev/nvidia0", a.attribution().get("gpu"));
    assertEquals("4242", a.attribution().get("pid"));
    FileAttribution.Of none =
        new FileAttribution(
                scan, java.time.Clock.systemUTC(), 60_000, Lookups.inline(new Changes()))
            .of(dir.resolve("other.log").toString());
    assertEquals(null, none.gpu());
    assertTrue(none.attribution().get("tried").contains("no process had the file open"));
  }

  @Test
  void aHungNvidiaSmiIsKilledAtItsDeadlineAndTheScanGoesOn() throws Exception {
    Path smi = dir.resolve("nvidia-smi");
    Path pid = dir.resolve("smi.pid");
    // prints, then holds its stdout open: reading to the end first would wait for it for good
    Files.writeString(
        smi, "#!/bin/sh\necho \"GPU 00000000:00:06.0\"\necho $$ > " + pid + "\nexec sleep 600\n");
    Files.setPosixFilePermissions(
        smi, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
    ProcessScan scan =
        ProcessScan.forNode(smi.toString(), GpuInventory::empty, java.time.Duration.ofSeconds(2));
    java.util.Map<String, ProcessScan.Found> open = scan.openFiles(p -> false);
    assertTrue(open.isEmpty());
    long hung = Long.parseLong(Files.readString(pid).strip());
    dev.cudawatch.testkit.Await.until(
        "the hung nvidia-smi to be killed",
        () -> ProcessHandle.of(hung).map(h -> !h.isAlive()).orElse(true),
        java.time.Duration.ofSeconds(30));
  }
}
