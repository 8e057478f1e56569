package io.efscsi.node.cloud;

import io.efscsi.common.error.DriverException;
import io.grpc.Context;
import io.grpc.Deadline;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The node metadata, resolved in the background (IMDS, else the Node object, else the environment:
 * {@link NodeMetadataChain}). A call that comes before it is known (kubelet registers the driver
 * the moment its socket appears) waits for it within the call's deadline, at most {@link
 * #METADATA_WAIT}, then answers UNAVAILABLE with the reason it is still unknown.
 */
public final class DeferredNodeMetadata implements NodeMetadata {

  /** The longest a call waits for the metadata when its gRPC deadline allows more. */
  static final Duration METADATA_WAIT = Duration.ofSeconds(60);

  /** What a call's deadline keeps for the answer itself after waiting for the metadata. */
  private static final Duration ANSWER_MARGIN = Duration.ofMillis(500);

  private final NodeMetadataChain chain;
  private final CountDownLatch known = new CountDownLatch(1);
  private volatile String lastFailure;
  private volatile NodeMetadata metadata;

  /**
   * @param chain the sources, one chain for the process (each source's failure is logged once, not
   *     at every retry)
   */
  public DeferredNodeMetadata(NodeMetadataChain chain) {
    this.chain = chain;
  }

  /**
   * The metadata, resolved at the first call that succeeds (blocking, about a second at worst);
   * throws when no source answers, and remembers why for the calls that wait on it.
   */
  public synchronized NodeMetadata resolve() {
    if (metadata == null) {
      try {
        metadata = chain.resolve();
      } catch (RuntimeException e) {
        lastFailure = e.getMessage();
        throw e;
      }
      known.countDown();
    }
    return metadata;
  }

  private NodeMetadata get() {
    NodeMetadata m = metadata;
    if (m == null && awaitMetadata(waitBudget(Context.current().getDeadline()))) {
      m = metadata;
    }
    if (m == null) {
      String why = lastFailure;
      throw DriverException.unavailable(
          "the node plugin is starting: its node metadata is not known yet%s",
          why == null ? " (still resolving)" : ": " + why);
    }
    return m;
  }

  @Override
  public String nodeId() {
    return get().nodeId();
  }

  @Override
  public String region() {
    return get().region();
  }

  @Override
  public Optional<String> availabilityZone() {
    return get().availabilityZone();
  }

  @Override
  public Optional<String> availabilityZoneId() {
    return get().availabilityZoneId();
  }

  /** How long a call with {@code deadline} (null: none) may wait for the metadata. */
  static Duration waitBudget(Deadline deadline) {
    if (deadline == null) {
      return METADATA_WAIT;
    }
    long left = deadline.timeRemaining(TimeUnit.MILLISECONDS) - ANSWER_MARGIN.toMillis();
    return Duration.ofMillis(Math.max(0, Math.min(left, METADATA_WAIT.toMillis())));
  }

  private boolean awaitMetadata(Duration wait) {
    try {
      return known.await(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
