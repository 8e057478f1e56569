package io.efscsi.node.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.supervisor.host.ProcMountTable;
import io.fabric8.kubernetes.api.model.Event;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Proxy events: on the pods whose targets carry the proxy's port, when their names are known, and
 * one on the Node per PersistentVolume naming it and its pods; a storm is cut to the spam filter's
 * burst.
 */
class ProxyEventsTest {

  static final String NODE = PodEventsTest.NODE;
  static final String UID = PodEventsTest.UID;

  @TempDir Path tmp;
  final InMemoryEventApi api = new InMemoryEventApi();
  final PublishedPods pods = new PublishedPods();
  final PodEvents events = new PodEvents(api, pods, NODE, Clock.systemUTC());

  Path mountinfo(int port) throws Exception {
    Path f = tmp.resolve("mountinfo");
    Files.writeString(
        f,
        "22 1 0:21 / / rw shared:1 - ext4 /dev/vda rw\n"
            + "100 22 0:50 / /var/lib/kubelet/plugins/kubernetes.io/csi/efs.csi.aws.com/abc/globalmount"
            + " rw shared:9 - nfs4 127.0.0.1:/ rw,port="
            + port
            + ",addr=127.0.0.1\n"
            + "101 22 0:50 / "
            + PodEventsTest.TARGET
            + " rw shared:9 - nfs4 127.0.0.1:/ rw,port="
            + port
            + ",addr=127.0.0.1\n");
    return f;
  }

  @Test
  void anOomKillIsAWarningOnTheKnownPodAndOnTheNodeForItsVolume() throws Exception {
    pods.published(PodEventsTest.TARGET, PodEventsTest.WRITER);
    try (ProxyEvents p = new ProxyEvents(events, new ProcMountTable(mountinfo(20049)))) {
      p.oomKilled("fs-1|fsap-2|10.0.0.5:2049|tls", 20049);
      p.oomKilled("fs-1|fsap-2|10.0.0.5:2049|tls", 20050); // no pod uses that port: no event
      p.drain();
    }
    List<Event> onPod = api.on("Pod");
    assertEquals(1, onPod.size(), api.all().toString());
    assertEquals("ProxyOOMKilled", onPod.getFirst().getReason());
    assertEquals("Warning", onPod.getFirst().getType());
    assertEquals("writer-0", onPod.getFirst().getInvolvedObject().getName());
    assertTrue(onPod.getFirst().getMessage().contains("127.0.0.1:20049"));
    List<Event> onNode = api.on("Node");
    assertEquals(1, onNode.size(), api.all().toString());
    String m = onNode.getFirst().getMessage();
    assertTrue(m.startsWith("PersistentVolume pv-data: the NFS proxy of this volume"), m);
    assertTrue(m.endsWith("(pods on this node using it: " + UID + ")"), m);
    assertEquals("ProxyOOMKilled", onNode.getFirst().getReason());
  }

  @Test
  void anUnknownPodsProxyEventIsOnlyOnTheNode() throws Exception {
    try (ProxyEvents p = new ProxyEvents(events, new ProcMountTable(mountinfo(20049)))) {
      p.restarted("fs-1|fsap-2", 20049, "was killed by signal 9", 1);
      p.drain();
    }
    assertEquals(List.of(), api.on("Pod"));
    Event e = api.on("Node").getFirst();
    assertEquals(NODE, e.getInvolvedObject().getName());
    assertTrue(e.getMessage().contains("PersistentVolume pv-data"), e.getMessage());
    assertTrue(e.getMessage().contains(UID), e.getMessage());
  }

  @Test
  void anOutageIsOneWarningPerVolumeAndItsEndOneNormalEvent() throws Exception {
    pods.published(PodEventsTest.TARGET, PodEventsTest.WRITER);
    try (ProxyEvents p = new ProxyEvents(events, new ProcMountTable(mountinfo(20049)))) {
      p.targetUnreachable("fs-1|fsap-2", 20049, "cannot connect to 10.0.0.5:2049: refused");
      p.targetReachable("fs-1|fsap-2", 20049, java.time.Duration.ofSeconds(312));
      p.drain();
    }
    List<Event> onPod = api.on("Pod");
    assertEquals(
        List.of("MountTargetUnreachable", "MountTargetReachable"),
        onPod.stream().map(Event::getReason).toList());
    assertEquals(List.of("Warning", "Normal"), onPod.stream().map(Event::getType).toList());
    String down = onPod.getFirst().getMessage();
    assertTrue(down.contains("cannot connect to 10.0.0.5:2049: refused"), down);
    assertTrue(down.contains("is fine and stays up"), down);
    assertTrue(onPod.getLast().getMessage().contains("after 312 s"), onPod.getLast().getMessage());
    List<Event> onNode = api.on("Node");
    assertEquals(2, onNode.size(), api.all().toString());
    assertTrue(
        onNode.getFirst().getMessage().startsWith("PersistentVolume pv-data: the EFS mount"));
  }

  @Test
  void anOrphanNamesItsOwnMountPointsAndACrashLoopItsLastExit() throws Exception {
    pods.published(PodEventsTest.TARGET, PodEventsTest.WRITER);
    try (ProxyEvents p = new ProxyEvents(events, new ProcMountTable(mountinfo(20051)))) {
      // the orphan's mounts are gone from the table by now: the ones the reconciler names count
      p.orphanUnmounted(20049, List.of(PodEventsTest.TARGET));
      p.crashLooping("fs-1|fsap-2", 20051, "exited with code 12");
      p.drain();
    }
    List<Event> onPod = api.on("Pod");
    assertEquals(
        List.of("OrphanMountUnmounted", "ProxyCrashLooping"),
        onPod.stream().map(Event::getReason).toList());
    assertTrue(onPod.getLast().getMessage().contains("exited with code 12"));
    assertEquals(2, api.on("Node").size());
  }

  @Test
  void aStormOfDistinctMessagesIsOneEventCountedUpToTheBurst() throws Exception {
    pods.published(PodEventsTest.TARGET, PodEventsTest.WRITER);
    try (ProxyEvents p = new ProxyEvents(events, new ProcMountTable(mountinfo(20049)))) {
      for (int i = 1; i <= 40; i++) {
        p.restarted("fs-1|fsap-2", 20049, "was killed by signal 9", i); // each message differs
      }
      p.drain();
    }
    for (String kind : List.of("Pod", "Node")) {
      List<Event> on = api.on(kind);
      assertEquals(1, on.size(), kind);
      assertEquals(SpamFilter.BURST, on.getFirst().getCount(), kind);
      assertTrue(
          on.getFirst().getMessage().contains("(restart " + SpamFilter.BURST + ")"),
          on.getFirst().getMessage());
    }
    assertEquals(2, api.creates.get());
    assertEquals(2 * (SpamFilter.BURST - 1), api.updates.get());
  }

  @Test
  void theSpamFilterRefillsOverTime() {
    SpamFilter f = new SpamFilter(Clock.systemUTC());
    for (int i = 0; i < SpamFilter.BURST; i++) {
      assertTrue(f.allow("pod/a", 0));
    }
    assertFalse(f.allow("pod/a", 0));
    assertTrue(f.allow("pod/b", 0), "buckets are per object");
    assertFalse(f.allow("pod/a", SpamFilter.REFILL_SECONDS * 1000 - 1000));
    assertTrue(f.allow("pod/a", SpamFilter.REFILL_SECONDS * 1000));
    assertFalse(f.allow("pod/a", SpamFilter.REFILL_SECONDS * 1000));
  }
}
