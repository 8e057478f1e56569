package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.supervisor.host.Children;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real processes through posix_spawn and the one waiter thread (host.Children). */
class ChildrenIT {

  @TempDir Path tmp;

  private final Children children = Children.onThisHost();

  private Process run(String script, Map<String, String> env, Path out) throws IOException {
    return children.spawn(List.of("/bin/sh", "-c", script), tmp, env, out);
  }

  @Test
  void anExitCodeOutputAndErrorsReachTheCaller() throws Exception {
    Path out = tmp.resolve("out.log");
    Files.writeString(out, "before\n");
    Process p = run("echo out; echo err >&2; cat; pwd; exit 7", Map.of(), out);
    assertTrue(p.waitFor(10, TimeUnit.SECONDS));
    assertEquals(7, p.exitValue());
    assertFalse(p.isAlive());
    // appended, stderr into the same file, stdin at EOF (cat returns), run in the given directory
    assertEquals(
        List.of("before", "out", "err", tmp.toRealPath().toString()), Files.readAllLines(out));
  }

  @Test
  void theChildGetsExactlyTheGivenEnvironment() throws Exception {
    Path out = tmp.resolve("env.log");
    Process p = run("env", Map.of("EFSCSI_ONE", "1"), out);
    assertEquals(0, p.waitFor());
    List<String> env = Files.readAllLines(out);
    assertTrue(env.contains("EFSCSI_ONE=1"), env::toString);
    assertTrue(env.stream().noneMatch(l -> l.startsWith("JAVA_HOME=")), env::toString);
  }

  @Test
  void noDescriptorOfThePluginLeaksIntoAChild() throws Exception {
    try (ServerSocket listening = new ServerSocket(0)) {
      // the JDK opens its sockets without close-on-exec: without the prelude they would leak
      assertTrue(
          inheritable(Path.of("/proc/self/fdinfo")) > 0, "this JVM has inheritable descriptors");
      Path out = tmp.resolve("fds.log");
      Process p = run("ls /proc/$$/fd", Map.of(), out);
      assertEquals(0, p.waitFor());
      Set<String> fds = new TreeSet<>(Files.readAllLines(out));
      assertEquals(new TreeSet<>(List.of("0", "1", "2")), fds, "the child's descriptors");
      assertTrue(listening.isBound());
    }
  }

  @Test
  void aListeningSocketIsPassedOnAsDescriptorThreeOnlyWhenAsked() throws Exception {
    try (java.nio.channels.ServerSocketChannel owner =
        java.nio.channels.ServerSocketChannel.open()) {
      owner.bind(new java.net.InetSocketAddress("127.0.0.1", 0), 8);
      int port = ((java.net.InetSocketAddress) owner.getLocalAddress()).getPort();
      String script =
          "readlink /proc/$$/fd/3 || echo none; echo \"env=$EFSCSI_LISTEN_FD\"; ls /proc/$$/fd";
      String socket;
      try (io.efscsi.supervisor.upgrade.ListenerHandover.Taken copy =
          io.efscsi.supervisor.upgrade.ListenerHandover.take(
              ProcessHandle.current().pid(), port, () -> true)) {
        socket = Files.readSymbolicLink(Path.of("/proc/self/fd/" + copy.fd())).toString();
        Path out = tmp.resolve("inherit.log");
        Process p =
            children.spawn(
                List.of("/bin/sh", "-c", script),
                tmp,
                Map.of(),
                out,
                java.util.OptionalInt.of(copy.fd()));
        assertEquals(0, p.waitFor());
        List<String> lines = Files.readAllLines(out);
        assertEquals(List.of(socket, "env=3", "0", "1", "2", "3"), lines, "only fd 3, the socket");
      }
      Path out = tmp.resolve("plain.log");
      // a caller's own EFSCSI_LISTEN_FD does not keep a descriptor open
      Process p =
          children.spawn(
              List.of("/bin/sh", "-c", script), tmp, Map.of("EFSCSI_LISTEN_FD", "3"), out);
      assertEquals(0, p.waitFor());
      assertEquals(
          "none",
          Files.readAllLines(out).getFirst().strip().replaceAll(".*No such file.*", "none"));
      assertTrue(socket.startsWith("socket:["), socket);
    }
  }

