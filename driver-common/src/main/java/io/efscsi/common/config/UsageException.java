package io.efscsi.common.config;

import java.io.PrintStream;

/** A command line that cannot be run: unknown flag, bad value, bad combination. Exit code 2. */
public final class UsageException extends Exception {

  private static final long serialVersionUID = 1L;

  public UsageException(String message) {
    super(message);
  }

  /** Tells {@code err} what was wrong and where the usage is; returns the exit code, 2. */
  public int report(PrintStream err) {
    err.println("efs-csi: " + getMessage());
    err.println("run 'efs-csi --help' for the list of commands and flags");
    return 2;
  }
}
