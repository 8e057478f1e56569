package io.efscsi.controller;

import io.efscsi.controller.provision.DirectoryRemover;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

/**
 * The in-memory DirectoryRemover: a local directory plays the file system's root, and removal and
 * archive follow the node adapter's (DirectoryCleanup's) rules on it: a missing directory is no
 * error, an archive takes the first free {@code archived-<name>}, {@code -2}, … and replaces
 * nothing. Each call waits for {@link #gate} first.
 */
final class LocalDirectoryRemover implements DirectoryRemover {

  /** One call: {@code remove} or {@code archive}, and its target. */
  record Call(String action, Target target) {}

  final Path fsRoot;
  final List<Call> calls = new CopyOnWriteArrayList<>();
  volatile CountDownLatch gate = new CountDownLatch(0);

  /** Runs after each call's work (a fault to inject between the rename and what follows). */
  volatile Runnable after = () -> {};

  LocalDirectoryRemover(Path fsRoot) {
    this.fsRoot = fsRoot;
  }

  /** The targets of every call, in order. */
  List<Target> targets() {
    return calls.stream().map(Call::target).toList();
  }

  @Override
  public boolean remove(Target t) {
    Path dir = enter("remove", t);
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      return false;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.sorted(Comparator.reverseOrder())
          .forEach(p -> {
            try {
              Files.delete(p);
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    after.run();
    return true;
  }

  @Override
  public Optional<String> archive(Target t) {
    Path dir = enter("archive", t);
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      return Optional.empty();
    }
    String base = ARCHIVE_PREFIX + dir.getFileName();
    for (int n = 1; ; n++) {
      Path to = dir.resolveSibling(n == 1 ? base : base + "-" + n);
      if (!Files.exists(to, LinkOption.NOFOLLOW_LINKS)) {
        try {
          Files.move(dir, to);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        after.run();
        return Optional.of("/" + fsRoot.relativize(to));
      }
    }
  }

  private Path enter(String action, Target t) {
    calls.add(new Call(action, t));
    try {
      gate.await();
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
    return fsRoot.resolve(t.path().substring(1));
  }
}
