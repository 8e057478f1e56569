package io.efscsi.supervisor.cgroup;

import java.io.IOException;

/** Puts proxies into cgroups of their own: the port for cgroup v2, v1, systemd scopes and none. */
public interface CgroupPlacer {

  /** The adapter's name: {@code v2}, {@code v1}, {@code systemd}, {@code none}. */
  String kind();

  /** Creates (or re-creates) the group {@code name} with its limits. */
  Placement place(String name, Limits limits) throws IOException;

  /** The group a state record describes (for an adopted proxy: OOM counter and removal). */
  Placement existing(String described);

  /** Splits {@code kind:where}. */
  static String where(String described) {
    int colon = described.indexOf(':');
    return colon < 0 ? "" : described.substring(colon + 1);
  }
}
