package io.efscsi.node.events;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.efscsi.node.volume.PodRef;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PublishedPodsTest {

  static String target(int i) {
    return PodEventsTest.target(uid(i), "pv-" + i);
  }

  static String uid(int i) {
    return String.format("00000000-0000-0000-0000-%012d", i);
  }

  @Test
  void aPodIsKnownFromPublishToUnpublish() {
    PublishedPods pods = new PublishedPods();
    PodRef p = new PodRef("team-a", "writer-0", uid(1));
    pods.published(target(1), p);
    assertEquals(Optional.of(p), pods.pod(target(1)));
    pods.unpublished(target(1));
    assertEquals(Optional.empty(), pods.pod(target(1)));
    assertEquals(0, pods.size());
  }

  @Test
  void aReferenceWhoseUidTheTargetPathContradictsIsNotKept() {
    PublishedPods pods = new PublishedPods();
    pods.published(target(1), new PodRef("team-a", "writer-0", uid(1)));
    pods.published(target(1), new PodRef("team-b", "other", uid(2)));
    assertEquals(Optional.empty(), pods.pod(target(1)), "neither the new nor the old one");
    pods.published("/mnt/elsewhere", new PodRef("team-a", "writer-0", uid(1)));
    assertEquals(1, pods.size(), "a path that names no pod takes the reference as given");
  }

  @Test
  void theOldestPublishedGoesFirstPastTheBound() {
    PublishedPods pods = new PublishedPods(3);
    for (int i = 0; i < 3; i++) {
      pods.published(target(i), new PodRef("ns", "p" + i, uid(i)));
    }
    pods.published(target(0), new PodRef("ns", "p0", uid(0))); // published again: newest
    pods.published(target(3), new PodRef("ns", "p3", uid(3)));
    assertEquals(3, pods.size());
    assertEquals(Optional.empty(), pods.pod(target(1)));
    assertEquals("p0", pods.pod(target(0)).orElseThrow().name());
  }
}
