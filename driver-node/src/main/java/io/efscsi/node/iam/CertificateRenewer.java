package io.efscsi.node.iam;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Re-issues tracked client certificates before they expire, as efs-utils' watchdog does: a
 * certificate older than {@link #RENEW_AFTER} (efs-utils' {@code tls_cert_renewal_interval_min}, 60
 * minutes, a third of its 3-hour life), or whose file is gone, is issued again with fresh
 * credentials. The new file replaces the old one atomically; the proxy polls its certificate file
 * and uses the new one for new TLS connections without dropping the established ones. A failure (no
 * credentials, STS down) is logged and retried at the next check, every {@link #CHECK_EVERY}.
 */
public final class CertificateRenewer implements AutoCloseable {

  public static final Duration RENEW_AFTER = Duration.ofMinutes(60);
  public static final Duration CHECK_EVERY = Duration.ofMinutes(1);

  private static final Logger log = LoggerFactory.getLogger(CertificateRenewer.class);

  private record Tracked(ClientCertificates.Request request, Instant issuedAt, String lastError) {}

  private final ClientCertificates certificates;
  private final InstantSource clock;
  private final Map<Path, Tracked> tracked = new ConcurrentHashMap<>();
  private final Object renewing = new Object();
  private ScheduledExecutorService scheduler;

  public CertificateRenewer(ClientCertificates certificates, InstantSource clock) {
    this.certificates = certificates;
    this.clock = clock;
  }

  /**
   * Keeps the certificate in {@code dir} fresh from now on. Its age is read from the certificate
   * file (so certificates of mounts adopted after a restart are renewed on time); a missing or
   * unreadable file is renewed at the next check.
   */
  public void track(Path dir, ClientCertificates.Request request) {
    tracked.put(dir, new Tracked(request, issuedAt(dir).orElse(Instant.EPOCH), ""));
  }

  /**
   * Stops renewing {@code dir} (the mount is gone); its files are left to the caller. Waits for a
   * renewal of that directory in progress, so the caller may delete the directory afterwards.
   */
  public void untrack(Path dir) {
    synchronized (renewing) {
      tracked.remove(dir);
    }
  }

  /** Starts checking every {@link #CHECK_EVERY} on a daemon thread. */
  public synchronized void start() {
    if (scheduler == null) {
      scheduler =
          Executors.newSingleThreadScheduledExecutor(
              r -> Thread.ofPlatform().daemon().name("certificate-renewer").unstarted(r));
      long every = CHECK_EVERY.toSeconds();
      scheduler.scheduleWithFixedDelay(this::renewDueSafely, every, every, TimeUnit.SECONDS);
    }
  }

  /** One check: renews every due certificate; returns how many were renewed. */
  public int renewDue() {
    int renewed = 0;
    for (Map.Entry<Path, Tracked> e : tracked.entrySet()) {
      if (isDue(e.getKey(), e.getValue())) {
        renewed += renew(e.getKey(), e.getValue()) ? 1 : 0;
      }
    }
    return renewed;
  }

  private boolean isDue(Path dir, Tracked t) {
    return !Files.exists(dir.resolve(ClientCertificates.CERTIFICATE_FILE))
        || !clock.instant().isBefore(t.issuedAt().plus(RENEW_AFTER));
  }

  private boolean renew(Path dir, Tracked t) {
    synchronized (renewing) {
      if (tracked.get(dir) != t) {
        return false; // untracked or tracked again meanwhile
      }
      return renewTracked(dir, t);
    }
  }

  private boolean renewTracked(Path dir, Tracked t) {
    try {
      ClientCertificates.Issued issued = certificates.issue(dir, t.request());
      tracked.replace(dir, t, new Tracked(t.request(), issued.issuedAt(), ""));
      log.info(
          "client certificate for {} in {} renewed, valid until {}",
          t.request().fileSystemId(),
          dir,
          issued.notAfter());
      return true;
    } catch (RuntimeException e) {
      String reason = String.valueOf(e.getMessage());
      if (!reason.equals(t.lastError())) {
        log.warn(
            "cannot renew the client certificate for {} in {} (issued {}, expires {}); retrying"
                + " every {}: {}",
            t.request().fileSystemId(),
            dir,
            t.issuedAt(),
            t.issuedAt().plus(CertificateBuilder.NOT_AFTER),
            CHECK_EVERY,
            reason);
      } else {
        log.debug("still cannot renew the client certificate in {}: {}", dir, reason);
      }
      tracked.replace(dir, t, new Tracked(t.request(), t.issuedAt(), reason));
      return false;
    }
  }

  private void renewDueSafely() {
    try {
      renewDue();
    } catch (RuntimeException e) {
      log.error("certificate renewal check failed", e);
    }
  }

  private static Optional<Instant> issuedAt(Path dir) {
    Path cert = dir.resolve(ClientCertificates.CERTIFICATE_FILE);
    if (!Files.exists(cert)) {
      return Optional.empty();
    }
    try {
      return Optional.of(
          PemFiles.readCertificate(cert)
              .getNotBefore()
              .toInstant()
              .plus(CertificateBuilder.NOT_BEFORE));
    } catch (IOException e) {
      log.warn("client certificate {} is unreadable, renewing it: {}", cert, e.getMessage());
      return Optional.empty();
    }
  }

  @Override
  public synchronized void close() {
    if (scheduler != null) {
      scheduler.shutdownNow();
      scheduler = null;
    }
  }
}
