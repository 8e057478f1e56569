package io.efscsi.supervisor;

import io.efscsi.supervisor.host.MountPresence;

/** The reconciler's one decision table. */
public enum Decision {
  /** Proxy up and its mount present, or not sure yet: leave it. */
  NOTHING,
  /** Proxy down, mount present, someone wants it: restart on the same port. */
  RESTART,
  /** Proxy down, mount present, nobody wants it: {@code umount -l}, then release the port. */
  UNMOUNT_THEN_RELEASE,
  /** Proxy up, no mount past the grace period: stop it, release the port. */
  STOP_AND_RELEASE,
  /** Proxy down, no mount: forget it, release the port. */
  RELEASE;

  /**
   * @param proxyUp the proxy process is alive (or a restart of it is already scheduled)
   * @param mount the state of the loopback mount on its port
   * @param wanted someone (a staged volume) still wants it
   */
  public static Decision decide(boolean proxyUp, MountPresence.State mount, boolean wanted) {
    return switch (mount) {
      case UNSURE -> NOTHING;
      case PRESENT -> proxyUp ? NOTHING : wanted ? RESTART : UNMOUNT_THEN_RELEASE;
      case ABSENT -> proxyUp ? STOP_AND_RELEASE : RELEASE;
    };
  }
}
