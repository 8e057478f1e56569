package io.efscsi.emulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.efscsi.emulator.EfsState.AccessPoint;
import io.efscsi.emulator.EfsState.EfsError;
import io.efscsi.emulator.EfsState.FileSystem;
import io.efscsi.emulator.EfsState.MountTarget;
import io.efscsi.emulator.EfsState.PosixUser;
import io.efscsi.emulator.EfsState.RootDirectory;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The EFS REST-JSON calls the CSI driver makes, under {@code /2015-02-01/}: CreateAccessPoint,
 * DescribeAccessPoints (by id or by file system, paged), DeleteAccessPoint, DescribeFileSystems and
 * DescribeMountTargets, with EFS's shapes and errors ({@link EfsError}). The state is shared with
 * {@link EfsEmulator}, whose lock guards it.
 */
final class EfsApi {

  static final String API = "/2015-02-01/";
  private static final Pattern AP_PATH = Pattern.compile(API + "access-points/([^/?]+)");
  private static final Pattern TAGS_PATH = Pattern.compile(API + "resource-tags/([^/?]+)");

  private final ObjectMapper json = new ObjectMapper();
  private final EfsState state;
  private final Object lock;

  EfsApi(EfsState state, Object lock) {
    this.state = state;
    this.lock = lock;
  }

  /** Answers one call; null for an empty 204 answer. */
  JsonNode handle(String action, String account, String path, Map<String, String> q, String body)
      throws IOException {
    return switch (action) {
      case "CreateAccessPoint" -> createAccessPoint(account, json.readTree(body));
      case "DescribeAccessPoints" -> describeAccessPoints(account, q);
      case "DeleteAccessPoint" -> deleteAccessPoint(account, path);
      case "DescribeFileSystems" -> describeFileSystems(account, q);
      case "DescribeMountTargets" -> describeMountTargets(account, q);
      case "TagResource" -> tagResource(account, path, json.readTree(body));
      default -> throw new EfsError(400, "BadRequest", "unsupported " + action);
    };
  }

  static String action(String method, String path) {
    String rest = path.substring(API.length());
    return switch (method
        + " "
        + (rest.contains("/") ? rest.substring(0, rest.indexOf('/')) : rest)) {
      case "POST access-points" -> "CreateAccessPoint";
      case "GET access-points" -> "DescribeAccessPoints";
      case "DELETE access-points" -> "DeleteAccessPoint";
      case "GET file-systems" -> "DescribeFileSystems";
      case "GET mount-targets" -> "DescribeMountTargets";
      case "POST resource-tags" -> "TagResource";
      default -> method + " " + rest;
    };
  }

  private JsonNode createAccessPoint(String account, JsonNode req) {
    JsonNode pu = req.path("PosixUser");
    PosixUser user =
        pu.isMissingNode() ? null : new PosixUser(pu.path("Uid").asLong(), pu.path("Gid").asLong());
    JsonNode rd = req.path("RootDirectory");
    JsonNode ci = rd.path("CreationInfo");
    String path = rd.path("Path").asText("/");
    if (!ci.isMissingNode() && !ci.hasNonNull("Permissions")) {
      throw new EfsError(400, "BadRequest", "CreationInfo.Permissions is required");
    }
    if (path.length() > 100) {
      throw new EfsError(400, "BadRequest", "Path exceeds 100 characters: " + path);
    }
    RootDirectory dir =
        new RootDirectory(
            path,
            ci.path("OwnerUid").asLong(-1),
            ci.path("OwnerGid").asLong(-1),
            ci.path("Permissions").asText(""));
    Map<String, String> tags = new LinkedHashMap<>();
    req.path("Tags").forEach(t -> tags.put(t.path("Key").asText(), t.path("Value").asText()));
    String token = req.path("ClientToken").asText();
    String fsId = req.path("FileSystemId").asText();
    synchronized (lock) {
      return describe(state.create(account, token, fsId, user, dir, tags));
    }
  }

  private JsonNode describeAccessPoints(String account, Map<String, String> q) {
    int max = Integer.parseInt(q.getOrDefault("MaxResults", "100"));
    ObjectNode out = json.createObjectNode();
    ArrayNode list = out.putArray("AccessPoints");
    synchronized (lock) {
      if (q.containsKey("AccessPointId")) {
        list.add(describe(state.accessPoint(account, q.get("AccessPointId"))));
        return out;
      }
      String fsId = q.get("FileSystemId");
      if (fsId == null) {
        throw new EfsError(400, "BadRequest", "FileSystemId or AccessPointId is required");
      }
      EfsState.Page page =
          state.page(account, fsId, Optional.ofNullable(q.get("NextToken")), Math.min(max, 1000));
      page.items().forEach(ap -> list.add(describe(ap)));
      page.next().ifPresent(n -> out.put("NextToken", n));
    }
    return out;
  }

