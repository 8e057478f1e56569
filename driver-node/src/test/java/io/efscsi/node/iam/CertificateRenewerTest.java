package io.efscsi.node.iam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

class CertificateRenewerTest {

  static final Instant T0 = Instant.parse("2024-01-15T10:00:00Z");
  static final ClientCertificates.Request REQUEST =
      new ClientCertificates.Request(
          "fs-0123456789abcdef0",
          Optional.of("fsap-0fedcba9876543210"),
          true,
          IamCredentialsSource.DEFAULT_CHAIN,
          "us-east-1");

  final AtomicReference<Instant> now = new AtomicReference<>(T0);
  final AtomicBoolean credentialsWork = new AtomicBoolean(true);
  final InstantSource clock = now::get;
  final ClientCertificates certs =
      new ClientCertificates(
          "node-1",
          new ClientCertificates.ClientInfo("k8s", "test"),
          s -> {
            if (!credentialsWork.get()) {
              throw new IllegalStateException("Unable to load credentials from any provider");
            }
            return StaticCredentialsProvider.create(
                AwsBasicCredentials.create("AKIDEXAMPLE", "secret"));
          },
          clock);

  @TempDir Path dir;

  @Test
  void renewsAfterSixtyMinutesNotBeforeAndKeepsTheKey() throws Exception {
    ClientCertificates.Issued first = certs.issue(dir, REQUEST);
    byte[] key = Files.readAllBytes(first.privateKey());
    var renewer = new CertificateRenewer(certs, clock);
    renewer.track(dir, REQUEST);

    now.set(T0.plus(Duration.ofMinutes(59)).plusSeconds(59));
    assertEquals(0, renewer.renewDue());
    assertEquals(T0, notBefore(dir).plus(Duration.ofMinutes(15)));

    now.set(T0.plus(Duration.ofMinutes(60)));
    assertEquals(1, renewer.renewDue());
    assertEquals(T0.plus(Duration.ofMinutes(60)), notBefore(dir).plus(Duration.ofMinutes(15)));
    assertEquals(true, Arrays.equals(key, Files.readAllBytes(first.privateKey())));
    ClientCertificatesTest.assertKeyMatches(
        first.privateKey(), ClientCertificatesTest.parse(first.certificate()));

    now.set(T0.plus(Duration.ofMinutes(119)));
    assertEquals(0, renewer.renewDue(), "the next renewal counts from the last one");
  }

  @Test
  void aMissingCertificateIsRenewedAtTheNextCheck() throws Exception {
    certs.issue(dir, REQUEST);
    var renewer = new CertificateRenewer(certs, clock);
    renewer.track(dir, REQUEST);
    Files.delete(dir.resolve(ClientCertificates.CERTIFICATE_FILE));

    now.set(T0.plusSeconds(60));
    assertEquals(1, renewer.renewDue());
    assertEquals(T0.plusSeconds(60), notBefore(dir).plus(Duration.ofMinutes(15)));
  }

  @Test
  void failedRenewalKeepsTheOldCertificateAndIsRetried() throws Exception {
    certs.issue(dir, REQUEST);
    byte[] old = Files.readAllBytes(dir.resolve(ClientCertificates.CERTIFICATE_FILE));
    var renewer = new CertificateRenewer(certs, clock);
    renewer.track(dir, REQUEST);

    credentialsWork.set(false);
    now.set(T0.plus(Duration.ofMinutes(61)));
    assertEquals(0, renewer.renewDue());
    now.set(T0.plus(Duration.ofMinutes(62)));
    assertEquals(0, renewer.renewDue());
    assertEquals(
        true,
        Arrays.equals(old, Files.readAllBytes(dir.resolve(ClientCertificates.CERTIFICATE_FILE))));

    credentialsWork.set(true);
    now.set(T0.plus(Duration.ofMinutes(63)));
    assertEquals(1, renewer.renewDue());
    assertEquals(T0.plus(Duration.ofMinutes(63)), notBefore(dir).plus(Duration.ofMinutes(15)));
  }

  @Test
  void untrackedDirectoriesAreLeftAlone() throws Exception {
    certs.issue(dir, REQUEST);
    var renewer = new CertificateRenewer(certs, clock);
    renewer.track(dir, REQUEST);
    renewer.untrack(dir);
    Files.delete(dir.resolve(ClientCertificates.CERTIFICATE_FILE));

    now.set(T0.plus(Duration.ofHours(2)));
    assertEquals(0, renewer.renewDue());
    assertFalse(Files.exists(dir.resolve(ClientCertificates.CERTIFICATE_FILE)));
  }

  @Test
  void aRenewerStartedLaterReadsTheAgeFromTheFile() throws Exception {
    certs.issue(dir, REQUEST);
    now.set(T0.plus(Duration.ofMinutes(30)));
    var afterRestart = new CertificateRenewer(certs, clock);
    afterRestart.track(dir, REQUEST);

    assertEquals(0, afterRestart.renewDue());
    now.set(T0.plus(Duration.ofMinutes(60)));
    assertEquals(1, afterRestart.renewDue());
  }

  private static Instant notBefore(Path dir) throws Exception {
    return ClientCertificatesTest.parse(dir.resolve(ClientCertificates.CERTIFICATE_FILE))
        .getNotBefore()
        .toInstant();
  }
}
