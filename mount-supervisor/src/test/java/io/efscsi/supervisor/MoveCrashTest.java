package io.efscsi.supervisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.supervisor.cgroup.CgroupPlacer;
import io.efscsi.supervisor.process.ProcessTable;
import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.state.StateStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plugin killed in the middle of a proxy move ({@link ProxyMove}) leaves the move's phase in the
 * record; the next plugin leaves exactly one proxy on the port before it adopts: the old process
 * when the successor was only starting, the successor once it was committed.
 */
class MoveCrashTest {

  @TempDir Path state;

  static final long OLD = 4242;
  static final long NEW = 5151;

  /** Groups and their processes; removing a group is recorded. */
  final Map<String, List<Long>> groups = new ConcurrentHashMap<>();

  final List<String> removed = new CopyOnWriteArrayList<>();
  final List<String> signals = new ArrayList<>();

  final CgroupPlacer placer =
      FakeGroups.placer(
          d ->
              FakeGroups.group(
                  d,
                  () -> List.copyOf(groups.getOrDefault(d, List.of())),
                  () -> {
                    removed.add(d);
                    groups.remove(d);
                  }),
          name -> {});

  final ProcessTable processes =
      FakeProcesses.table(
          pid -> groups.values().stream().anyMatch(g -> g.contains(pid)),
          1,
          (pid, force) -> {
            synchronized (signals) {
              signals.add(pid + (force ? " KILL" : " TERM"));
            }
            groups.values().forEach(g -> g.remove(pid));
          });

  private ProxyRecord record(long pid, String cgroup, ProxyRecord.Move move) {
    return StrayProxyTest.recordWithoutPid(cgroup)
        .withProcess(pid, 1, cgroup)
        .withBuild("old")
        .withMove(Optional.of(move));
  }

  private void files(String... names) throws Exception {
    for (String n : names) {
      Files.writeString(new StateStore(state).dir().resolve(n), "x");
    }
  }

  @Test
  void aSuccessorStillStartingIsKilledAndTheOldProcessAdopted() throws Exception {
    groups.put("test:proxy-20050", new CopyOnWriteArrayList<>(List.of(OLD)));
    groups.put("test:proxy-20050-b", new CopyOnWriteArrayList<>(List.of(NEW)));
    new StateStore(state)
        .write(
            record(
                OLD,
                "test:proxy-20050",
                new ProxyRecord.Move(ProxyRecord.Move.LAUNCHING, NEW, 1, "test:proxy-20050-b")));
    files("proxy-20050-b.next.sock", "proxy-20050-b.next.properties");
    try (ProxySupervisor sup = StartFailureTest.exiting(state, placer, processes, List::of)) {
      sup.start();
      assertEquals(List.of(NEW + " TERM"), signals, "only the successor");
      assertEquals(List.of("test:proxy-20050-b"), removed);
      ProxyRecord r = new StateStore(state).list().getFirst();
      assertEquals(OLD, r.pid());
      assertEquals("test:proxy-20050", r.cgroup());
      assertTrue(r.move().isEmpty(), r::toJson);
      assertEquals(1, sup.stats().adopted.get());
      assertEquals(0, sup.stats().launches.get());
      assertNoSuccessorFiles();
    }
  }

  @Test
  void aCommittedMoveRetiresTheOldProcessAndAdoptsTheSuccessor() throws Exception {
    groups.put("test:proxy-20050", new CopyOnWriteArrayList<>(List.of(OLD)));
    groups.put("test:proxy-20050-b", new CopyOnWriteArrayList<>(List.of(NEW)));
    new StateStore(state)
        .write(
            record(
                NEW,
                "test:proxy-20050-b",
                new ProxyRecord.Move(ProxyRecord.Move.RETIRING, OLD, 1, "test:proxy-20050")));
    files("proxy-20050-b.next.sock", "proxy-20050-b.next.properties");
    try (ProxySupervisor sup = StartFailureTest.exiting(state, placer, processes, List::of)) {
      sup.start();
      assertEquals(List.of(OLD + " TERM"), signals, "only the old process");
      assertEquals(List.of("test:proxy-20050"), removed);
      ProxyRecord r = new StateStore(state).list().getFirst();
      assertEquals(NEW, r.pid());
      assertEquals("test:proxy-20050-b", r.cgroup());
      assertTrue(r.move().isEmpty(), r::toJson);
      assertEquals(1, sup.stats().adopted.get());
      assertEquals(0, sup.stats().launches.get());
      assertTrue(
          Files.exists(new StateStore(state).dir().resolve("proxy-20050.sock")),
          "the successor's control socket has the proxy's own name");
      assertNoSuccessorFiles();
    }
  }

  @Test
  void aMoveWhoseSuccessorNeverStartedLeavesTheOldProcess() throws Exception {
    groups.put("test:proxy-20050-b", new CopyOnWriteArrayList<>(List.of(OLD)));
    new StateStore(state)
        .write(
            record(
                OLD,
                "test:proxy-20050-b",
                new ProxyRecord.Move(ProxyRecord.Move.LAUNCHING, 0, 0, "test:proxy-20050")));
    try (ProxySupervisor sup = StartFailureTest.exiting(state, placer, processes, List::of)) {
      sup.start();
      assertEquals(List.of(), signals);
      assertEquals(List.of("test:proxy-20050"), removed, "the successor's empty group");
      assertEquals(OLD, new StateStore(state).list().getFirst().pid());
      assertFalse(new StateStore(state).list().getFirst().move().isPresent());
    }
  }

  private void assertNoSuccessorFiles() throws Exception {
    try (var files = Files.list(new StateStore(state).dir())) {
      assertEquals(
          List.of(),
          files.map(f -> f.getFileName().toString()).filter(n -> n.contains(".next.")).toList());
    }
  }
}
