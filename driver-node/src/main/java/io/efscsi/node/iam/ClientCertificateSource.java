package io.efscsi.node.iam;

import io.efscsi.node.volume.MountPlan;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The TLS client certificate a proxy presents for access points and IAM (built in-process, renewed
 * before it expires; the proxy reloads changed files without dropping connections).
 */
@FunctionalInterface
public interface ClientCertificateSource {

  /** Certificate and private key files. */
  record Files(Path certificate, Path privateKey) {}

  /** The files for a plan that needs them, written under {@code dir}; empty when none is needed. */
  Optional<Files> forPlan(MountPlan plan, Path dir) throws IOException;

  /** For plans that never need a certificate (plain TLS without access point or IAM). */
  ClientCertificateSource NONE = (plan, dir) -> Optional.empty();

  /** The proxy of {@code proxyKey} is gone: stop renewing its certificate, remove the files. */
  default void forget(String proxyKey, Path dir) {}
}
