package io.efscsi.controller.provision;

import io.efscsi.common.error.DriverException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Removals (and archives) that may outlast one DeleteVolume call: a directory with millions of
 * files takes longer than csi-provisioner's timeout. A removal runs on its own thread; the call
 * waits for it as long as its deadline allows and otherwise answers ABORTED, and the provisioner's
 * retry joins the same removal instead of starting a second one.
 */
final class DirectoryRemovals {

  private record Running(CompletableFuture<Object> result, Instant started) {}

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
    return run("removed", target, remover::remove, wait);
  }

  /**
   * Archives the target's directory ({@link DirectoryRemover#archive}), waiting at most {@code
   * wait}.
   *
   * @return the archived path, empty when the directory did not exist
   */
  Optional<String> archive(DirectoryRemover.Target target, Duration wait) {
    return run("archived", target, remover::archive, wait);
  }

  @SuppressWarnings("unchecked")
  private <T> T run(
      String verb,
      DirectoryRemover.Target target,
      Function<DirectoryRemover.Target, T> work,
      Duration wait) {
    Instant expired = Instant.now().minus(KEEP_FINISHED);
    running.values().removeIf(r -> r.result().isDone() && r.started().isBefore(expired));
    String key = target.accessPointId() + " " + verb;
    Running fresh = new Running(new CompletableFuture<>(), Instant.now());
    Running r = running.putIfAbsent(key, fresh);
    if (r == null) {
      r = fresh;
      Thread.ofVirtual()
          .name("remove-" + target.accessPointId())
          .start(() -> {
            try {
              fresh.result().complete(work.apply(target));
            } catch (Throwable e) {
              fresh.result().completeExceptionally(e);
            }
          });
    }
    try {
      Object done = r.result().get(Math.max(0, wait.toMillis()), TimeUnit.MILLISECONDS);
      running.remove(key, r);
      return (T) done;
    } catch (TimeoutException e) {
      throw DriverException.aborted(
          "the root directory %s of access point %s is still being %s (started %s s ago);"
              + " the access point is deleted once that is done",
          target.path(),
          target.accessPointId(),
          verb,
          Duration.between(r.started(), Instant.now()).toSeconds());
    } catch (ExecutionException e) {
      running.remove(key, r);
      if (e.getCause() instanceof DriverException d) {
        throw d;
      }
      throw DriverException.internal(
          "the root directory "
              + target.path()
              + " of access point "
              + target.accessPointId()
              + " could not be "
              + verb
              + ": "
              + e.getCause(),
          e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw DriverException.aborted("interrupted while %s %s", verb, target.path());
    }
  }

  /** Whether a removal or archive for this access point is running (tests). */
  boolean isRunning(String accessPointId) {
    return running.keySet().stream().anyMatch(k -> k.startsWith(accessPointId + " "));
  }
}
