package io.efscsi.controller.provision;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.efscsi.controller.cloud.Cloud.AccessPoint;
import io.efscsi.controller.provision.RootDirectoryGuard.Keep;
import io.efscsi.controller.provision.RootDirectoryGuard.Refuse;
import io.efscsi.controller.provision.RootDirectoryGuard.Remove;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RootDirectoryGuardTest {

  static AccessPoint ap(String id, String fs, String root, String base) {
    return new AccessPoint(
        id,
        fs,
        "t-" + id,
        1000,
        1000,
        root,
        base.isEmpty() ? Map.of() : Map.of(Tags.BASE_PATH_KEY, base));
  }

  /**
   * One access point being deleted (fsap-1 of the file system in its row) against fs-a of the
   * volume id, with at most one other access point on fs-a.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "plain Go-driver layout      | fs-a | /pvc-1         |       |              | remove | /pvc-1",
        "below its basePath          | fs-a | /dyn/pvc-1     | /dyn  |              | remove | /dyn/pvc-1",
        "deep below its basePath     | fs-a | /dyn/ns/pvc-1  | /dyn  | /dyn/ns2     | remove | /dyn/ns/pvc-1",
        "other access point above it | fs-a | /dyn/a/b       | /dyn  | /dyn/a       | remove | /dyn/a/b",
        "prefix is not a parent      | fs-a | /dyn/a         | /dyn  | /dyn/ab      | remove | /dyn/a",
        "root /                      | fs-a | /              |       |              | refuse | its root directory is / (removing it would empty the whole file system)",
        "empty root                  | fs-a | ''             |       |              | refuse | its root directory is / (removing it would empty the whole file system)",
        "equal to its basePath       | fs-a | /dyn           | /dyn  |              | refuse | its root directory /dyn is not below the basePath /dyn it was made for",
        "outside its basePath        | fs-a | /other/pvc-1   | /dyn  |              | refuse | its root directory /other/pvc-1 is not below the basePath /dyn it was made for",
        "sibling with the prefix     | fs-a | /dynamic/pvc   | /dyn  |              | refuse | its root directory /dynamic/pvc is not below the basePath /dyn it was made for",
        "dot-dot in the root         | fs-a | /dyn/../etc    | /dyn  |              | refuse | its root directory '/dyn/../etc' is not a clean absolute path",
        "relative root               | fs-a | pvc-1          |       |              | refuse | its root directory 'pvc-1' is not a clean absolute path",
        "trailing slash              | fs-a | /pvc-1/        |       |              | refuse | its root directory '/pvc-1/' is not a clean absolute path",
        "another file system's       | fs-b | /pvc-1         |       |              | refuse | it belongs to file system fs-b, not to fs-a of the volume id",
        "shared with another         | fs-a | /ns            |       | /ns          | keep   | access point fsap-2 has the same root directory",
        "another access point below  | fs-a | /ns            |       | /ns/pvc-9    | keep   | access point fsap-2 has its root /ns/pvc-9 below it",
        "another rooted at /         | fs-a | /pvc-1         |       | /            | remove | /pvc-1",
      })
  void decides(
      String name,
      String fs,
      String root,
      String base,
      String otherRoot,
      String verdict,
      String detail) {
    AccessPoint deleting = ap("fsap-1", fs, root == null ? "" : root, base == null ? "" : base);
    List<AccessPoint> all =
        otherRoot == null
            ? List.of(deleting)
            : List.of(deleting, ap("fsap-2", "fs-a", otherRoot, ""));
    RootDirectoryGuard.Verdict v = RootDirectoryGuard.check(deleting, "fs-a", all);
    switch (verdict) {
      case "remove" -> assertEquals(new Remove(detail), v, name);
      case "keep" -> assertEquals(new Keep(detail), v, name);
      default -> assertEquals(new Refuse(detail), v, name);
    }
  }
}
