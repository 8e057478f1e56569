package io.efscsi.controller.provision;

import java.util.Locale;
import java.util.Optional;

/**
 * What DeleteVolume does with an access point's root directory: the StorageClass parameter {@code
 * onDelete}, kept on the access point as the {@link Tags#ON_DELETE_KEY} tag. A volume without one
 * follows {@code --delete-access-point-root-dir} ({@link #DELETE} with it, {@link #RETAIN}
 * without), so volumes made before the parameter existed behave as they always did.
 */
public enum OnDelete {
  /** Remove the directory and everything below it. */
  DELETE,
  /** Keep the directory where it is. */
  RETAIN,
  /** Rename the directory to {@code archived-<name>} in the same parent and keep it. */
  ARCHIVE;

  /** The parameter's and the tag's spelling. */
  public String value() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Reads a value case-insensitively (as csi-driver-nfs reads its onDelete); empty if unknown. */
  public static Optional<OnDelete> read(String value) {
    for (OnDelete d : values()) {
      if (d.value().equals(value.strip().toLowerCase(Locale.ROOT))) {
        return Optional.of(d);
      }
    }
    return Optional.empty();
  }

  /** The behaviour of a volume that does not say: {@code --delete-access-point-root-dir}'s. */
  public static OnDelete byFlag(boolean deleteAccessPointRootDir) {
    return deleteAccessPointRootDir ? DELETE : RETAIN;
  }
}
