package io.efscsi.node.volume;

import io.efscsi.common.error.DriverException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * The files a volume's mount options name: {@code cafile=} (read by the proxy) and {@code jwtpath=}
 * (read for STS). As with efs-utils any path is accepted, but it must be a regular file the node
 * plugin can read, not one of the kernel's files under {@code /proc}, {@code /sys} or {@code /dev}.
 * Only the file's kind is looked at here, never its contents, and no message names more than the
 * path.
 */
public final class OptionFiles {

  private static final List<Path> KERNEL_DIRS =
      List.of(Path.of("/proc"), Path.of("/sys"), Path.of("/dev"));

  private OptionFiles() {}

  /**
   * {@code plan} when its CA file and web identity token file are usable.
   *
   * @throws DriverException INVALID_ARGUMENT naming the option and what is wrong with its file
   */
  public static MountPlan check(MountPlan plan) {
    plan.caFile().ifPresent(f -> check("cafile", f));
    plan.credentials().jwtPath().ifPresent(f -> check("jwtpath", Path.of(f)));
    return plan;
  }

  private static void check(String option, Path file) {
    String problem = problem(file);
    if (problem != null) {
      throw new DriverException(
          DriverException.Kind.INVALID_ARGUMENT,
          "mount option '" + option + "=" + file + "' is invalid: " + problem);
    }
  }

  /** What is wrong with {@code file} for reading, or {@code null}. */
  static String problem(Path file) {
    Path real;
    try {
      real = file.toRealPath();
    } catch (NoSuchFileException e) {
      return file + " does not exist on this node";
    } catch (IOException e) {
      return file + " cannot be resolved (" + e.getClass().getSimpleName() + ")";
    }
    String resolved = real.equals(file) ? "" : " (it resolves to " + real + ")";
    for (Path dir : KERNEL_DIRS) {
      if (real.startsWith(dir)) {
        return file
            + resolved
            + " is one of the kernel's files in "
            + dir
            + ", not a file of its own";
      }
    }
    if (!Files.isRegularFile(real)) {
      return file + resolved + " is not a regular file";
    }
    if (!Files.isReadable(real)) {
      return file + resolved + " is not readable by the node plugin";
    }
    return null;
  }
}
