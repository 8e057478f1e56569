package io.efscsi.supervisor.process;

import io.efscsi.supervisor.host.Posix;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.Stream;
import jnr.constants.platform.Signal;

/**
 * Reads {@code /proc/<pid>/stat} only: never {@code cmdline} or {@code environ} of another process,
 * which read its memory and can hang behind a process stuck on a dead NFS mount.
 */
public final class ProcProcessTable implements ProcessTable {

  private final Path proc;

  public ProcProcessTable(Path proc) {
    this.proc = proc;
  }

  public ProcProcessTable() {
    this(Path.of("/proc"));
  }

  @Override
  public OptionalLong startTicks(long pid) {
    String stat;
    try {
      stat =
          Files.readString(
              proc.resolve(Long.toString(pid)).resolve("stat"), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return OptionalLong.empty();
    }
    return parseStartTicks(stat);
  }

  /**
   * Field 22 (starttime) of a stat line; the comm field (2) may hold spaces and parentheses, so
   * fields are counted after its last ')'. A zombie (state Z) or dead (X) process counts as gone.
   */
  static OptionalLong parseStartTicks(String stat) {
    String[] f = fields(stat);
    // f[0] is field 3 (state), so field 22 is f[19].
    if (f.length < 20 || f[0].equals("Z") || f[0].equals("X")) {
      return OptionalLong.empty();
    }
    try {
      return OptionalLong.of(Long.parseLong(f[19]));
    } catch (NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  @Override
  public Optional<Activity> activity(long pid) {
    Path dir = proc.resolve(Long.toString(pid));
    long now = System.nanoTime();
    String[] f;
    try {
      f = fields(Files.readString(dir.resolve("stat"), StandardCharsets.UTF_8));
    } catch (IOException e) {
      return Optional.empty();
    }
    if (f.length < 13 || f[0].equals("Z") || f[0].equals("X")) {
      return Optional.empty();
    }
    long cpu;
    try {
      cpu = Long.parseLong(f[11]) + Long.parseLong(f[12]); // fields 14 utime and 15 stime
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
    int runnable = 0;
    try (Stream<Path> tasks = Files.list(dir.resolve("task"))) {
      for (Path t : (Iterable<Path>) tasks::iterator) {
        try {
          String[] tf = fields(Files.readString(t.resolve("stat"), StandardCharsets.UTF_8));
          runnable += tf.length > 0 && tf[0].equals("R") ? 1 : 0;
        } catch (IOException e) {
          // the thread ended meanwhile
        }
      }
    } catch (IOException e) {
      runnable = f[0].equals("R") ? 1 : 0;
    }
    return Optional.of(new Activity(cpu, runnable, now));
  }

  /** The fields of a stat line from field 3 (state) on, counted after comm's last ')'. */
  static String[] fields(String stat) {
    int close = stat.lastIndexOf(')');
    return close < 0 || close + 2 > stat.length()
        ? new String[0]
        : stat.substring(close + 2).trim().split(" ");
  }

  @Override
  public void signal(long pid, boolean force) {
    if (pid > 0) {
      Posix.get().kill(pid, (force ? Signal.SIGKILL : Signal.SIGTERM).intValue());
    }
  }
}
