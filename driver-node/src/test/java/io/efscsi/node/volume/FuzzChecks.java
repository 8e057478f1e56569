package io.efscsi.node.volume;

/** What the fuzz tests of this package ask of a refusal. */
final class FuzzChecks {

  private FuzzChecks() {}

  /** A refusal says something: a message of its own, not an empty or null one. */
  static void clear(RuntimeException e) {
    if (e.getMessage() == null || e.getMessage().isBlank()) {
      throw new AssertionError("a refusal without a message", e);
    }
  }
}
