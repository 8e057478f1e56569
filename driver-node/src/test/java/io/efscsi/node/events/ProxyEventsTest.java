package io.efscsi.node.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.supervisor.mounts.ProcMountTable;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeListBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Proxy events against the fabric8 mock API server: on the pods whose targets carry the proxy's
 * port and on their PersistentVolume; a storm is cut to the spam filter's burst; a failed stage
 * lands on the PV of its volume handle.
 */
@EnableKubernetesMockClient
class ProxyEventsTest {

  static final String NODE = PodEventsTest.NODE;
  static final String UID = PodEventsTest.UID;

  KubernetesMockServer server;
  KubernetesClient client;
  @TempDir Path tmp;
  final List<String> podEvents = new CopyOnWriteArrayList<>();
  final List<String> pvEvents = new CopyOnWriteArrayList<>();

  static PersistentVolume pv(String name, String handle) {
    return new PersistentVolumeBuilder()
        .withNewMetadata()
        .withName(name)
        .withUid("pv-uid-" + name)
        .endMetadata()
        .withNewSpec()
        .withNewCsi()
        .withDriver("efs.csi.aws.com")
        .withVolumeHandle(handle)
        .endCsi()
        .endSpec()
        .build();
  }

  @BeforeEach
  void apiServer() {
    PodEventsTest.servePods(server);
    server
        .expect()
        .get()
        .withPath("/api/v1/persistentvolumes/pv-data")
        .andReturn(200, pv("pv-data", "fs-1::fsap-2"))
        .always();
    server
        .expect()
        .get()
        .withPath("/api/v1/persistentvolumes")
        .andReturn(
            200,
            new PersistentVolumeListBuilder()
                .withItems(pv("pv-other", "fs-9"), pv("pv-data", "fs-1::fsap-2"))
                .build())
        .always();
    server
        .expect()
        .post()
        .withPath("/api/v1/namespaces/team-a/events")
        .andReply(201, r -> keep(podEvents, r))
        .always();
    server
        .expect()
        .post()
        .withPath("/api/v1/namespaces/default/events")
        .andReply(201, r -> keep(pvEvents, r))
        .always();
  }

  static Object keep(List<String> into, RecordedRequest r) {
    String body = r.getUtf8Body();
    into.add(body);
    return body;
  }

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
  void anOomKillIsAWarningOnThePodAndItsVolume() throws Exception {
    Clock clock = Clock.fixed(Instant.parse("2026-11-24T07:00:00Z"), ZoneOffset.UTC);
    PodEvents events = new PodEvents(() -> client, NODE, clock);
    try (ProxyEvents p = new ProxyEvents(events, new ProcMountTable(mountinfo(20049)))) {
      p.oomKilled("fs-1|fsap-2|10.0.0.5:2049|tls", 20049);
      p.oomKilled("fs-1|fsap-2|10.0.0.5:2049|tls", 20050); // no pod uses that port: no event
      p.drain();
    }
    assertEquals(1, podEvents.size(), podEvents.toString());
    Event onPod = Serialization.unmarshal(podEvents.getFirst(), Event.class);
    assertEquals("ProxyOOMKilled", onPod.getReason());
    assertEquals("Warning", onPod.getType());
    assertEquals("writer-0", onPod.getInvolvedObject().getName());
    assertTrue(onPod.getMessage().contains("127.0.0.1:20049"), onPod.getMessage());
    assertEquals(1, pvEvents.size(), pvEvents.toString());
    Event onPv = Serialization.unmarshal(pvEvents.getFirst(), Event.class);
    assertEquals("PersistentVolume", onPv.getInvolvedObject().getKind());
    assertEquals("pv-data", onPv.getInvolvedObject().getName());
    assertEquals("pv-uid-pv-data", onPv.getInvolvedObject().getUid());
    assertEquals("ProxyOOMKilled", onPv.getReason());
  }

  @Test
  void anOrphanNamesItsOwnMountPointsAndACrashLoopItsLastExit() throws Exception {
    PodEvents events = new PodEvents(() -> client, NODE, Clock.systemUTC());
    try (ProxyEvents p = new ProxyEvents(events, new ProcMountTable(mountinfo(20051)))) {
      // the orphan's mounts are gone from the table by now: the ones the reconciler names count
      p.orphanUnmounted(20049, List.of(PodEventsTest.TARGET));
      p.crashLooping("fs-1|fsap-2", 20051, "exited with code 12");
      p.drain();
    }
    List<String> reasons =
        podEvents.stream().map(b -> Serialization.unmarshal(b, Event.class).getReason()).toList();
    assertEquals(List.of("OrphanMountUnmounted", "ProxyCrashLooping"), reasons);
    assertTrue(podEvents.getLast().contains("exited with code 12"), podEvents.getLast());
    assertEquals(2, pvEvents.size());
  }

  @Test
  void aStormOfDistinctEventsIsCutToTheBurstPerObject() throws Exception {
    PodEvents events = new PodEvents(() -> client, NODE, Clock.systemUTC());
    try (ProxyEvents p = new ProxyEvents(events, new ProcMountTable(mountinfo(20049)))) {
      for (int i = 1; i <= 40; i++) {
        p.restarted("fs-1|fsap-2", 20049, "was killed by signal 9", i); // each message differs
      }
      p.drain();
    }
    assertEquals(SpamFilter.BURST, podEvents.size());
    assertEquals(SpamFilter.BURST, pvEvents.size());
  }

  @Test
  void aFailedStageLandsOnThePersistentVolumeOfItsHandle() {
    PodEvents events = new PodEvents(() -> client, NODE, Clock.systemUTC());
    assertTrue(
        events.recordOnVolumeHandle(
            "fs-1::fsap-2", PodEvents.Type.Warning, "StageFailed", "proxy is crash-looping"));
    assertFalse(
        events.recordOnVolumeHandle("fs-404", PodEvents.Type.Warning, "StageFailed", "x"),
        "no PersistentVolume has that handle");
    Event e = Serialization.unmarshal(pvEvents.getLast(), Event.class);
    assertEquals("pv-data", e.getInvolvedObject().getName());
    assertEquals("StageFailed", e.getReason());
    assertEquals("proxy is crash-looping", e.getMessage());
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
