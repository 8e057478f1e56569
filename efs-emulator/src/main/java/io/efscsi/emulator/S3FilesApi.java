package io.efscsi.emulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.efscsi.emulator.EfsState.AccessPoint;
import io.efscsi.emulator.EfsState.EfsError;
import io.efscsi.emulator.EfsState.FileSystem;
import io.efscsi.emulator.EfsState.PosixUser;
import io.efscsi.emulator.EfsState.RootDirectory;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The Amazon S3 Files REST-JSON calls the CSI driver makes (the published service model's paths and
 * shapes): {@code PUT /access-points} (CreateAccessPoint), {@code GET /access-points}
 * (ListAccessPoints, whose items carry no client token and no tags), {@code DELETE
 * /access-points/{id}} and {@code GET /file-systems} (ListFileSystems). Its own {@link EfsState}
 * holds the S3 Files file systems, so the EFS API does not see them nor the other way round. Errors
 * are S3 Files': ResourceNotFoundException, ConflictException (naming the existing access point in
 * {@code resourceId}), ServiceQuotaExceededException, ValidationException.
 */
final class S3FilesApi {

  /** What one call answers: status, JSON body (null for none). */
  record Answer(int status, JsonNode body) {}

  private final ObjectMapper json = new ObjectMapper();
  private final EfsState state;
  private final Object lock;

  S3FilesApi(EfsState state, Object lock) {
    this.state = state;
    this.lock = lock;
  }

  static boolean handles(String path) {
    return path.equals("/access-points")
        || path.startsWith("/access-points/")
        || path.equals("/file-systems");
  }

  static String action(String method, String path) {
    return switch (method + " " + (path.startsWith("/access-points/") ? "/access-points/" : path)) {
      case "PUT /access-points" -> "S3Files.CreateAccessPoint";
      case "GET /access-points" -> "S3Files.ListAccessPoints";
      case "DELETE /access-points/" -> "S3Files.DeleteAccessPoint";
      case "GET /file-systems" -> "S3Files.ListFileSystems";
      default -> "S3Files." + method + " " + path;
    };
  }

  /** Handles one call; EFS-style errors of the shared state become S3 Files errors. */
  Answer handle(String action, String account, String path, Map<String, String> q, String body) {
    try {
      return switch (action) {
        case "S3Files.CreateAccessPoint" -> new Answer(200, create(account, json.readTree(body)));
        case "S3Files.ListAccessPoints" -> new Answer(200, list(account, q));
        case "S3Files.DeleteAccessPoint" -> {
          delete(account, path);
          yield new Answer(204, null);
        }
        case "S3Files.ListFileSystems" -> new Answer(200, fileSystems(account, q));
        default -> throw new EfsError(400, "ValidationException", "unsupported " + action);
      };
    } catch (IOException e) {
      throw new EfsError(400, "ValidationException", "body is not JSON: " + e.getMessage());
    } catch (EfsError e) {
      throw translate(e);
    }
  }

  private static EfsError translate(EfsError e) {
    return switch (e.code) {
      case "FileSystemNotFound", "AccessPointNotFound" ->
          new EfsError(404, "ResourceNotFoundException", e.getMessage());
      case "AccessPointAlreadyExists" ->
          new EfsError(
              409,
              "ConflictException",
              e.getMessage(),
              Map.of(
                  "resourceId",
                  e.extra.getOrDefault("AccessPointId", ""),
                  "resourceType",
                  "AccessPoint"));
      case "AccessPointLimitExceeded" ->
          new EfsError(402, "ServiceQuotaExceededException", e.getMessage());
      case "BadRequest" -> new EfsError(400, "ValidationException", e.getMessage());
      case "InternalServerError" -> new EfsError(500, "InternalServerException", e.getMessage());
      default -> e;
    };
  }

