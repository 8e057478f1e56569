package io.efscsi.supervisor;

import io.efscsi.supervisor.cgroup.CgroupDetector;
import io.efscsi.supervisor.cgroup.CgroupPlacer;
import io.efscsi.supervisor.host.Children;
import io.efscsi.supervisor.host.Posix;
import io.efscsi.supervisor.host.ProcMountTable;
import io.efscsi.supervisor.host.Unmounter;
import io.efscsi.supervisor.process.JavaProxyLauncher;
import io.efscsi.supervisor.process.ProcProcessTable;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;

/**
 * A supervisor on this host's real adapters (cgroups, {@code /proc}, the proxy launcher): what the
 * node plugin's composition asks for without knowing the supervisor's parts. Tests build a {@link
 * ProxySupervisor} from in-memory adapters instead.
 */
public final class Supervisors {

  private Supervisors() {}

  /**
   * Where each proxy's cgroup goes.
   *
   * @param mode one of {@link #MODES}
   * @param root where cgroupfs is mounted
   * @param parent the parent cgroup (or systemd slice) of every proxy's group
   */
  public record Cgroups(String mode, Path root, String parent) {

    /** The cgroup adapters: auto (detected), v2, v1, systemd (a transient scope) or none. */
    public static final List<String> MODES = CgroupDetector.MODES;
  }

  /**
   * The supervisor of {@code config}'s state dir whose proxies run from the distribution at {@code
   * home} and whose orphaned mounts {@code unmounter} detaches.
   */
  public static ProxySupervisor onThisHost(
      SupervisorConfig config,
      Cgroups cgroups,
      Path home,
      Unmounter unmounter,
      ProxySupervisor.Listener listener)
      throws IOException {
    // the native binding first: a node where it cannot load fails here, at start
    Posix.useLibrariesOf(home);
    Children children = Children.onThisHost();
    CgroupPlacer placer =
        CgroupDetector.choose(
            cgroups.mode(),
            cgroups.root(),
            cgroups.parent(),
            "systemd-run",
            Path.of("/run/systemd/system"));
    return new ProxySupervisor(
        config,
        placer,
        new JavaProxyLauncher(JavaProxyLauncher.currentJava(), home, "setsid", children),
        new ProcProcessTable(),
        new ProcMountTable(ProcMountTable.SELF),
        unmounter,
        PortAllocator::loopbackBindable,
        Clock.systemUTC(),
        listener);
  }
}
