package io.efscsi.node.events;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * {@link EventApi} through fabric8: events create and patch (never get: the node may not read
 * events), nodes get.
 */
public final class KubernetesEventApi implements EventApi {

  private final Supplier<KubernetesClient> client;

  /**
   * @param client the API client, made on first use
   */
  public KubernetesEventApi(Supplier<KubernetesClient> client) {
    this.client = client;
  }

  @Override
  public void create(Event event) {
    client
        .get()
        .v1()
        .events()
        .inNamespace(event.getMetadata().getNamespace())
        .resource(event)
        .create();
  }

  @Override
  public boolean update(String namespace, String name, int count, Instant last, String message) {
    Map<String, Object> patch = new LinkedHashMap<>();
    patch.put("count", count);
    patch.put("lastTimestamp", last.toString());
    patch.put("message", message);
    try {
      // on a resource of its own name (withName would GET it first: events may not be read)
      Event named =
          new EventBuilder()
              .withNewMetadata()
              .withNamespace(namespace)
              .withName(name)
              .endMetadata()
              .build();
      client
          .get()
          .v1()
          .events()
          .inNamespace(namespace)
          .resource(named)
          .patch(PatchContext.of(PatchType.JSON_MERGE), Serialization.asJson(patch));
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return false;
      }
      throw e;
    }
  }

  @Override
  public Optional<String> nodeUid(String name) {
    try {
      Node n = client.get().nodes().withName(name).get();
      return n == null ? Optional.empty() : Optional.ofNullable(n.getMetadata().getUid());
    } catch (KubernetesClientException e) {
      if (e.getCode() == 403 || e.getCode() == 404) {
        return Optional.empty();
      }
      throw e;
    }
  }
}