  /** Open descriptors above 2 without O_CLOEXEC (fdinfo's flags, octal). */
  private static int inheritable(Path fdinfo) throws IOException {
    int n = 0;
    try (var files = Files.list(fdinfo)) {
      for (Path f : files.toList()) {
        if (Integer.parseInt(f.getFileName().toString()) <= 2) {
          continue;
        }
        try {
          for (String line : Files.readAllLines(f)) {
            if (line.startsWith("flags:")
                && (Integer.parseInt(line.substring(6).strip(), 8) & 02000000) == 0) {
              n++;
            }
          }
        } catch (IOException gone) {
          // closed while listed
        }
      }
    }
    return n;
  }

  @Test
  void signalsEndAChildAsTheJdkReportsThem() throws Exception {
    Process term = run("exec sleep 30", Map.of(), tmp.resolve("a.log"));
    Process kill = run("exec sleep 30", Map.of(), tmp.resolve("b.log"));
    Thread.sleep(200);
    assertTrue(term.isAlive());
    term.destroy();
    kill.destroyForcibly();
    assertTrue(term.waitFor(10, TimeUnit.SECONDS));
    assertTrue(kill.waitFor(10, TimeUnit.SECONDS));
    assertEquals(143, term.exitValue());
    assertEquals(137, kill.exitValue());
  }

  @Test
  void oneWaiterThreadForManyChildrenAndNoJdkReaper() throws Exception {
    // the JDK's reapers are a cached pool: an idle one ends after 60 s, so only new ones count
    Set<Thread> reapersBefore = named("process reaper");
    Set<Thread> waitersBefore = named("child-waiter"); // one per Children: other tests' instances
    List<Process> ps = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      ps.add(run("exec sleep 1", Map.of(), tmp.resolve("s" + i + ".log")));
    }
    assertTrue(children.live() >= 30);
    Set<Thread> waitersAfter = named("child-waiter");
    // sets, not counts: another class may start its own meanwhile
    Set<Thread> started = minus(waitersAfter, waitersBefore);
    assertEquals(1, started.size(), () -> "waiter threads started: " + started);
    assertEquals(
        Set.of(), minus(waitersBefore, waitersAfter), "other instances' waiter threads that ended");
    assertEquals(
        Set.of(),
        minus(named("process reaper"), reapersBefore),
        "JDK reaper threads started for 30 children");
    long t0 = System.nanoTime();
    for (Process p : ps) {
      assertEquals(0, p.onExit().get(10, TimeUnit.SECONDS).exitValue());
    }
    // each exit is seen within the waiter's poll of the child's end
    assertTrue((System.nanoTime() - t0) / 1e9 < 5, "exits seen in time");
    assertEquals(0, children.live());
  }

  @Test
  void anInterruptDoesNotEndTheWaiter() throws Exception {
    Set<Thread> before = named("child-waiter");
    Process first = run("exec sleep 0.2", Map.of(), tmp.resolve("i1.log"));
    Set<Thread> ours = minus(named("child-waiter"), before);
    assertEquals(1, ours.size(), () -> "waiter threads started: " + ours);
    Thread waiter = ours.iterator().next();
    // a stray caller's interrupt, and an onExit callback that leaves the waiter interrupted
    waiter.interrupt();
    first.onExit().thenRun(() -> Thread.currentThread().interrupt());
    assertEquals(0, first.onExit().get(10, TimeUnit.SECONDS).exitValue());
    Process next = run("exit 3", Map.of(), tmp.resolve("i2.log"));
    assertEquals(3, next.onExit().get(10, TimeUnit.SECONDS).exitValue(), "an exit seen after");
    assertTrue(waiter.isAlive(), "the waiter goes on");
    assertEquals(0, children.live());
  }

  private static Set<Thread> minus(Set<Thread> a, Set<Thread> b) {
    Set<Thread> out = new java.util.HashSet<>(a);
    out.removeAll(b);
    return out;
  }

  private static Set<Thread> named(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals(name) && t.isAlive())
        .collect(java.util.stream.Collectors.toSet());
  }

  @Test
  void aMissingWorkingDirectoryIsThePreludesExit() throws Exception {
    Process p =
        children.spawn(
            List.of("/bin/true"), tmp.resolve("missing"), Map.of(), tmp.resolve("c.log"));
    assertEquals(Children.EXIT_PRELUDE_FAILED, p.waitFor());
    assertTrue(
        Files.readString(tmp.resolve("c.log")).contains("No such file or directory"),
        () -> "the prelude's message: " + read(tmp.resolve("c.log")));
  }

  private static String read(Path f) {
    try {
      return Files.readString(f);
    } catch (IOException e) {
      return e.toString();
    }
  }
}
