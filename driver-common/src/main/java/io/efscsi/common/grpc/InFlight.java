package io.efscsi.common.grpc;

import io.efscsi.common.error.DriverException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per-key in-flight guard. A second call on a busy key fails fast with {@code ABORTED} "An
 * operation with the given Volume ID … already exists" (the CSI error table's answer to an
 * operation pending on a volume); the caller retries. Keys follow the RPC: volume name for
 * CreateVolume, volume id for delete and stage, volume id plus target path for publish.
 */
public final class InFlight {

  private final Set<String> busy = ConcurrentHashMap.newKeySet();

  /** A held key; closing it releases the key. Idempotent. */
  public interface Lease extends AutoCloseable {
    @Override
    void close();
  }

  /**
   * Takes the key made of {@code volumeId} and optional qualifiers (such as a target path).
   *
   * @throws DriverException ABORTED when the key is already held
   */
  public Lease acquire(String volumeId, String... qualifiers) {
    String key =
        qualifiers.length == 0 ? volumeId : volumeId + "\u0000" + String.join("\u0000", qualifiers);
    if (!busy.add(key)) {
      throw DriverException.aborted(
          "An operation with the given Volume ID %s already exists", volumeId);
    }
    return new Lease() {
      private boolean released;

      @Override
      public synchronized void close() {
        if (!released) {
          released = true;
          busy.remove(key);
        }
      }
    };
  }

  /** Number of keys held now. */
  public int size() {
    return busy.size();
  }
}
