package io.efscsi.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Kubernetes API's object schemas, from the OpenAPI (Swagger 2) definitions published on Maven
 * Central in {@code io.fabric8:kubernetes-model-validator} ({@code openshift-generated.json}:
 * Kubernetes 1.34 and the Prometheus Operator's CRDs), checked with a JSON-schema validator as
 * {@code kubectl apply} with strict field validation would: unknown fields are errors.
 *
 * <p>Two definitions are corrected to what the API server accepts: the published document types
 * {@code IntOrString} and {@code Quantity} as strings, while the API takes {@code maxUnavailable:
 * 1} and {@code cpu: 1} as numbers (Kubernetes' own spec declares them with a format and no type).
 */
final class KubernetesSchemas {

  private static final String RESOURCE = "/openshift-generated.json";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private static final KubernetesSchemas INSTANCE = new KubernetesSchemas();

  private final ObjectNode definitions;
  private final JsonSchemaFactory factory =
      JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V4);
  private final Map<String, JsonSchema> byDefinition = new ConcurrentHashMap<>();

  static KubernetesSchemas get() {
    return INSTANCE;
  }

  private KubernetesSchemas() {
    try (InputStream in = KubernetesSchemas.class.getResourceAsStream(RESOURCE)) {
      Objects.requireNonNull(in, RESOURCE + " not on the test classpath");
      definitions = (ObjectNode) JSON.readTree(in).get("definitions");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ObjectNode intOrString =
        definitions.putObject("io.k8s.apimachinery.pkg.util.intstr.IntOrString");
    intOrString.putArray("type").add("integer").add("string");
    ObjectNode quantity = definitions.putObject("io.k8s.apimachinery.pkg.api.resource.Quantity");
    quantity.putArray("type").add("string").add("number");
    definitions.forEach(KubernetesSchemas::strict);
  }

  /** Unknown properties are errors wherever a definition lists its properties and nothing else. */
  private static void strict(JsonNode schema) {
    if (!(schema instanceof ObjectNode o)) {
      return;
    }
    JsonNode properties = o.get("properties");
    if (properties != null) {
      properties.forEach(KubernetesSchemas::strict);
      if (!o.has("additionalProperties") && !o.has("x-kubernetes-preserve-unknown-fields")) {
        o.put("additionalProperties", false);
      }
    }
    strict(o.get("items"));
    strict(o.get("additionalProperties"));
  }

  /**
   * The definition of an object's apiVersion and kind, named as the Kubernetes spec names them:
   * {@code v1} is {@code io.k8s.api.core.v1}, {@code apps/v1} is {@code io.k8s.api.apps.v1}, {@code
   * storage.k8s.io/v1} is {@code io.k8s.api.storage.v1}, {@code monitoring.coreos.com/v1} is {@code
   * com.coreos.monitoring.v1}.
   */
  static String definitionOf(String apiVersion, String kind) {
    int slash = apiVersion.indexOf('/');
    String group = slash < 0 ? "" : apiVersion.substring(0, slash);
    String version = apiVersion.substring(slash + 1);
    String prefix;
    if (group.isEmpty()) {
      prefix = "io.k8s.api.core";
    } else if (!group.contains(".")) {
      prefix = "io.k8s.api." + group;
    } else if (group.endsWith(".k8s.io")) {
      prefix = "io.k8s.api." + group.substring(0, group.indexOf('.'));
    } else {
      List<String> labels = new ArrayList<>(List.of(group.split("\\.")));
      Collections.reverse(labels);
      prefix = String.join(".", labels);
    }
    return prefix + "." + version + "." + kind;
  }

  /**
   * The errors of one object, each naming the object ({@code Kind/name}) and the path in it; empty
   * when the API would accept the object.
   */
  List<String> errors(JsonNode object) {
    String apiVersion = object.path("apiVersion").asText();
    String kind = object.path("kind").asText();
    String id = kind + "/" + object.path("metadata").path("name").asText("?");
    if (apiVersion.isEmpty() || kind.isEmpty()) {
      return List.of(id + ": no apiVersion or kind");
    }
    String definition = definitionOf(apiVersion, kind);
    if (!definitions.has(definition)) {
      return List.of(id + ": " + apiVersion + " " + kind + " is not a known API type");
    }
    JsonSchema schema = byDefinition.computeIfAbsent(definition, this::compile);
    List<String> out = new ArrayList<>();
    for (ValidationMessage m : schema.validate(object)) {
      out.add(id + " " + m.getMessage()); // the message starts with the path in the object
    }
    return out;
  }

  private JsonSchema compile(String definition) {
    ObjectNode root = NODES.objectNode();
    root.put("$schema", "http://json-schema.org/draft-04/schema#");
    root.put("$ref", "#/definitions/" + definition);
    root.set("definitions", definitions);
    return factory.getSchema(root);
  }
}
