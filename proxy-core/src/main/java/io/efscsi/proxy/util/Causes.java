package io.efscsi.proxy.util;

/** What an exception chain says at its root, for one-line messages. */
public final class Causes {

  private Causes() {}

  /** {@code SimpleName: message} of the innermost cause. */
  public static String rootMessage(Throwable t) {
    Throwable r = t;
    while (r.getCause() != null && r.getCause() != r) {
      r = r.getCause();
    }
    return r.getClass().getSimpleName() + ": " + r.getMessage();
  }
}
