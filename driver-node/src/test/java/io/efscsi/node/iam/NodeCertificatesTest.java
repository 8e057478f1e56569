package io.efscsi.node.iam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.volume.MountPlan;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The node's certificates are set up once, for the node's region, and not before they are used. */
class NodeCertificatesTest {

  @TempDir Path dir;

  final AtomicInteger regionAsked = new AtomicInteger();
  final AtomicInteger credentialsMade = new AtomicInteger();

  NodeCertificates certificates() {
    return new NodeCertificates(
        () -> {
          regionAsked.incrementAndGet();
          return "us-east-1";
        },
        region -> {
          credentialsMade.incrementAndGet();
          return new SdkCredentialsProviders(region);
        },
        InstantSource.system(),
        Optional.empty());
  }

  static MountPlan plan(boolean tls) {
    String name = "fs-0123456789abcdef0.efs.us-east-1.amazonaws.com";
    return new MountPlan(
        "fs-0123456789abcdef0",
        tls ? Optional.of("fsap-0fedcba9876543210") : Optional.empty(),
        "/",
        name,
        2049,
        tls,
        name,
        false,
        Optional.empty(),
        true,
        MountPlan.IamCredentialsSource.DEFAULT_CHAIN,
        List.of("nfsvers=4.1"),
        false,
        false);
  }

  @Test
  void aPlanWithoutTlsOrAForgottenKeyAsksNothing() throws Exception {
    try (NodeCertificates c = certificates()) {
      assertEquals(Optional.empty(), c.forPlan(plan(false), dir));
      c.forget("some-proxy", dir);
      assertEquals(0, regionAsked.get());
      assertEquals(0, credentialsMade.get());
    }
  }

  @Test
  void theRegionAndItsCredentialsAreAskedOnceAndTheFilesWrittenPerProxyKey() throws Exception {
    try (NodeCertificates c = certificates()) {
      c.prepare();
      c.prepare();
      ClientCertificateSource.Files f = c.forPlan(plan(true), dir).orElseThrow();
      assertEquals(1, regionAsked.get());
      assertEquals(1, credentialsMade.get());
      assertTrue(Files.isRegularFile(f.certificate()) && Files.isRegularFile(f.privateKey()));
      assertEquals(dir, f.certificate().getParent().getParent());
      c.forget(plan(true).proxyKey(), dir);
      assertTrue(Files.notExists(f.certificate().getParent()));
    }
  }
}
