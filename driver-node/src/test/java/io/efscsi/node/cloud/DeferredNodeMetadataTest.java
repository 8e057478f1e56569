package io.efscsi.node.cloud;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import io.grpc.Context;
import io.grpc.Deadline;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class DeferredNodeMetadataTest {

  final AtomicInteger imds = new AtomicInteger();
  final AtomicInteger node = new AtomicInteger();
  final FixedNodeMetadata known =
      new FixedNodeMetadata("i-1", "us-east-1", Optional.of("us-east-1a"), "test");

  /** A call with a 600 ms deadline: 100 ms to wait, 500 kept for the answer. */
  private static <T> T withShortDeadline(Callable<T> call) throws Exception {
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    try {
      return Context.current().withDeadlineAfter(600, TimeUnit.MILLISECONDS, timer).call(call);
    } finally {
      timer.shutdownNow();
    }
  }

  @Test
  void aCallBeforeTheMetadataIsKnownWaitsWithinItsDeadlineThenSaysWhy() {
    DeferredNodeMetadata m =
        new DeferredNodeMetadata(
            new NodeMetadataChain(
                List.of(NodeMetadataChainTest.failing("instance metadata", "timed out", imds)),
                Map.of()));
    DriverException still = assertThrows(DriverException.class, () -> withShortDeadline(m::nodeId));
    assertEquals(DriverException.Kind.UNAVAILABLE, still.kind());
    assertEquals(
        "the node plugin is starting: its node metadata is not known yet (still resolving)",
        still.getMessage());
    DriverException failed = assertThrows(DriverException.class, m::resolve);
    DriverException why = assertThrows(DriverException.class, () -> withShortDeadline(m::region));
    assertEquals(
        "the node plugin is starting: its node metadata is not known yet: " + failed.getMessage(),
        why.getMessage());
  }

  @Test
  void onceResolvedEveryCallAnswersAndTheSourcesAreNotAskedAgain() throws Exception {
    DeferredNodeMetadata m =
        new DeferredNodeMetadata(
            new NodeMetadataChain(List.of(NodeMetadataChainTest.answering(known, node)), Map.of()));
    assertSame(known, m.resolve());
    assertSame(known, m.resolve());
    assertEquals(1, node.get());
    assertEquals("i-1", withShortDeadline(m::nodeId));
    assertEquals(Optional.of("us-east-1a"), m.availabilityZone());
  }

  @Test
  void theWaitIsTheDeadlineLessTheAnswersMarginAtMostAMinute() {
    assertEquals(Duration.ofSeconds(60), DeferredNodeMetadata.waitBudget(null));
    assertEquals(
        Duration.ofSeconds(60),
        DeferredNodeMetadata.waitBudget(Deadline.after(10, TimeUnit.MINUTES)));
    assertEquals(
        Duration.ZERO, DeferredNodeMetadata.waitBudget(Deadline.after(100, TimeUnit.MILLISECONDS)));
    long ms = DeferredNodeMetadata.waitBudget(Deadline.after(10, TimeUnit.SECONDS)).toMillis();
    assertTrue(ms > 9_000 && ms <= 9_500, String.valueOf(ms));
  }
}
