package io.efscsi.node.mounts;

import io.efscsi.supervisor.host.MountInfo;
import io.efscsi.supervisor.host.MountTable;
import io.efscsi.supervisor.host.Mounter;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * An in-memory mount table with the kernel's rules that matter here: mounts stack, bind mounts
 * share the source's device and root, a busy mount refuses a normal unmount, a lazy unmount always
 * detaches. Failures can be injected.
 */
public final class FakeKernel implements Mounter, MountTable {

  private final List<MountInfo> table = new ArrayList<>();
  private final Set<String> busy = new HashSet<>();
  private int nextId = 100;
  boolean failNextBind;
  public final List<String> calls = new ArrayList<>();

  @Override
  public synchronized List<MountInfo> read() {
    return List.copyOf(table);
  }

  synchronized void markBusy(Path p) {
    busy.add(p.toString());
  }

  @Override
  public synchronized void mountNfs(String source, Path target, List<String> options) {
    calls.add("nfs " + source + " " + target);
    String port = options.stream().filter(o -> o.startsWith("port=")).findFirst().orElse("port=0");
    add(
        target,
        "0:" + (nextId + 1000),
        "/",
        "rw,relatime",
        "nfs4",
        source,
        "rw,soft," + port + ",addr=127.0.0.1");
  }

  @Override
  public synchronized void bind(Path source, Path target, boolean readOnly) throws IOException {
    calls.add("bind " + source + " " + target + (readOnly ? " ro" : ""));
    if (failNextBind) {
      failNextBind = false;
      throw new IOException("mount: permission denied (injected)");
    }
    MountInfo src =
        table.stream()
            .filter(m -> m.mountPoint().equals(source.toString()))
            .reduce((a, b) -> b)
            .orElseThrow(() -> new IOException("mount: " + source + ": not a mount point"));
    add(
        target,
        src.device(),
        src.root(),
        readOnly ? "ro,relatime" : "rw,relatime",
        src.fsType(),
        src.source(),
        src.superOptions());
  }

  @Override
  public synchronized void unmount(Path target) throws IOException {
    calls.add("umount " + target);
    if (busy.contains(target.toString())) {
      throw new IOException("umount: " + target + ": target is busy");
    }
    detach(target);
  }

  @Override
  public synchronized void lazyUnmount(Path target) throws IOException {
    calls.add("umount -l " + target);
    detach(target);
  }

  private void detach(Path target) throws IOException {
    for (int i = table.size() - 1; i >= 0; i--) {
      if (table.get(i).mountPoint().equals(target.toString())) {
        table.remove(i);
        return;
      }
    }
    throw new IOException("umount: " + target + ": not mounted");
  }

  private void add(
      Path target,
      String dev,
      String root,
      String opts,
      String type,
      String source,
      String superOpts) {
    table.add(
        new MountInfo(
            nextId++, 1, dev, root, target.toString(), opts, List.of(), type, source, superOpts));
  }
}
