package io.efscsi.supervisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.supervisor.cgroup.CgroupPlacer;
import io.efscsi.supervisor.cgroup.Placement;
import io.efscsi.supervisor.process.ProcessTable;
import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.state.StateStore;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plugin killed between a proxy's launch and the record of its pid leaves that proxy running,
 * unnamed, in the group the record names (the group is recorded before the launch): the next start
 * kills it before it restarts the proxy, so the restart can bind the port. Found by the kernel VM
 * suite's scenario 10: the stray held the port, every restart exited 10 (bind failed) and the
 * volume's retried NodeStage failed as crash-looping.
 */
class StrayProxyTest {

  @TempDir Path state;

  final List<Long> inGroup = new CopyOnWriteArrayList<>(List.of(4242L));
  final List<String> signals = new ArrayList<>();
  final List<String> placedAt = new ArrayList<>();

  final Placement group =
      FakeGroups.group("test:efs-csi/proxy-20050", () -> List.copyOf(inGroup), () -> {});

  final CgroupPlacer placer =
      FakeGroups.placer(d -> group, name -> placedAt.add(name + " with " + inGroup));

  final ProcessTable processes =
      FakeProcesses.table(
          inGroup::contains,
          1,
          (pid, force) -> {
            signals.add(pid + (force ? " KILL" : " TERM"));
            inGroup.remove(pid);
          });

  @Test
  void aProxyLaunchedButNotRecordedIsKilledBeforeTheRestart() throws Exception {
    new StateStore(state).write(recordWithoutPid("test:efs-csi/proxy-20050"));
    try (ProxySupervisor sup = StartFailureTest.exiting(state, placer, processes, List::of)) {
      sup.start();
      assertEquals(List.of("4242 KILL"), signals, "the stray is killed");
      assertTrue(
          placedAt.stream().allMatch(p -> p.endsWith("[]")),
          "the restart came after the group was empty: " + placedAt);
      assertTrue(sup.holds(20050), "the volume keeps its port");
    }
  }

  /**
   * The record of a wanted proxy on port 20050 in group {@code cgroup} ("" when the plugin died
   * before it recorded the group) whose pid the plugin did not record before it died.
   */
  static ProxyRecord recordWithoutPid(String cgroup) {
    return new ProxyRecord(
        "proxy-20050",
        "fs-1|key",
        20050,
        0,
        0,
        cgroup,
        Map.of(
            "listen.port", "20050",
            "upstream.host", "127.0.0.1",
            "upstream.port", "2049",
            "tls", "false",
            "bind.protocol", "none"),
        Set.of("/staging/a"),
        0,
        1);
  }
}
