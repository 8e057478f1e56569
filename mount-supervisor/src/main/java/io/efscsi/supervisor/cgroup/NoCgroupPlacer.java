package io.efscsi.supervisor.cgroup;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** No cgroup: proxies share the plugin's limits. Warned about loudly, once per placer. */
public final class NoCgroupPlacer implements CgroupPlacer {

  private static final Logger LOG = LoggerFactory.getLogger(NoCgroupPlacer.class);
  private static final Placement NONE =
      new Placement() {
        @Override
        public String describe() {
          return "none:";
        }

        @Override
        public long oomKills() {
          return -1;
        }

        @Override
        public void remove() {}
      };

  public NoCgroupPlacer(String why) {
    LOG.warn(
        "PROXIES RUN WITHOUT A CGROUP OF THEIR OWN ({}): no per-proxy memory or pids limit, an"
            + " overwhelmed proxy can take other mounts' memory, OOM kills are not told apart;"
            + " see docs/troubleshooting.md#proxy-cgroups",
        why);
  }

  @Override
  public String kind() {
    return "none";
  }

  @Override
  public Placement place(String name, Limits limits) {
    return NONE;
  }

  @Override
  public Placement existing(String described) {
    return NONE;
  }
}
