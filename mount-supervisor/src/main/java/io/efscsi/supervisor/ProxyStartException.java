package io.efscsi.supervisor;

import java.io.IOException;

/** A proxy did not come up; the caller must not mount. */
public final class ProxyStartException extends IOException {

  private static final long serialVersionUID = 1L;

  /** Why. */
  public enum Reason {
    /** The proxy could not listen on its port (exit code 10). */
    BIND_FAILED,
    /** Its config was refused (exit 11) or its TLS material could not be loaded (exit 12). */
    CONFIG,
    /** It exited for another reason, or never answered on its control socket in time. */
    FAILED,
    /** The cgroup could not be created or joined. */
    CGROUP,
    /** It is crash-looping; the last exit is in the message. */
    UNAVAILABLE
  }

  /** The proxy's exit codes (ProxyMain; 97 is the cgroup wrapper's). */
  static final int EXIT_BIND_FAILED = 10;

  static final int EXIT_CONFIG = 11;
  static final int EXIT_TLS = 12;
  static final int EXIT_CGROUP = 97;

  private final Reason reason;

  public ProxyStartException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  /** The failure for a proxy that exited with {@code exit} while starting. */
  static ProxyStartException forExit(int exit, int port, String described, String logTail) {
    return switch (exit) {
      case EXIT_BIND_FAILED ->
          new ProxyStartException(
              Reason.BIND_FAILED,
              "proxy cannot listen on 127.0.0.1:" + port + " (exit 10); " + logTail);
      case EXIT_CONFIG, EXIT_TLS ->
          new ProxyStartException(
              Reason.CONFIG, "proxy refused its configuration (exit " + exit + "); " + logTail);
      case EXIT_CGROUP ->
          new ProxyStartException(Reason.CGROUP, "proxy could not join its cgroup; " + logTail);
      default ->
          new ProxyStartException(
              Reason.FAILED, "proxy " + described + " while starting; " + logTail);
    };
  }

  public Reason reason() {
    return reason;
  }
}
