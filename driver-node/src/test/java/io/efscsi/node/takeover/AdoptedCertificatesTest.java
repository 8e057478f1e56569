package io.efscsi.node.takeover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.efscsi.node.iam.CertificateAdoption;
import io.efscsi.node.iam.CertificateRenewer;
import io.efscsi.node.iam.ClientCertificateSource;
import io.efscsi.node.iam.ClientCertificates;
import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
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

/** After a takeover our renewer keeps efs-utils' identity fresh, with efs-utils' key. */
class AdoptedCertificatesTest {

  @TempDir Path dir;

  final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-11-24T04:00:00Z"));
  final InstantSource clock = () -> now.get();
  final ClientCertificates certs =
      new ClientCertificates(
          "node-1",
          new ClientCertificates.ClientInfo("k8s", "test"),
          s -> StaticCredentialsProvider.create(AwsBasicCredentials.create("AKID", "secret")),
          clock);

  @Test
  void efsUtilsCertificateIsRenewedHourlyWithItsKeyAndIdentityThenForgotten() throws Exception {
    TakeoverPlan.Certificate spec =
        new TakeoverPlan.Certificate(
            EfsUtilsSamples.FS,
            Optional.of(EfsUtilsSamples.AP),
            true,
            IamCredentialsSource.DEFAULT_CHAIN,
            "us-east-1",
            Optional.empty(),
            Optional.empty());
    ClientCertificates.Issued efsUtils =
        certs.issue(
            dir.resolve("efs-utils"),
            new ClientCertificates.Request(
                spec.fileSystemId(), spec.accessPointId(), true, spec.credentials(), "us-east-1"));
    spec =
        new TakeoverPlan.Certificate(
            spec.fileSystemId(),
            spec.accessPointId(),
            true,
            spec.credentials(),
            "us-east-1",
            Optional.of(efsUtils.certificate()),
            Optional.of(efsUtils.privateKey()));
    CertificateRenewer renewer = new CertificateRenewer(certs, clock);
    Path root = dir.resolve("certs");
    AdoptedCertificates adopted =
        new AdoptedCertificates(
            new CertificateAdoption(certs, clock), Optional.of(renewer), () -> root);
    TakeoverPlan plan =
        new TakeoverPlan(
            "efs-utils:x",
            20417,
            List.of("/t"),
            io.efscsi.supervisor.ProxySpec.plain("10.0.0.9", 2049),
            Optional.of(spec),
            null);
    ClientCertificateSource.Files files = adopted.prepare(plan, spec);
    assertEquals(root.resolve("efs-utils-20417/certificate.pem"), files.certificate());
    X509Certificate first = read(files.certificate());
    assertEquals(read(efsUtils.certificate()), first, "efs-utils' own certificate first");

    now.set(now.get().plus(Duration.ofMinutes(30)));
    assertEquals(0, renewer.renewDue(), "not due after 30 minutes");
    now.set(now.get().plus(Duration.ofMinutes(31)));
    assertEquals(1, renewer.renewDue(), "renewed after an hour, as efs-utils' watchdog did");
    X509Certificate renewed = read(files.certificate());
    assertNotEquals(first, renewed);
    assertEquals(first.getPublicKey(), renewed.getPublicKey(), "with efs-utils' key");
    assertEquals(
        new String(first.getExtensionValue("1.3.6.1.4.1.4843.7.1")),
        new String(renewed.getExtensionValue("1.3.6.1.4.1.4843.7.1")),
        "for the same access point");

    adopted.forget(20417);
    assertFalse(Files.exists(root.resolve("efs-utils-20417")));
    now.set(now.get().plus(Duration.ofHours(2)));
    assertEquals(0, renewer.renewDue(), "no longer renewed");
  }

  private static X509Certificate read(Path file) throws Exception {
    try (var in = Files.newInputStream(file)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }
}
