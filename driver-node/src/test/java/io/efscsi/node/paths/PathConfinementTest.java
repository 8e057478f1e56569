package io.efscsi.node.paths;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import io.efscsi.node.mounts.FakeKernel;
import io.efscsi.supervisor.host.MountPoints;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kubelet dir rule on real directories and real symbolic links. */
class PathConfinementTest {

  @TempDir Path tmp;
  Path kubelet;
  Path outside;
  final FakeKernel kernel = new FakeKernel();
  PathConfinement paths;

  @BeforeEach
  void dirs() throws Exception {
    tmp = tmp.toRealPath();
    kubelet = Files.createDirectories(tmp.resolve("var/lib/kubelet"));
    outside = Files.createDirectories(tmp.resolve("etc"));
    Files.createDirectories(kubelet.resolve("pods/uid-1/volumes/kubernetes.io~csi/pv-1"));
    paths = new PathConfinement(kubelet, new MountPoints(kernel));
  }

  private DriverException refused(Path p) {
    DriverException e =
        assertThrows(
            DriverException.class,
            () -> paths.check("target_path", p, DriverException.Kind.INVALID_ARGUMENT),
            p.toString());
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
    return e;
  }

  private void allowed(Path p) {
    assertDoesNotThrow(
        () -> paths.check("target_path", p, DriverException.Kind.INVALID_ARGUMENT), p.toString());
  }

  @Test
  void aPathBelowTheDirIsAllowedWhetherItExistsOrNot() throws Exception {
    Path target = kubelet.resolve("pods/uid-1/volumes/kubernetes.io~csi/pv-1/mount");
    allowed(target);
    assertEquals(target, paths.resolve(target));
    allowed(kubelet.resolve("plugins/kubernetes.io/csi/efs.csi.aws.com/abc/globalmount"));
    Files.createDirectories(target);
    allowed(target);
  }

  @Test
  void aPathOutsideOrTheDirItselfOrASiblingWithTheSamePrefixIsRefused() throws Exception {
    DriverException e = refused(outside.resolve("mount"));
    assertEquals(
        "target_path '"
            + outside.resolve("mount")
            + "' is not below the kubelet root dir "
            + kubelet
            + ": this driver mounts only where the kubelet asks (--kubelet-root-dir)",
        e.getMessage());
    refused(kubelet);
    refused(Path.of("/"));
    refused(Files.createDirectories(tmp.resolve("var/lib/kubelet-other")).resolve("x"));
  }

  @Test
  void aLinkInsideTheDirToOutsideIsRefusedNamingWhereItLeads() throws Exception {
    Path pv = kubelet.resolve("pods/uid-1/volumes/kubernetes.io~csi/pv-1");
    Files.createSymbolicLink(pv.resolve("mount"), outside);
    DriverException e = refused(pv.resolve("mount"));
    assertTrue(e.getMessage().startsWith("target_path '" + pv.resolve("mount") + "' is not below"));
    assertTrue(e.getMessage().contains("(it resolves to " + outside + ","), e.getMessage());
    // through a link higher up, to a place that does not exist yet
    Files.createSymbolicLink(kubelet.resolve("plugins"), outside);
    refused(kubelet.resolve("plugins/kubernetes.io/csi/x/globalmount"));
  }

  @Test
  void relativeDanglingAndChainedLinksAreFollowed() throws Exception {
    Path pods = kubelet.resolve("pods");
    // relative, with .. climbing out
    Files.createSymbolicLink(pods.resolve("up"), Path.of("../../../../etc"));
    refused(pods.resolve("up"));
    refused(pods.resolve("up/x/mount"));
    // dangling: points at a directory that does not exist (yet), outside
    Files.createSymbolicLink(pods.resolve("dangling"), tmp.resolve("nowhere/deeper"));
    refused(pods.resolve("dangling"));
    refused(pods.resolve("dangling/mount"));
    // a chain of links that ends outside
    Files.createSymbolicLink(pods.resolve("a"), pods.resolve("b"));
    Files.createSymbolicLink(pods.resolve("b"), Path.of("up"));
    refused(pods.resolve("a"));
  }

  @Test
  void aLinkThatStaysInsideIsAllowed() throws Exception {
    Files.createSymbolicLink(kubelet.resolve("alias"), Path.of("pods/uid-1"));
    allowed(kubelet.resolve("alias/volumes/kubernetes.io~csi/pv-1/mount"));
    assertEquals(
        kubelet.resolve("pods/uid-1/volumes/kubernetes.io~csi/pv-1/mount"),
        paths.resolve(kubelet.resolve("alias/volumes/kubernetes.io~csi/pv-1/mount")));
  }

  @Test
  void aKubeletDirThatIsALinkConfinesToWhereItLeads() throws Exception {
    Path link = Files.createSymbolicLink(tmp.resolve("kubelet-link"), kubelet);
    PathConfinement viaLink = new PathConfinement(link, new MountPoints(kernel));
    for (Path p : List.of(link.resolve("pods/x/mount"), kubelet.resolve("pods/x/mount"))) {
      assertDoesNotThrow(() -> viaLink.check("f", p, DriverException.Kind.INVALID_ARGUMENT));
    }
    DriverException e =
        assertThrows(
            DriverException.class,
            () -> viaLink.check("f", outside.resolve("x"), DriverException.Kind.INVALID_ARGUMENT));
    assertTrue(e.getMessage().contains("the kubelet root dir to " + kubelet + ")"), e.getMessage());
  }

  @Test
  void aLinkLoopCannotBeResolved() throws Exception {
    Path pods = kubelet.resolve("pods");
    Files.createSymbolicLink(pods.resolve("loop1"), pods.resolve("loop2"));
    Files.createSymbolicLink(pods.resolve("loop2"), pods.resolve("loop1"));
    DriverException e = refused(pods.resolve("loop1/mount"));
    assertTrue(e.getMessage().contains("cannot be resolved"), e.getMessage());
    assertTrue(e.getMessage().contains("too many levels of symbolic links"), e.getMessage());
  }

  @Test
  void aMountPointIsTakenFromTheMountTableAndNeverStated() throws Exception {
    // A path in the mount table is a mount point, which the kernel never makes a link; the
    // check believes the table and does not look at the path (a dead NFS mount would hang a
    // stat). Shown with a link at a path the table says is mounted: it is not followed.
    Path target = kubelet.resolve("pods/uid-1/volumes/kubernetes.io~csi/pv-1/mount");
    Files.createSymbolicLink(target, outside);
    kernel.mountNfs("127.0.0.1:/", target, List.of("port=20049"));
    allowed(target);
    assertEquals(target, paths.resolve(target));
  }

  @Test
  void volumeStatsAskForNotFound() {
    DriverException e =
        assertThrows(
            DriverException.class,
            () -> paths.check("volume_path", outside.resolve("v"), DriverException.Kind.NOT_FOUND));
    assertEquals(DriverException.Kind.NOT_FOUND, e.kind());
    assertTrue(e.getMessage().startsWith("volume_path '" + outside.resolve("v") + "'"));
  }
}
