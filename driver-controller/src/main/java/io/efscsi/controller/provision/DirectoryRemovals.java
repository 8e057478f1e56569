package io.efscsi.controller.provision;

import io.efscsi.common.error.DriverException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Removals that may outlast one DeleteVolume call: a directory with millions of files takes longer
 * than csi-provisioner's timeout. A removal runs on its own thread; the call waits for it as long
 * as its deadline allows and otherwise answers ABORTED, and the provisioner's retry joins the same
 * removal instead of starting a second one.
 */
final class DirectoryRemovals {

  private record Running(CompletableFuture<Boolean> result, Instant started) {}

  /** How long a finished removal nobody came back for is remembered. */
  private static final Duration KEEP_FINISHED = Duration.ofHours(1);

  private final DirectoryRemover remover;
  private final Map<String, Running> running = new ConcurrentHashMap<>();

  DirectoryRemovals(DirectoryRemover remover) {
    this.remover = remover;
  }

  /**
   * Removes the target's directory, waiting at most {@code wait}.
   *
   * @return false when it did not exist
   * @throws DriverException ABORTED when it is still running after {@code wait}; the remover's
   *     error when it failed
   */
  boolean remove(DirectoryRemover.Target target, Duration wait) {
    Instant expired = Instant.now().minus(KEEP_FINISHED);
    running.values().removeIf(r -> r.result().isDone() && r.started().isBefore(expired));
    Running fresh = new Running(new CompletableFuture<>(), Instant.now());
    Running r = running.putIfAbsent(target.accessPointId(), fresh);
    if (r == null) {
      r = fresh;
      Thread.ofVirtual()
          .name("remove-" + target.accessPointId())
          .start(() -> {
            try {
              fresh.result().complete(remover.remove(target));
            } catch (Throwable e) {
              fresh.result().completeExceptionally(e);
            }
          });
    }
    try {
      boolean existed = r.result().get(Math.max(0, wait.toMillis()), TimeUnit.MILLISECONDS);
      running.remove(target.accessPointId(), r);
      return existed;
    } catch (TimeoutException e) {
      throw DriverException.aborted(
          "the root directory %s of access point %s is still being removed (started %s s ago);"
              + " the access point is deleted once it is gone",
          target.path(),
          target.accessPointId(),
          Duration.between(r.started(), Instant.now()).toSeconds());
    } catch (ExecutionException e) {
      running.remove(target.accessPointId(), r);
      if (e.getCause() instanceof DriverException d) {
        throw d;
      }
      throw DriverException.internal(
          "removing the root directory "
              + target.path()
              + " of access point "
              + target.accessPointId()
              + " failed: "
              + e.getCause(),
          e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw DriverException.aborted("interrupted while removing %s", target.path());
    }
  }

  /** Whether a removal for this access point is running (tests). */
  boolean isRunning(String accessPointId) {
    return running.containsKey(accessPointId);
  }
}
