package io.efscsi.controller.cloud;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.emulator.EfsEmulator;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.regions.Region;

/** The AWS adapter through the real SDK against the emulator: paging and error classes. */
class AwsCloudTest {

  EfsEmulator emu;
  SimpleMeterRegistry registry = new SimpleMeterRegistry();
  Clouds clouds;
  Cloud cloud;

  @BeforeEach
  void start() throws Exception {
    emu = EfsEmulator.start();
    clouds =
        new Clouds(
            new Clouds.Settings(
                Region.EU_WEST_1, Optional.of(emu.endpoint()), Optional.empty(), false, false),
            new ApiMetrics(registry));
    cloud = clouds.defaultCloud();
  }

  @AfterEach
  void stop() {
    clouds.close();
    emu.close();
  }

  @Test
  void listingPagesThroughEveryAccessPoint() {
    String fs = emu.createFileSystem();
    for (int i = 0; i < 2500; i++) {
      emu.seedAccessPoint(fs, i, i, "/p" + i);
    }
    Set<String> ids = new HashSet<>();
    cloud.listAccessPoints(fs, ap -> ids.add(ap.id()));
    assertEquals(2500, ids.size());
    assertEquals(3, emu.calls("DescribeAccessPoints"));
  }

  @Test
  void serverErrorsBeyondRetriesAreUnavailableAndMissingThingsAreNamed() {
    String fs = emu.createFileSystem();
    emu.faults().failNext(2);
    assertEquals(Optional.empty(), cloud.describeFileSystem(fs).availabilityZone());
    emu.faults().failNext(100);
    CloudException e = assertThrows(CloudException.class, () -> cloud.describeFileSystem(fs));
    assertEquals(CloudException.Reason.UNAVAILABLE, e.reason());
    // 3 calls for the first (2 failures, then success), 5 attempts for the second.
    assertEquals(3 + Clouds.MAX_ATTEMPTS, emu.calls("DescribeFileSystems"));
    emu.faults().clear();
    assertFalse(cloud.deleteAccessPoint("fsap-0000000000000000a"));
    assertTrue(cloud.describeAccessPoint(fs, "fsap-0000000000000000a").isEmpty());
    CloudException noFs =
        assertThrows(CloudException.class, () -> cloud.describeFileSystem("fs-0000000000000000a"));
    assertEquals(CloudException.Reason.FILE_SYSTEM_NOT_FOUND, noFs.reason());
    assertEquals(
        1.0,
        registry
            .get("aws_efs_csi_api_request_errors")
            .tags("request", "DescribeFileSystems", "code", "InternalServerError")
            .counter()
            .count());
  }
}
