package dev.cudawatch.ingest.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The child's end, told exactly: an exit of 130 is not a SIGINT, and signals are passed on. */
class ChildProcessTest {
  @Test
  void theCLibraryIsReachableHere() {
    assertTrue(PosixChild.available(), "posix_spawn through JNA");
  }

  @Test
  void anExitOf130IsAnExitNotASignal() throws Exception {
    ExitStatus s = ChildProcess.start(List.of("sh", "-c", "exit 130")).waitFor();
    assertEquals(130, s.exitCode());
    assertNull(s.signal());
    assertEquals(130, s.shellCode());
    assertEquals("exit_code=130", s.describe());
  }

  @Test
  void deathBySignalIsASignal() throws Exception {
    ExitStatus s = ChildProcess.start(List.of("sh", "-c", "kill -INT $$")).waitFor();
    assertNull(s.exitCode());
    assertEquals(Signals.SIGINT, s.signal());
    assertEquals(130, s.shellCode());
    assertEquals("signal=2 (SIGINT)", s.describe());
  }

  @Test
  void outputArrivesOnTheRightPipesAndSignalsReachTheChild() throws Exception {
    ChildProcess c =
        ChildProcess.start(List.of("sh", "-c", "echo out; echo err >&2; exec sleep 600"));
    assertEquals("out", firstLine(c.stdout()));
    assertEquals("err", firstLine(c.stderr()));
    assertTrue(c.signal(Signals.SIGTERM));
    ExitStatus s = c.waitFor();
    assertEquals(Signals.SIGTERM, s.signal());
    assertEquals(143, s.shellCode());
  }

  @Test
  void bothChildrenGetOurEnvironmentExactlyPlusWhatIsAdded() throws Exception {
    java.util.Map<String, String> expected = new java.util.HashMap<>(System.getenv());
    expected.put("CUDAWATCH_JOB", "job7");
    List<String> envNul = List.of("env", "-0"); // every variable, NUL-separated, as given
    for (ChildProcess c :
        List.of(
            PosixChild.start(envNul, java.util.Map.of("CUDAWATCH_JOB", "job7")),
            JavaChild.start(envNul, java.util.Map.of("CUDAWATCH_JOB", "job7")))) {
      // read in a loop: FileInputStream.readAllBytes seeks, which a pipe refuses
      java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
      byte[] buf = new byte[8192];
      for (int n; (n = c.stdout().read(buf)) > 0; ) {
        bytes.write(buf, 0, n);
      }
      String out = bytes.toString(StandardCharsets.UTF_8);
      assertEquals(0, c.waitFor().exitCode());
      java.util.Map<String, String> got = new java.util.HashMap<>();
      for (String kv : out.split("\0")) {
        if (!kv.isEmpty()) {
          got.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
      }
      assertEquals(expected, got, c.getClass().getSimpleName());
    }
  }

  @Test
  void nothingAddedLeavesTheEnvironmentAsItIs() throws Exception {
    ChildProcess c = ChildProcess.start(List.of("sh", "-c", "echo \"[$CUDAWATCH_JOB]\""));
    assertEquals(
        "[" + java.util.Objects.toString(System.getenv("CUDAWATCH_JOB"), "") + "]",
        firstLine(c.stdout()));
    c.waitFor();
  }

  @Test
  void aMissingCommandFailsToStartWithItsName() {
    var e =
        org.junit.jupiter.api.Assertions.assertThrows(
            java.io.IOException.class, () -> ChildProcess.start(List.of("/nonexistent/train.py")));
    assertTrue(e.getMessage().contains("/nonexistent/train.py"), e.getMessage());
  }

  @Test
  void theShellFallbackSaysWhenAnExitCouldBeASignal() {
    assertEquals("exit_code=137 (an exit, or signal 9)", ExitStatus.fromShellCode(137).describe());
    assertEquals("exit_code=1", ExitStatus.fromShellCode(1).describe());
  }

  private static String firstLine(java.io.InputStream in) throws Exception {
    StringBuilder b = new StringBuilder();
    for (int c; (c = in.read()) != -1 && c != '\n'; ) {
      b.append((char) c);
    }
    return new String(b.toString().getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
  }
}
