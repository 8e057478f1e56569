package io.efscsi.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/** A {@link SupervisorHost} child JVM and its line protocol. */
final class Host implements AutoCloseable {

  final Process process;
  private final PrintStream in;
  private final BlockingQueue<String> lines = new ArrayBlockingQueue<>(10_000);

  private Host(Process process) {
    this.process = process;
    this.in = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
    Thread.ofVirtual().start(this::readLines);
  }

  private void readLines() {
    var reader = new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8);
    try (BufferedReader r = new BufferedReader(reader)) {
      String l;
      while ((l = r.readLine()) != null) {
        lines.add(l);
      }
    } catch (IOException ignored) {
      // the host died; callers time out
    }
  }

  static Host start(Path log, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx128m");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(SupervisorHost.class.getName());
    cmd.add("--home");
    cmd.add(PackagedDriver.distDir().toString());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
    Host h = new Host(pb.start());
    String first = h.next(60);
    if (!"started".equals(first)) {
      throw new IllegalStateException("supervisor host did not start: " + first + "; see " + log);
    }
    return h;
  }

  String next(int seconds) throws InterruptedException {
    String l = lines.poll(seconds, TimeUnit.SECONDS);
    if (l == null) {
      throw new IllegalStateException("supervisor host gave no answer in " + seconds + " s");
    }
    return l;
  }

  /** Sends a command and returns its one-line answer. */
  String ask(String command) throws InterruptedException {
    in.println(command);
    return next(60);
  }

  /** {@code ensure} that must succeed: the proxy's port. */
  int ensure(String key, int upstreamPort, String user) throws InterruptedException {
    String a = ask("ensure " + key + " " + upstreamPort + " " + user);
    if (!a.startsWith("ok ")) {
      throw new AssertionError("ensure " + key + " failed: " + a);
    }
    return Integer.parseInt(a.substring(3));
  }

  /** One proxy's status line fields: key port pid state restarts oom crashLooping lastExit. */
  record Status(
      String key,
      int port,
      long pid,
      String state,
      long restarts,
      long oom,
      boolean crashLooping,
      String lastExit) {}

  List<Status> status() throws InterruptedException {
    in.println("status");
    List<Status> out = new ArrayList<>();
    for (String l = next(30); !l.equals("end"); l = next(30)) {
      String[] f = l.split(" ");
      out.add(
          new Status(
              f[1],
              Integer.parseInt(f[2]),
              Long.parseLong(f[3]),
              f[4],
              Long.parseLong(f[5]),
              Long.parseLong(f[6]),
              Boolean.parseBoolean(f[7]),
              f[8]));
    }
    return out;
  }

  Status status(String key) throws InterruptedException {
    return status().stream()
        .filter(s -> s.key().equals(key))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no proxy for " + key));
  }

  /**
   * The value of one series of the node's /metrics ({@code name{labels}} exactly as exposed, e.g.
   * {@code efs_csi_volume_proxy_restarts_total{port="20049",volume="fs-1"}}); NaN when absent.
   */
  double metric(String series) throws InterruptedException {
    in.println("metrics");
    double v = Double.NaN;
    for (String l = next(30); !l.equals("end"); l = next(30)) {
      int space = l.lastIndexOf(' ');
      if (l.substring(0, space).equals(series)) {
        v = Double.parseDouble(l.substring(space + 1));
      }
    }
    return v;
  }

  String stats() throws InterruptedException {
    return ask("stats");
  }

  /** Closes the supervisor as a plugin stopping on SIGTERM does: its proxies run on. */
  void quit() throws InterruptedException {
    String a = ask("quit");
    if (!a.equals("ok")) {
      throw new AssertionError("quit: " + a);
    }
    process.waitFor(30, TimeUnit.SECONDS);
  }

  /** SIGKILL, as an OOM kill or a crash of the plugin container would. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws Exception {
    if (process.isAlive()) {
      try {
        ask("stopall");
      } catch (RuntimeException e) {
        // fall through to the kill
      }
      kill();
    }
  }
}