  private JsonNode deleteAccessPoint(String account, String path) {
    Matcher m = AP_PATH.matcher(path);
    if (!m.matches()) {
      throw new EfsError(400, "BadRequest", "no access point id in " + path);
    }
    synchronized (lock) {
      state.delete(account, URLDecoder.decode(m.group(1), StandardCharsets.UTF_8));
    }
    return null;
  }

  /** TagResource (POST /2015-02-01/resource-tags/{ResourceId}); access points only here. */
  private JsonNode tagResource(String account, String path, JsonNode req) {
    Matcher m = TAGS_PATH.matcher(path);
    if (!m.matches()) {
      throw new EfsError(400, "BadRequest", "no resource id in " + path);
    }
    String id = URLDecoder.decode(m.group(1), StandardCharsets.UTF_8);
    if (!id.startsWith("fsap-")) {
      throw new EfsError(400, "BadRequest", "this emulator tags access points only, not " + id);
    }
    Map<String, String> tags = new LinkedHashMap<>();
    req.path("Tags").forEach(t -> tags.put(t.path("Key").asText(), t.path("Value").asText()));
    if (tags.isEmpty()) {
      throw new EfsError(400, "BadRequest", "Tags is required");
    }
    synchronized (lock) {
      state.tag(account, id, tags);
    }
    return null;
  }

  private JsonNode describeFileSystems(String account, Map<String, String> q) {
    synchronized (lock) {
      ObjectNode out = json.createObjectNode();
      ArrayNode list = out.putArray("FileSystems");
      String id = q.get("FileSystemId");
      for (FileSystem fs :
          id == null
              ? state.fileSystems(account)
              : java.util.List.of(state.fileSystem(account, id))) {
        ObjectNode f =
            list.addObject()
                .put("OwnerId", fs.account)
                .put("CreationToken", fs.id)
                .put("FileSystemId", fs.id)
                .put("CreationTime", 1_767_225_600)
                .put("LifeCycleState", "available")
                .put("NumberOfMountTargets", fs.mountTargets.size())
                .put("PerformanceMode", "generalPurpose")
                .put("ThroughputMode", "elastic")
                .put("Encrypted", true);
        f.putObject("SizeInBytes").put("Value", 6144);
        f.putArray("Tags");
        fs.oneZoneAz.ifPresent(
            az -> f.put("AvailabilityZoneName", az).put("AvailabilityZoneId", az + "-id"));
      }
      return out;
    }
  }

  private JsonNode describeMountTargets(String account, Map<String, String> q) {
    synchronized (lock) {
      ObjectNode out = json.createObjectNode();
      ArrayNode list = out.putArray("MountTargets");
      FileSystem fs = state.fileSystem(account, q.getOrDefault("FileSystemId", ""));
      for (MountTarget mt : fs.mountTargets) {
        list.addObject()
            .put("OwnerId", fs.account)
            .put("MountTargetId", mt.id())
            .put("FileSystemId", fs.id)
            .put("SubnetId", "subnet-" + mt.id().substring(5, 13))
            .put("LifeCycleState", "available")
            .put("IpAddress", mt.ip())
            .put("AvailabilityZoneName", mt.az())
            .put("AvailabilityZoneId", mt.az() + "-id");
      }
      return out;
    }
  }

  private ObjectNode describe(AccessPoint ap) {
    return json.valueToTree(toMap(ap));
  }

  static Map<String, Object> toMap(AccessPoint ap) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("ClientToken", ap.clientToken());
    m.put(
        "Tags",
        ap.tags().entrySet().stream()
            .map(e -> Map.of("Key", e.getKey(), "Value", e.getValue()))
            .toList());
    m.put("AccessPointId", ap.id());
    m.put(
        "AccessPointArn",
        "arn:aws:elasticfilesystem:us-east-1:" + ap.account() + ":access-point/" + ap.id());
    m.put("FileSystemId", ap.fileSystemId());
    if (ap.posixUser() != null) {
      m.put("PosixUser", Map.of("Uid", ap.posixUser().uid(), "Gid", ap.posixUser().gid()));
    }
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("Path", ap.root().path());
    if (ap.root().ownerUid() >= 0) {
      root.put(
          "CreationInfo",
          Map.of(
              "OwnerUid", ap.root().ownerUid(),
              "OwnerGid", ap.root().ownerGid(),
              "Permissions", ap.root().permissions()));
    }
    m.put("RootDirectory", root);
    m.put("OwnerId", ap.account());
    m.put("LifeCycleState", "available");
    return m;
  }
}
