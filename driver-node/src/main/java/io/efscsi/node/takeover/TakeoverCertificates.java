package io.efscsi.node.takeover;

import io.efscsi.node.iam.ClientCertificateSource;
import java.io.IOException;

/** The client certificates of taken-over mounts: made (or adopted), renewed, forgotten. */
public interface TakeoverCertificates {

  /** The files the proxy of {@code plan} presents, kept fresh from now on. */
  ClientCertificateSource.Files prepare(TakeoverPlan plan, TakeoverPlan.Certificate spec)
      throws IOException;

  /** A taken-over proxy adopted after our restart: keep renewing the certificate it has. */
  void resume(TakeoverPlan plan, TakeoverPlan.Certificate spec);

  /** The proxy of {@code port} is gone: stop renewing, remove the files. */
  void forget(int port);
}
