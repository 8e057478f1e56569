package io.efscsi.node.k8s;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.fabric8.kubernetes.api.model.storage.CSINodeDriver;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes the startup taint {@value #TAINT_KEY} (any effect) from this node once the kubelet has
 * registered our driver, i.e. this node's CSINode lists {@value #DRIVER} (the Go driver's
 * tryRemoveNotReadyTaintUntilSucceed, with the CSINode gate of its PR #1939). Node mode only.
 *
 * <p>The taint goes with one JSON patch {@code [test /spec/taints = <as read>, replace /spec/taints
 * = <without ours>]}, so a taint another controller added or removed meanwhile is never lost: the
 * test fails, the Node is read again and the patch retried. A node without the taint is left alone.
 * {@link #start()} retries in the background with backoff until the taint is gone; each new outcome
 * is logged once.
 */
public final class NotReadyTaintRemover implements AutoCloseable {

  public static final String TAINT_KEY = "efs.csi.aws.com/agent-not-ready";
  public static final String DRIVER = "efs.csi.aws.com";

  private static final Logger log = LoggerFactory.getLogger(NotReadyTaintRemover.class);

  /** What one attempt found. */
  public enum Outcome {
    REMOVED(true),
    NO_TAINT(true),
    WAITING_FOR_CSINODE(false),
    NODE_MISSING(false),
    CONFLICT(false),
    FORBIDDEN(false),
    FAILED(false);

    final boolean done;

    Outcome(boolean done) {
      this.done = done;
    }
  }

  private record Attempt(Outcome outcome, String detail) {}

  private final KubernetesClient client;
  private final String nodeName;
  private final Backoff backoff;
  private volatile Thread thread;
  private String lastLogged = "";

  /**
   * @param backoff delays between attempts: {@code first} after a wait or a conflict, doubling on
   *     repeated failures up to {@code max}
   */
  public NotReadyTaintRemover(KubernetesClient client, String nodeName, Backoff backoff) {
    this.client = client;
    this.nodeName = nodeName;
    this.backoff = backoff;
  }

  /** Delays between attempts (the Go driver retries every second). */
  public record Backoff(Duration first, Duration max) {
    public static final Backoff DEFAULT =
        new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30));

    Duration after(int failures) {
      long ms = first.toMillis() << Math.min(failures, 20);
      return Duration.ofMillis(Math.min(ms, max.toMillis()));
    }
  }

  /**
   * The node name when the taint watcher should run: {@code CSI_NODE_NAME} is set and {@code
   * DISABLE_TAINT_WATCHER} is not (as in the Go driver).
   */
  public static Optional<String> nodeToWatch(Map<String, String> env) {
    if (env.containsKey("DISABLE_TAINT_WATCHER")) {
      return Optional.empty();
    }
    return Optional.ofNullable(env.get("CSI_NODE_NAME"))
        .map(String::strip)
        .filter(n -> !n.isEmpty());
  }

  /**
   * Starts the background attempts (once); they end when the taint is gone or on {@link #close}.
   */
  public synchronized void start() {
    if (thread == null) {
      thread = Thread.ofPlatform().daemon().name("taint-remover").start(this::run);
    }
  }

  private void run() {
    int failures = 0;
    while (!Thread.currentThread().isInterrupted()) {
      Outcome o = tryOnce();
      if (o.done || Thread.currentThread().isInterrupted()) {
        return;
      }
      failures = o == Outcome.CONFLICT || o == Outcome.WAITING_FOR_CSINODE ? 0 : failures + 1;
      try {
        Thread.sleep(backoff.after(failures));
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** One attempt: check the CSINode, read the Node, patch the taint away. */
  public Outcome tryOnce() {
    Attempt a;
    try {
      a = attempt();
    } catch (KubernetesClientException e) {
      if (Thread.currentThread().isInterrupted()) {
        return Outcome.FAILED; // closing: not worth a warning
      }
      a =
          e.getCode() == 403
              ? new Attempt(
                  Outcome.FORBIDDEN,
                  "forbidden: the node service account needs get and patch on nodes and get on"
                      + " csinodes (storage.k8s.io): "
                      + e.getMessage())
              : new Attempt(Outcome.FAILED, "HTTP " + e.getCode() + ": " + e.getMessage());
    }
    report(a);
    return a.outcome();
  }

  private Attempt attempt() {
    CSINode csiNode = client.storage().v1().csiNodes().withName(nodeName).get();
    if (!listsOurDriver(csiNode)) {
      return new Attempt(
          Outcome.WAITING_FOR_CSINODE,
          "CSINode "
              + nodeName
              + " does not list "
              + DRIVER
              + " yet (kubelet has not registered it)");
    }
    Node node = client.nodes().withName(nodeName).get();
    if (node == null) {
      return new Attempt(Outcome.NODE_MISSING, "Node " + nodeName + " does not exist");
    }
    List<Taint> taints =
        node.getSpec() == null || node.getSpec().getTaints() == null
            ? List.of()
            : node.getSpec().getTaints();
    List<Taint> kept = taints.stream().filter(t -> !TAINT_KEY.equals(t.getKey())).toList();
    if (kept.size() == taints.size()) {
      return new Attempt(Outcome.NO_TAINT, "Node " + nodeName + " has no " + TAINT_KEY + " taint");
    }
    return patch(taints, kept);
  }

  private Attempt patch(List<Taint> taints, List<Taint> kept) {
    var json = client.getKubernetesSerialization();
    String patch =
        "[{\"op\":\"test\",\"path\":\"/spec/taints\",\"value\":"
            + json.asJson(taints)
            + "},{\"op\":\"replace\",\"path\":\"/spec/taints\",\"value\":"
            + json.asJson(kept)
            + "}]";
    Node patched;
    try {
      patched = client.nodes().withName(nodeName).patch(PatchContext.of(PatchType.JSON), patch);
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409 || e.getCode() == 422) {
        return new Attempt(
            Outcome.CONFLICT,
            "Node "
                + nodeName
                + " taints changed while patching (HTTP "
                + e.getCode()
                + "); reading it again");
      }
      throw e;
    }
    boolean still =
        patched.getSpec().getTaints() != null
            && patched.getSpec().getTaints().stream().anyMatch(t -> TAINT_KEY.equals(t.getKey()));
    return still
        ? new Attempt(
            Outcome.CONFLICT, "Node " + nodeName + " still has " + TAINT_KEY + " after the patch")
        : new Attempt(Outcome.REMOVED, "removed the " + TAINT_KEY + " taint from Node " + nodeName);
  }

  private static boolean listsOurDriver(CSINode csiNode) {
    if (csiNode == null || csiNode.getSpec() == null || csiNode.getSpec().getDrivers() == null) {
      return false;
    }
    return csiNode.getSpec().getDrivers().stream()
        .map(CSINodeDriver::getName)
        .anyMatch(DRIVER::equals);
  }

  private synchronized void report(Attempt a) {
    String line = a.outcome() + ": " + a.detail();
    if (line.equals(lastLogged)) {
      return;
    }
    lastLogged = line;
    switch (a.outcome()) {
      case REMOVED, NO_TAINT, WAITING_FOR_CSINODE -> log.info("{}", a.detail());
      case CONFLICT -> log.debug("{}", a.detail());
      case FORBIDDEN ->
          log.error("cannot remove the {} taint, retrying: {}", TAINT_KEY, a.detail());
      case NODE_MISSING, FAILED ->
          log.warn("cannot remove the {} taint yet, retrying: {}", TAINT_KEY, a.detail());
    }
  }

  @Override
  public synchronized void close() {
    if (thread != null) {
      thread.interrupt();
      thread = null;
    }
  }
}
