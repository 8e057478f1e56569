package io.efscsi.node.cloud;

/** One place node metadata may come from; {@link NodeMetadataChain} tries them in order. */
interface NodeMetadataSource {

  /** For logs: {@code instance metadata}, {@code Kubernetes Node}. */
  String name();

  /**
   * Reads the metadata.
   *
   * @throws Unavailable with the reason when this source cannot tell
   */
  FixedNodeMetadata load();

  /** This source cannot tell; the message says why (for the log and the final error). */
  final class Unavailable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Unavailable(String reason) {
      super(reason);
    }

    Unavailable(String reason, Throwable cause) {
      super(reason, cause);
    }
  }
}
