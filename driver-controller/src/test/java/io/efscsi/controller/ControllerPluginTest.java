package io.efscsi.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.config.FlagSet;
import io.efscsi.common.config.Flags;
import io.efscsi.common.config.UsageException;
import io.efscsi.common.identity.Readiness;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ControllerPluginTest {

  private static ControllerOptions options(Map<String, String> values) throws UsageException {
    return ControllerOptions.from(Flags.of(new FlagSet().addAll(ControllerOptions.FLAGS), values));
  }

  @Test
  void regionComesFromFlagThenEnvThenInstanceMetadata() {
    RegionResolver.Imds imds = () -> Optional.of("eu-west-1");
    assertEquals(
        "us-west-2",
        new RegionResolver(Optional.of("us-west-2"), Map.of("AWS_REGION", "x"), imds)
            .resolve()
            .orElseThrow()
            .region());
    assertEquals(
        new RegionResolver.Found("ap-south-1", "AWS_DEFAULT_REGION"),
        new RegionResolver(Optional.empty(), Map.of("AWS_DEFAULT_REGION", "ap-south-1"), imds)
            .resolve()
            .orElseThrow());
    assertEquals(
        new RegionResolver.Found("eu-west-1", "instance metadata"),
        new RegionResolver(Optional.empty(), Map.of(), imds).resolve().orElseThrow());
    assertTrue(new RegionResolver(Optional.empty(), Map.of(), Optional::empty).resolve().isEmpty());
  }

  @Test
  void theNodesRegionLabelIsTheLastSourceAndUsedWhenMetadataIsOffOrSilent() {
    RegionResolver.Imds labels = () -> Optional.of("sa-east-1");
    assertEquals(
        new RegionResolver.Found("sa-east-1", "the node's region label"),
        new RegionResolver(Optional.empty(), Map.of(), Optional::empty, labels)
            .resolve()
            .orElseThrow());
    assertEquals(
        new RegionResolver.Found("sa-east-1", "the node's region label"),
        new RegionResolver(
                Optional.empty(),
                Map.of("AWS_EC2_METADATA_DISABLED", "true"),
                () -> Optional.of("never-asked"),
                labels)
            .resolve()
            .orElseThrow());
    assertEquals(
        "eu-west-1",
        new RegionResolver(Optional.empty(), Map.of(), () -> Optional.of("eu-west-1"), labels)
            .resolve()
            .orElseThrow()
            .region());
  }

  @Test
  void notReadyUntilTheRegionIsKnownThenReady() throws Exception {
    AtomicReference<String> metadataRegion = new AtomicReference<>();
    RegionResolver resolver =
        new RegionResolver(
            Optional.empty(), Map.of(), () -> Optional.ofNullable(metadataRegion.get()));
    Readiness readiness = new Readiness(java.time.Clock.systemUTC(), Duration.ZERO);
    try (ControllerPlugin plugin =
        new ControllerPlugin(options(Map.of()), resolver, Map.of(), Duration.ofMillis(20))) {
      plugin.start(readiness);
      Thread.sleep(100);
      Readiness.State waiting = readiness.evaluate();
      assertFalse(waiting.ready());
      assertTrue(
          waiting.reasons().getFirst().contains("cannot determine the AWS region"),
          waiting.reasons().toString());
      metadataRegion.set("us-east-2");
      long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (!readiness.evaluate().ready() && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertTrue(readiness.evaluate().ready());
    }
  }

  @Test
  void fipsOutsideUsAndCaRegionsIsNotReadyAndSaysWhy() throws Exception {
    Readiness readiness = new Readiness(java.time.Clock.systemUTC(), Duration.ZERO);
    try (ControllerPlugin plugin =
        new ControllerPlugin(
            options(Map.of()),
            new RegionResolver(Optional.of("eu-west-1"), Map.of(), Optional::empty),
            Map.of("AWS_USE_FIPS_ENDPOINT", "true"),
            Duration.ofMillis(20))) {
      plugin.start(readiness);
      long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (readiness.evaluate().reasons().stream().noneMatch(r -> r.contains("FIPS"))
          && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      Readiness.State state = readiness.evaluate();
      assertFalse(state.ready());
      assertEquals(
          List.of(
              "cloud client: AWS_USE_FIPS_ENDPOINT=true but region eu-west-1 has no FIPS endpoints"
                  + " for EFS (only us-* and ca-* regions do)"),
          state.reasons());
    }
    assertTrue(ControllerPlugin.fipsRegion("us-gov-west-1"));
    assertTrue(ControllerPlugin.fipsRegion("ca-central-1"));
  }

  @Test
  void flagsFollowTheGoDriver() throws UsageException {
    ControllerOptions o = options(Map.of());
    assertTrue(o.adaptiveRetryMode());
    assertFalse(o.deleteAccessPointRootDir());
    assertEquals("", o.tags());
    assertTrue(o.region().isEmpty());
    assertEquals(
        "invalid value 'useast1' for flag '--region': expected a region such as us-east-1",
        assertThrows(UsageException.class, () -> options(Map.of("region", "useast1")))
            .getMessage());
  }
}
