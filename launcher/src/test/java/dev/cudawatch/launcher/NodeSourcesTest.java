package dev.cudawatch.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@code local} turns on, from real files standing in for /dev/kmsg and the PATH. */
class NodeSourcesTest {
  @TempDir Path dir;

  @Test
  void aGpuNodeHasBothSourcesOn() throws Exception {
    Path kmsg = Files.writeString(dir.resolve("kmsg"), "");
    Path bin = Files.createDirectories(dir.resolve("bin"));
    Path smi = Files.writeString(bin.resolve("nvidia-smi"), "#!/bin/sh\n");
    Files.setPosixFilePermissions(smi, PosixFilePermissions.fromString("rwxr-xr-x"));
    NodeSources s =
        NodeSources.detect(false, null, false, null, kmsg.toString(), "/nowhere:" + bin);
    assertEquals(kmsg.toString(), s.kernelLog());
    assertEquals(smi.toString(), s.nvidiaSmi());
    assertTrue(s.gpuWhy().startsWith("sampling with " + smi), s.gpuWhy());
  }

  @Test
  void aLaptopSaysWhyEachIsOff() {
    NodeSources s =
        NodeSources.detect(false, null, false, null, dir.resolve("no-kmsg").toString(), "/nowhere");
    assertNull(s.kernelLog());
    assertNull(s.nvidiaSmi());
    assertTrue(s.kernelWhy().contains("is not readable here"), s.kernelWhy());
    assertTrue(s.gpuWhy().contains("nvidia-smi is not on the PATH"), s.gpuWhy());
  }

  @Test
  void flagsTurnThemOffOrReplayFiles() throws Exception {
    Path kmsg = Files.writeString(dir.resolve("kmsg"), "");
    NodeSources off = NodeSources.detect(true, null, true, null, kmsg.toString(), null);
    assertNull(off.kernelLog());
    assertEquals("off (--no-kernel-log)", off.kernelWhy());
    assertEquals("off (--no-gpu-samples)", off.gpuWhy());
    Path csv = dir.resolve("samples.csv");
    NodeSources replay = NodeSources.detect(false, kmsg, false, csv, "/dev/kmsg", null);
    assertEquals(kmsg.toAbsolutePath().toString(), replay.kernelLog());
    assertEquals(csv, replay.gpuSamples());
    assertTrue(replay.gpuWhy().startsWith("replaying"), replay.gpuWhy());
  }
}
