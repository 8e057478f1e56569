package io.efscsi.controller.provision;

import io.efscsi.controller.cloud.Cloud;
import io.efscsi.controller.cloud.Cloud.AccessPoint;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@link FileSystemInventory} per account and file system, loaded on first use and reloaded
 * when older than the refresh interval (so access points created or deleted by someone else, such
 * as another cluster on the same file system, are seen within that interval). The listing runs
 * under the file system's own lock: creates on that file system wait for it, others do not.
 */
final class Inventories {

  private static final Logger log = LoggerFactory.getLogger(Inventories.class);

  private static final class Holder {
    FileSystemInventory inventory;
  }

  private final int limit;
  private final long refreshNanos;
  private final LongSupplier nanoTime;
  private final Map<String, Holder> holders = new ConcurrentHashMap<>();

  Inventories(int limit, Duration refresh, LongSupplier nanoTime) {
    this.limit = limit;
    this.refreshNanos = refresh.toNanos();
    this.nanoTime = nanoTime;
  }

  FileSystemInventory get(Cloud cloud, String fileSystemId) {
    Holder h = holders.computeIfAbsent(cloud.identity() + "/" + fileSystemId, k -> new Holder());
    synchronized (h) {
      long now = nanoTime.getAsLong();
      if (h.inventory == null || now - h.inventory.loadedAt() > refreshNanos) {
        List<AccessPoint> all = new ArrayList<>();
        cloud.listAccessPoints(fileSystemId, all::add);
        if (h.inventory == null) {
          h.inventory = new FileSystemInventory(fileSystemId, limit, all, now);
        } else {
          h.inventory.reload(all, now);
        }
        log.debug("listed {} access points of {}", all.size(), fileSystemId);
      }
      return h.inventory;
    }
  }

  /** The inventory if one is loaded, for deletes (which never trigger a listing). */
  FileSystemInventory loaded(Cloud cloud, String fileSystemId) {
    Holder h = holders.get(cloud.identity() + "/" + fileSystemId);
    if (h == null) {
      return null;
    }
    synchronized (h) {
      return h.inventory;
    }
  }
}
