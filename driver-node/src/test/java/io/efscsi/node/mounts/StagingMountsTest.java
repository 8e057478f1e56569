package io.efscsi.node.mounts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import io.efscsi.node.iam.ClientCertificateSource;
import io.efscsi.node.iam.IssuedCertificatesTest;
import io.efscsi.supervisor.host.MountPoints;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A failed stage is told to the failure listener (the StageFailed event) with its reason. */
class StagingMountsTest {

  @TempDir Path tmp;

  @Test
  void aFailedStageIsToldWithTheVolumeAndTheReasonAndStillFails() {
    FakeKernel kernel = new FakeKernel();
    StagingMounts staging =
        new StagingMounts(
            () -> {
              throw DriverException.unavailable("the proxy supervisor has not started yet");
            },
            kernel,
            new MountPoints(kernel),
            ClientCertificateSource.NONE,
            Duration.ZERO);
    List<String> told = new CopyOnWriteArrayList<>();
    staging.onStageFailure((volume, why) -> told.add(volume + ": " + why));
    DriverException e =
        assertThrows(
            DriverException.class,
            () ->
                staging.stage(
                    "fs-0123456789abcdef0::fsap-0fedcba9876543210",
                    tmp.resolve("globalmount"),
                    IssuedCertificatesTest.plan("fs-0123456789abcdef0")));
    assertEquals(1, told.size(), told.toString());
    assertTrue(
        told.getFirst()
            .startsWith(
                "fs-0123456789abcdef0::fsap-0fedcba9876543210: the proxy supervisor has not"),
        told.toString());
    assertTrue(e.getMessage().contains("has not started yet"));

    staging.onStageFailure((volume, why) -> {
      throw new IllegalStateException("a broken listener");
    });
    assertThrows(
        DriverException.class,
        () ->
            staging.stage(
                "fs-1", tmp.resolve("other"), IssuedCertificatesTest.plan("fs-0123456789abcdef0")),
        "the stage's own error, not the listener's");
  }
}
