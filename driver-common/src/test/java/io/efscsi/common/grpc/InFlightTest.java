package io.efscsi.common.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.efscsi.common.error.DriverException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class InFlightTest {

  private final InFlight inFlight = new InFlight();

  @Test
  void secondCallOnABusyKeyIsAborted() {
    try (InFlight.Lease ignored = inFlight.acquire("fs-1234abcd::fsap-1")) {
      DriverException e =
          assertThrows(DriverException.class, () -> inFlight.acquire("fs-1234abcd::fsap-1"));
      assertEquals(DriverException.Kind.ABORTED, e.kind());
      assertEquals(
          "An operation with the given Volume ID fs-1234abcd::fsap-1 already exists",
          e.getMessage());
    }
  }

  @Test
  void keyIsReleasedAfterSuccess() {
    try (InFlight.Lease ignored = inFlight.acquire("vol")) {
      assertEquals(1, inFlight.size());
    }
    assertEquals(0, inFlight.size());
    inFlight.acquire("vol").close();
  }

  @Test
  void keyIsReleasedAfterFailure() {
    assertThrows(
        IllegalStateException.class,
        () -> {
          try (InFlight.Lease ignored = inFlight.acquire("vol")) {
            throw new IllegalStateException("mount failed");
          }
        });
    assertEquals(0, inFlight.size());
    inFlight.acquire("vol").close();
  }

  @Test
  void qualifiersMakeDistinctKeysButTheMessageNamesTheVolume() {
    try (InFlight.Lease a = inFlight.acquire("vol", "/target/a");
        InFlight.Lease b = inFlight.acquire("vol", "/target/b")) {
      DriverException e =
          assertThrows(DriverException.class, () -> inFlight.acquire("vol", "/target/a"));
      assertEquals("An operation with the given Volume ID vol already exists", e.getMessage());
      // the bare volume key is another key again
      inFlight.acquire("vol").close();
    }
  }

  @Test
  void closingTwiceReleasesOnlyOnce() {
    InFlight.Lease first = inFlight.acquire("vol");
    first.close();
    try (InFlight.Lease second = inFlight.acquire("vol")) {
      first.close();
      assertThrows(DriverException.class, () -> inFlight.acquire("vol"));
    }
  }

  @Test
  void exactlyOneOfManyConcurrentCallersWins() throws Exception {
    int callers = 32;
    CountDownLatch start = new CountDownLatch(1);
    CountDownLatch hold = new CountDownLatch(1);
    AtomicInteger won = new AtomicInteger();
    AtomicInteger aborted = new AtomicInteger();
    List<Future<?>> futures = new ArrayList<>();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      for (int i = 0; i < callers; i++) {
        futures.add(
            pool.submit(() -> {
              start.await();
              try (InFlight.Lease ignored = inFlight.acquire("shared")) {
                won.incrementAndGet();
                hold.await();
              } catch (DriverException e) {
                aborted.incrementAndGet();
              }
              return null;
            }));
      }
      start.countDown();
      while (won.get() + aborted.get() < callers) {
        Thread.onSpinWait();
      }
      hold.countDown();
      for (Future<?> f : futures) {
        f.get();
      }
    }
    assertEquals(1, won.get());
    assertEquals(callers - 1, aborted.get());
    assertEquals(0, inFlight.size());
  }
}
