package io.efscsi.node.iam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.volume.MountPlan;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/** Client certificates of our own proxies keep being renewed across a restart of the plugin. */
public class IssuedCertificatesTest {

  static final Instant T0 = Instant.parse("2026-11-24T10:00:00Z");

  final AtomicReference<Instant> now = new AtomicReference<>(T0);
  final InstantSource clock = now::get;

  @TempDir Path dir;

  ClientCertificates certificates() {
    return new ClientCertificates(
        "node-1",
        new ClientCertificates.ClientInfo("k8s", "test"),
        s -> StaticCredentialsProvider.create(AwsBasicCredentials.create("AKIDEXAMPLE", "secret")),
        clock);
  }

  /** A TLS + IAM plan through an access point (other tests stage it too). */
  public static MountPlan plan(String fs) {
    return new MountPlan(
        fs,
        Optional.of("fsap-0fedcba9876543210"),
        "/",
        fs + ".efs.us-east-1.amazonaws.com",
        2049,
        true,
        fs + ".efs.us-east-1.amazonaws.com",
        true,
        Optional.empty(),
        true,
        new MountPlan.IamCredentialsSource(
            Optional.of("team-a"), Optional.empty(), Optional.empty()),
        List.of("nfsvers=4.1"),
        false,
        false);
  }

  @Test
  void aRestartedPluginRenewsTheCertificatesOfTheProxiesItAdopted() throws Exception {
    MountPlan plan = plan("fs-0123456789abcdef0");
    var first =
        new IssuedCertificates(
            certificates(),
            Optional.of(new CertificateRenewer(certificates(), clock)),
            "us-east-1");
    ClientCertificateSource.Files files = first.forPlan(plan, dir).orElseThrow();
    Path keyDir = files.certificate().getParent();
    ClientCertificates.Request saved =
        IssuedCertificates.loadRequest(keyDir.resolve(IssuedCertificates.REQUEST_FILE));
    assertEquals(
        new ClientCertificates.Request(
            plan.fileSystemId(), plan.accessPointId(), true, plan.credentials(), "us-east-1"),
        saved);

    // the plugin restarts 50 minutes later: kubelet stages nothing again
    now.set(T0.plus(Duration.ofMinutes(50)));
    CertificateRenewer renewer = new CertificateRenewer(certificates(), clock);
    var second = new IssuedCertificates(certificates(), Optional.of(renewer), "us-east-1");
    assertEquals(
        1, second.resume(dir, List.of(plan.proxyKey(), plan("fs-00000000000000001").proxyKey())));
    assertEquals(0, renewer.renewDue(), "not due before its hour is over");
    now.set(T0.plus(Duration.ofMinutes(60)));
    byte[] before = Files.readAllBytes(files.certificate());
    assertEquals(1, renewer.renewDue(), "renewed on time after the restart");
    assertFalse(java.util.Arrays.equals(before, Files.readAllBytes(files.certificate())));

    second.forget(plan.proxyKey(), dir);
    assertFalse(Files.exists(keyDir), "forget removes the certificate and what renews it");
    assertTrue(Files.isDirectory(dir));
  }
}
