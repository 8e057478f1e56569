package io.efscsi.node.takeover;

/** efs-utils state that cannot be understood exactly; the mount is left alone, for this reason. */
public final class UnusableStateException extends Exception {

  private static final long serialVersionUID = 1L;

  public UnusableStateException(String reason) {
    super(reason);
  }
}
