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

  private final Reason reason;

  public ProxyStartException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