  private JsonNode create(String account, JsonNode req) {
    JsonNode pu = req.path("posixUser");
    PosixUser user =
        pu.isMissingNode() ? null : new PosixUser(pu.path("uid").asLong(), pu.path("gid").asLong());
    JsonNode rd = req.path("rootDirectory");
    JsonNode cp = rd.path("creationPermissions");
    String path = rd.path("path").asText("/");
    if (!cp.isMissingNode() && !cp.hasNonNull("permissions")) {
      throw new EfsError(400, "BadRequest", "creationPermissions.permissions is required");
    }
    if (path.length() > 100) {
      throw new EfsError(400, "BadRequest", "path exceeds 100 characters: " + path);
    }
    RootDirectory dir =
        new RootDirectory(
            path,
            cp.path("ownerUid").asLong(-1),
            cp.path("ownerGid").asLong(-1),
            cp.path("permissions").asText(""));
    Map<String, String> tags = new LinkedHashMap<>();
    req.path("tags").forEach(t -> tags.put(t.path("key").asText(), t.path("value").asText()));
    synchronized (lock) {
      AccessPoint ap =
          state.create(
              account,
              req.path("clientToken").asText(),
              req.path("fileSystemId").asText(),
              user,
              dir,
              tags);
      ObjectNode out = describe(ap);
      out.put("clientToken", ap.clientToken());
      ArrayNode t = out.putArray("tags");
      ap.tags().forEach((k, v) -> t.addObject().put("key", k).put("value", v));
      return out;
    }
  }

  private JsonNode list(String account, Map<String, String> q) {
    String fsId = q.get("fileSystemId");
    if (fsId == null) {
      throw new EfsError(400, "BadRequest", "fileSystemId is required");
    }
    int max = Integer.parseInt(q.getOrDefault("maxResults", "100"));
    ObjectNode out = json.createObjectNode();
    ArrayNode items = out.putArray("accessPoints");
    synchronized (lock) {
      EfsState.Page page =
          state.page(account, fsId, Optional.ofNullable(q.get("nextToken")), Math.min(max, 1000));
      page.items().forEach(ap -> items.add(describe(ap)));
      page.next().ifPresent(n -> out.put("nextToken", n));
    }
    return out;
  }

  private void delete(String account, String path) {
    String id =
        URLDecoder.decode(path.substring("/access-points/".length()), StandardCharsets.UTF_8);
    synchronized (lock) {
      state.delete(account, id);
    }
  }

  private JsonNode fileSystems(String account, Map<String, String> q) {
    int max = Integer.parseInt(q.getOrDefault("maxResults", "100"));
    String from = q.get("nextToken");
    ObjectNode out = json.createObjectNode();
    ArrayNode items = out.putArray("fileSystems");
    synchronized (lock) {
      List<FileSystem> all = state.fileSystems(account);
      for (FileSystem fs : all) {
        if (from != null && fs.id.compareTo(from) < 0) {
          continue;
        }
        if (items.size() == max) {
          out.put("nextToken", fs.id);
          break;
        }
        items
            .addObject()
            .put("fileSystemId", fs.id)
            .put(
                "fileSystemArn",
                "arn:aws:s3files:us-east-1:" + fs.account + ":file-system/" + fs.id)
            .put("bucket", "arn:aws:s3:::bucket-" + fs.id)
            .put("name", fs.id)
            .put("ownerId", fs.account)
            .put("creationTime", 1_767_225_600)
            .put("status", "available");
      }
    }
    return out;
  }

  private ObjectNode describe(AccessPoint ap) {
    ObjectNode a = json.createObjectNode();
    a.put("accessPointId", ap.id())
        .put(
            "accessPointArn",
            "arn:aws:s3files:us-east-1:" + ap.account() + ":access-point/" + ap.id())
        .put("fileSystemId", ap.fileSystemId())
        .put("ownerId", ap.account())
        .put("status", "available");
    if (ap.posixUser() != null) {
      a.putObject("posixUser").put("uid", ap.posixUser().uid()).put("gid", ap.posixUser().gid());
    }
    ObjectNode root = a.putObject("rootDirectory").put("path", ap.root().path());
    if (ap.root().ownerUid() >= 0) {
      root.putObject("creationPermissions")
          .put("ownerUid", ap.root().ownerUid())
          .put("ownerGid", ap.root().ownerGid())
          .put("permissions", ap.root().permissions());
    }
    return a;
  }
}
