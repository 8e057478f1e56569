package io.efscsi.common.config;

/** A command line that cannot be run: unknown flag, bad value, bad combination. Exit code 2. */
public final class UsageException extends Exception {

  private static final long serialVersionUID = 1L;

  public UsageException(String message) {
    super(message);
  }
}
