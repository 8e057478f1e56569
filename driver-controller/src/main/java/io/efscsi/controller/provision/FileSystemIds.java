package io.efscsi.controller.provision;

import io.efscsi.controller.provision.ProvisioningParameters.FileSystemRef;

/** Turns a fileSystemId parameter or a ConfigMap/Secret reference into a file system id. */
public interface FileSystemIds {

  /**
   * @throws io.efscsi.common.error.DriverException with "Failed to resolve filesystem Id: …" when
   *     the reference cannot be read
   */
  String resolve(FileSystemRef ref);

  /** Only literal ids; references fail with a message saying why. */
  static FileSystemIds literalOnly() {
    return ref ->
        switch (ref) {
          case FileSystemRef.Literal l -> l.id();
          default ->
              throw io.efscsi.common.error.DriverException.failedPrecondition(
                  "Failed to resolve filesystem Id: no Kubernetes client to read %s", ref);
        };
  }
}
