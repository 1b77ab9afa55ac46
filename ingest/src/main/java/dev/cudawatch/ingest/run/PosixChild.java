package dev.cudawatch.ingest.run;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.StringArray;
import com.sun.jna.ptr.IntByReference;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;

/**
 * A child started with the C library's {@code posix_spawnp} and reaped with {@code waitpid}, so its
 * exit is known exactly: {@code exit(130)} and death by SIGINT are told apart, which Java's process
 * API cannot do. The child gets default signal dispositions and an empty signal mask (a JVM's would
 * otherwise leak into it), this process's stdin, and pipes for stdout and stderr; the JVM's other
 * descriptors are closed in it.
 */
final class PosixChild implements ChildProcess {
  // glibc's <spawn.h> and <fcntl.h>
  private static final short POSIX_SPAWN_SETSIGDEF = 0x04;
  private static final short POSIX_SPAWN_SETSIGMASK = 0x08;
  private static final int F_SETFD = 2;
  private static final int FD_CLOEXEC = 1;
  private static final int EINTR = 4;
  // opaque glibc structures, allocated generously: file actions 80 B, attributes 336 B, sigset 128
  // B
  private static final int OPAQUE_BYTES = 1024;

  /** The few C library calls `run` needs. */
  interface LibC extends Library {
    int pipe(int[] fds) throws LastErrorException;

    int close(int fd);

    int fcntl(int fd, int cmd, int arg) throws LastErrorException;

    int posix_spawn_file_actions_init(Pointer actions);

    int posix_spawn_file_actions_adddup2(Pointer actions, int fd, int newFd);

    int posix_spawn_file_actions_addclose(Pointer actions, int fd);

    int posix_spawn_file_actions_destroy(Pointer actions);

    int posix_spawnattr_init(Pointer attr);

    int posix_spawnattr_setflags(Pointer attr, short flags);

    int posix_spawnattr_setsigmask(Pointer attr, Pointer sigset);

    int posix_spawnattr_setsigdefault(Pointer attr, Pointer sigset);

    int posix_spawnattr_destroy(Pointer attr);

    int sigemptyset(Pointer set);

    int sigfillset(Pointer set);

    int posix_spawnp(
        IntByReference pid,
        String file,
        Pointer actions,
        Pointer attr,
        StringArray argv,
        StringArray envp);

    int waitpid(int pid, IntByReference status, int options) throws LastErrorException;

    int kill(int pid, int signal) throws LastErrorException;
  }

  /** glibc 2.34+: closes every descriptor from {@code low} up in the child. */
  interface LibCCloseFrom extends Library {
    int posix_spawn_file_actions_addclosefrom_np(Pointer actions, int low);
  }

  private static final LibC C = load();

  private final int pid;
  private final InputStream stdout;
  private final InputStream stderr;
  private volatile boolean reaped;

  private PosixChild(int pid, InputStream stdout, InputStream stderr) {
    this.pid = pid;
    this.stdout = stdout;
    this.stderr = stderr;
  }

  private static LibC load() {
    try {
      return Native.load("c", LibC.class);
    } catch (UnsatisfiedLinkError | RuntimeException e) {
      return null; // no native access (noexec temp directory, no libc): Java's process API then
    }
  }

  static boolean available() {
    return C != null;
  }

  static PosixChild start(List<String> command, Map<String, String> added) throws IOException {
    int[] out = new int[2];
    int[] err = new int[2];
    C.pipe(out);
    C.pipe(err);
    Memory actions = new Memory(OPAQUE_BYTES);
    Memory attr = new Memory(OPAQUE_BYTES);
    Memory none = new Memory(OPAQUE_BYTES);
    Memory all = new Memory(OPAQUE_BYTES);
    C.posix_spawn_file_actions_init(actions);
    C.posix_spawnattr_init(attr);
    try {
      C.posix_spawn_file_actions_adddup2(actions, out[1], 1);
      C.posix_spawn_file_actions_adddup2(actions, err[1], 2);
      if (!closeFrom(actions)) {
        for (int fd : new int[] {out[0], out[1], err[0], err[1]}) {
          C.posix_spawn_file_actions_addclose(actions, fd);
        }
      }
      C.sigemptyset(none);
      C.sigfillset(all);
      C.posix_spawnattr_setsigmask(attr, none);
      C.posix_spawnattr_setsigdefault(attr, all);
      C.posix_spawnattr_setflags(attr, (short) (POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK));
      IntByReference pid = new IntByReference();
      int rc =
          C.posix_spawnp(
              pid,
              command.get(0),
              actions,
              attr,
              new StringArray(command.toArray(String[]::new)),
              new StringArray(environment(added)));
      if (rc != 0) {
        closeAll(out[0], err[0]);
        throw new IOException("cannot start " + command.get(0) + ": " + describe(rc));
      }
      for (int fd : new int[] {out[0], err[0]}) {
        C.fcntl(fd, F_SETFD, FD_CLOEXEC); // our ends must not leak into other children
      }
      return new PosixChild(pid.getValue(), open(out[0]), open(err[0]));
    } finally {
      closeAll(out[1], err[1]);
      C.posix_spawn_file_actions_destroy(actions);
      C.posix_spawnattr_destroy(attr);
    }
  }

  private static boolean closeFrom(Pointer actions) {
    try {
      return Native.load("c", LibCCloseFrom.class)
              .posix_spawn_file_actions_addclosefrom_np(actions, 3)
          == 0;
    } catch (UnsatisfiedLinkError e) {
      return false; // an older C library: the pipes are closed one by one
    }
  }

  private static String describe(int errno) {
    return switch (errno) {
      case 2 -> "No such file or directory";
      case 13 -> "Permission denied";
      case 8 -> "Exec format error";
      default -> "error " + errno;
    };
  }

  /** This process's environment, with {@code added} set over it. */
  private static String[] environment(Map<String, String> added) {
    Map<String, String> env = new java.util.LinkedHashMap<>(System.getenv());
    env.putAll(added);
    return env.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toArray(String[]::new);
  }

  /** A stream over a pipe's read end: opened anew through /proc, then the raw descriptor closed. */
  private static InputStream open(int fd) throws IOException {
    try {
      return new FileInputStream("/proc/self/fd/" + fd);
    } finally {
      C.close(fd);
    }
  }

  private static void closeAll(int... fds) {
    for (int fd : fds) {
      C.close(fd);
    }
  }

  @Override
  public long pid() {
    return pid;
  }

  @Override
  public InputStream stdout() {
    return stdout;
  }

  @Override
  public InputStream stderr() {
    return stderr;
  }

  @Override
  public ExitStatus waitFor() throws InterruptedException {
    IntByReference status = new IntByReference();
    while (true) {
      try {
        C.waitpid(pid, status, 0);
        reaped = true;
        return ExitStatus.fromWaitStatus(status.getValue());
      } catch (LastErrorException e) {
        if (e.getErrorCode() != EINTR) {
          throw new IllegalStateException("waitpid " + pid + ": " + e.getMessage(), e);
        }
      }
    }
  }

  @Override
  public boolean signal(int signal) {
    if (reaped) {
      return false; // the pid may belong to another process by now
    }
    try {
      return C.kill(pid, signal) == 0;
    } catch (LastErrorException e) {
      return false;
    }
  }
}
