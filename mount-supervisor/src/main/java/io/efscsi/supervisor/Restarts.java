package io.efscsi.supervisor;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The restarts in flight, each on a virtual thread of its own. Once closed, none starts, and {@link
 * #close} waits (up to a bound) for those running: nothing writes to the state dir after the
 * supervisor is closed (a test's state dir was written to while JUnit deleted it).
 */
final class Restarts {

  private final Set<Thread> running = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /** Runs {@code restart} on a thread of its own unless closed. */
  void run(Runnable restart) {
    if (closed) {
      return;
    }
    Thread t =
        Thread.ofVirtual()
            .unstarted(() -> {
              try {
                if (!closed) {
                  restart.run();
                }
              } finally {
                running.remove(Thread.currentThread());
              }
            });
    running.add(t);
    t.start();
  }

  /** Starts no more restarts and waits up to {@code bound} for those in flight. */
  void close(Duration bound) {
    closed = true;
    long deadline = System.nanoTime() + bound.toNanos();
    for (Thread t : List.copyOf(running)) {
      try {
        t.join(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
