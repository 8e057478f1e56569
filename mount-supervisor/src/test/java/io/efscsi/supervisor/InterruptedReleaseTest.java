package io.efscsi.supervisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.supervisor.cgroup.CgroupPlacer;
import io.efscsi.supervisor.cgroup.NoCgroupPlacer;
import io.efscsi.supervisor.host.MountInfoParser;
import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.state.StateStore;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plugin killed in the middle of an unstage leaves a record whose last user is gone (the proxy
 * perhaps still running): the next start finishes that release at once, unless a mount still
 * carries the port (then the reconciler unmounts the orphan first). Found by NodeCrashIT: such a
 * record, its cgroup and its port were held for the whole mount-absent grace.
 */
class InterruptedReleaseTest {

  @TempDir Path state;

  static ProxyRecord record(String id, int port, Set<String> users) {
    return new ProxyRecord(
        id,
        "key-" + id,
        port,
        4_000_000 + port,
        77,
        "",
        Map.of(
            "listen.port", Integer.toString(port),
            "upstream.host", "127.0.0.1",
            "upstream.port", "2049",
            "tls", "false",
            "bind.protocol", "none"),
        users,
        0,
        1);
  }

  @Test
  void aReleaseACrashInterruptedIsFinishedAtStartUnlessAMountCarriesThePort() throws Exception {
    StateStore store = new StateStore(state);
    store.write(record("released", 20050, Set.of()));
    store.write(record("orphan", 20051, Set.of()));
    store.write(record("wanted", 20052, Set.of("/staging/a")));
    String orphanMount =
        "812 29 0:55 / /staging/b rw,relatime shared:412 - nfs4 127.0.0.1:/ rw,vers=4.1,"
            + "port=20051,addr=127.0.0.1";
    try (ProxySupervisor sup =
        StartFailureTest.exiting(
            state,
            new NoCgroupPlacer("test"),
            StartFailureTest.NO_PROCESSES,
            () -> List.of(MountInfoParser.parseLine(orphanMount, 1)))) {
      sup.start();
      List<String> left = store.list().stream().map(ProxyRecord::id).sorted().toList();
      assertFalse(left.contains("released"), "the interrupted release is finished: " + left);
      assertFalse(sup.holds(20050), "its port is free again");
      assertTrue(left.contains("wanted"), left.toString());
      // the orphan's port stays held while a mount (which umount -l here never removes) is on it
      assertTrue(left.contains("orphan") && sup.holds(20051), left.toString());
    }
  }

  /**
   * A group goes before the record that names it: a plugin killed between the two leaves a record
   * (whose release the next start finishes), never a group no record names. The CI run of
   * NodeCrashIT found a cgroup pair left after every volume was unstaged: the record had gone
   * first.
   */
  @Test
  void aProxysGroupIsRemovedWhileItsRecordStillNamesIt() throws Exception {
    StateStore store = new StateStore(state);
    store.write(record("proxy-20050", 20050, Set.of()).withProcess(0, 0, "test:proxy-20050"));
    ProxyRecord first = record("proxy-20053", 20053, Set.of("/staging/c"));
    store.write(first.withProcess(0, 0, "test:proxy-20053"));
    // a second record for the same key, as a half-written migration could leave
    store.write(
        new ProxyRecord(
            "proxy-20054",
            first.key(),
            20054,
            0,
            0,
            "test:proxy-20054",
            first.config(),
            first.users(),
            0,
            1));
    List<String> removedWithRecord = new ArrayList<>();
    CgroupPlacer placer =
        FakeGroups.placer(
            described -> {
              String id = CgroupPlacer.where(described);
              return FakeGroups.group(
                  described,
                  List::of,
                  () ->
                      removedWithRecord.add(
                          id
                              + (java.nio.file.Files.exists(store.recordFile(id))
                                  ? " recorded"
                                  : " unrecorded")));
            },
            name -> {});
    try (ProxySupervisor sup =
        StartFailureTest.exiting(state, placer, StartFailureTest.NO_PROCESSES, List::of)) {
      sup.start();
      List<String> left = store.list().stream().map(ProxyRecord::id).sorted().toList();
      assertEquals(List.of("proxy-20053"), left, "the release and the duplicate are gone");
      assertEquals(
          List.of("proxy-20050 recorded", "proxy-20054 recorded"),
          removedWithRecord.stream().sorted().toList(),
          "each group was removed while its record still named it");
    }
  }
}
