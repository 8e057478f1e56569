package io.efscsi.controller.provision;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.efscsi.common.error.DriverException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class VolumeIdAndTagsTest {

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "fs-0123abcd|efs|fs-0123abcd||",
        "fs-0123abcd:/a/b|efs|fs-0123abcd|/a/b|",
        "fs-0123abcd::fsap-0123abcd|efs|fs-0123abcd||fsap-0123abcd",
        "fs-0123abcd:/a:fsap-0123abcd|efs|fs-0123abcd|/a|fsap-0123abcd",
        "efs:fs-0123abcd::fsap-0123abcd|efs|fs-0123abcd||fsap-0123abcd",
        "efs:fs-0123abcd|efs|fs-0123abcd||",
        "s3files:fs-0123abcd:/x|s3files|fs-0123abcd|/x|"
      })
  void everyFormTheGoDriverAccepts(String id, String type, String fs, String path, String ap) {
    assertEquals(
        new VolumeId(type, fs, path == null ? "" : path, Optional.ofNullable(ap)),
        VolumeId.parse(id));
  }

  @Test
  void createVolumeAnswersTheFormFargateAccepts() {
    String id = VolumeId.format("fs-0123abcd", "fsap-0123abcd");
    assertEquals("fs-0123abcd::fsap-0123abcd", id, "as v3.5.0 writes it: no efs: prefix");
    assertEquals(Optional.of("fsap-0123abcd"), VolumeId.parse(id).accessPointId());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "vol-1|volume ID 'vol-1' is invalid: Expected a file system ID of the form"
            + " 'fs-[0-9a-f]{8,40}', got 'vol-1'",
        "fs-0123abcd::ap-1|volume ID 'fs-0123abcd::ap-1' is invalid: Expected an access point ID"
            + " of the form 'fsap-[0-9a-f]{8,40}', got 'ap-1'",
        "fs-0123abcd:a:b:c|volume ID 'fs-0123abcd:a:b:c' is invalid: expected"
            + " fs-ID[:path[:fsap-ID]], optionally prefixed by efs: or s3files:"
      })
  void badHandlesNameTheValue(String id, String message) {
    DriverException e = assertThrows(DriverException.class, () -> VolumeId.parse(id));
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
    assertEquals(message, e.getMessage());
  }

  @Test
  void tagsWithEscapes() {
    Tags t = Tags.parse("team:storage url:http\\://x cost\\ center:a\\ b back\\\\slash:v k:v:w");
    assertEquals(
        Map.of(
            "team", "storage",
            "url", "http://x",
            "cost center", "a b",
            "back\\slash", "v",
            "k", "v:w"),
        t.values());
    assertEquals(List.of(), t.skipped());
  }

  @Test
  void unreadableTagsAreSkippedAndReported() {
    Tags t = Tags.parse("  novalue :empty good:1  ");
    assertEquals(Map.of("good", "1"), t.values());
    assertEquals(List.of("novalue", ":empty"), t.skipped());
    assertEquals(Map.of(), Tags.parse("").values());
  }

  @Test
  void gidAllocatorTakesTheLowestFreeGidAndReusesReleasedOnes() {
    GidAllocator g = new GidAllocator("fs-1");
    g.use(100);
    g.use(102);
    assertEquals(101, g.allocate(100, 104));
    assertEquals(103, g.allocate(100, 104));
    assertEquals(104, g.allocate(100, 104));
    DriverException full = assertThrows(DriverException.class, () -> g.allocate(100, 104));
    assertEquals(DriverException.Kind.RESOURCE_EXHAUSTED, full.kind());
    assertEquals(
        "Failed to locate a free GID for given file system: fs-1. Please create a new storage"
            + " class with a new file-system (every GID in 100-104 is in use)",
        full.getMessage());
    g.release(102);
    assertEquals(102, g.allocate(100, 104));
    // A GID shared by two access points stays used until both are gone.
    g.use(50);
    g.use(50);
    g.release(50);
    assertEquals(51, g.allocate(50, 51));
  }
}
