package io.efscsi.controller.cloud;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.efscsi.controller.cloud.CloudException.Reason;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.SdkHttpMethod;

/**
 * {@link Cloud} on the Amazon S3 Files REST API (service {@code s3files}): the four calls the Go
 * driver makes and its IAM policy grants, CreateAccessPoint, DeleteAccessPoint, ListAccessPoints
 * and ListFileSystems. Describing is listing, as in the Go driver: an access point is found among
 * its file system's, a file system among the account's. S3 Files has no mount target lookup here
 * (the Go driver implements none either).
 */
public final class S3FilesCloud implements Cloud {

  /** Page size of ListAccessPoints, as the Go driver asks. */
  static final int PAGE = 1000;

  private final RestJsonCaller api;

  S3FilesCloud(RestJsonCaller api) {
    this.api = api;
  }

  @Override
  public String identity() {
    return "s3files";
  }

  @Override
  public FileSystem describeFileSystem(String fileSystemId) {
    AtomicReference<FileSystem> found = new AtomicReference<>();
    String token = null;
    do {
      Map<String, String> q = new LinkedHashMap<>();
      if (token != null) {
        q.put("nextToken", token);
      }
      JsonNode page = call("ListFileSystems", SdkHttpMethod.GET, "/file-systems", q, null);
      page.path("fileSystems")
          .forEach(f -> {
            if (fileSystemId.equals(f.path("fileSystemId").asText())) {
              found.set(new FileSystem(fileSystemId, Optional.empty()));
            }
          });
      token = page.path("nextToken").asText(null);
    } while (found.get() == null && token != null && !token.isEmpty());
    if (found.get() == null) {
      throw new CloudException(
          Reason.FILE_SYSTEM_NOT_FOUND,
          "File System does not exist: S3 Files file system " + fileSystemId + " is not listed",
          null);
    }
    return found.get();
  }

  @Override
  public AccessPoint createAccessPoint(AccessPointRequest q) {
    ObjectNode body = RestJsonCaller.json().createObjectNode();
    body.put("clientToken", q.clientToken()).put("fileSystemId", q.fileSystemId());
    body.putObject("posixUser").put("uid", q.uid()).put("gid", q.gid());
    ObjectNode root = body.putObject("rootDirectory");
    root.put("path", q.rootPath());
    root.putObject("creationPermissions")
        .put("ownerUid", q.uid())
        .put("ownerGid", q.gid())
        .put("permissions", q.permissions());
    var tags = body.putArray("tags");
    q.tags().forEach((k, v) -> tags.addObject().put("key", k).put("value", v));
    try {
      return toAccessPoint(
          call("CreateAccessPoint", SdkHttpMethod.PUT, "/access-points", Map.of(), body));
    } catch (CloudException e) {
      throw fileSystemMissing(e);
    }
  }

  @Override
  public Optional<AccessPoint> describeAccessPoint(String fileSystemId, String accessPointId) {
    AtomicReference<AccessPoint> found = new AtomicReference<>();
    try {
      listAccessPoints(
          fileSystemId,
          ap -> {
            if (ap.id().equals(accessPointId)) {
              found.set(ap);
            }
          });
    } catch (CloudException e) {
      if (e.reason() == Reason.ACCESS_POINT_NOT_FOUND
          || e.reason() == Reason.FILE_SYSTEM_NOT_FOUND) {
        return Optional.empty();
      }
      throw e;
    }
    return Optional.ofNullable(found.get());
  }

  @Override
  public void listAccessPoints(String fileSystemId, Consumer<AccessPoint> each) {
    String token = null;
    do {
      Map<String, String> q = new LinkedHashMap<>();
      q.put("fileSystemId", fileSystemId);
      q.put("maxResults", Integer.toString(PAGE));
      if (token != null) {
        q.put("nextToken", token);
      }
      JsonNode page;
      try {
        page = call("ListAccessPoints", SdkHttpMethod.GET, "/access-points", q, null);
      } catch (CloudException e) {
        throw fileSystemMissing(e);
      }
      page.path("accessPoints").forEach(a -> each.accept(toAccessPoint(a)));
      token = page.path("nextToken").asText(null);
    } while (token != null && !token.isEmpty());
  }

  /**
   * A ResourceNotFoundException of a call that names a file system (create, list): the file system
   * is what is missing.
   */
  private static CloudException fileSystemMissing(CloudException e) {
    return e.reason() != Reason.ACCESS_POINT_NOT_FOUND
        ? e
        : new CloudException(
            Reason.FILE_SYSTEM_NOT_FOUND,
            "File System does not exist: " + e.getMessage(),
            e.getCause());
  }

  @Override
  public boolean deleteAccessPoint(String accessPointId) {
    return AwsCloud.unlessAccessPointNotFound(() ->
        call(
            "DeleteAccessPoint",
            SdkHttpMethod.DELETE,
            "/access-points/" + encode(accessPointId),
            Map.of(),
            null));
  }

  @Override
  public void tagAccessPoint(String accessPointId, Map<String, String> tags) {
    throw new CloudException(
        Reason.BAD_REQUEST,
        "access point "
            + accessPointId
            + " is an S3 Files access point: this driver records no capacity on it",
        null);
  }

  @Override
  public List<MountTarget> describeMountTargets(String fileSystemId) {
    throw new CloudException(
        Reason.BAD_REQUEST,
        "mount targets of S3 Files file system "
            + fileSystemId
            + " are not looked up (the Go driver implements no DescribeMountTargets for S3 Files"
            + " either)",
        null);
  }

  private JsonNode call(
      String operation,
      SdkHttpMethod method,
      String path,
      Map<String, String> query,
      JsonNode body) {
    return classified(
        operation,
        () -> api.call(new RestJsonCaller.Request(operation, method, path, query, body)));
  }

  /** Runs one call (retries included) and classifies its failure as {@link AwsCloud} does. */
  static <T> T classified(String operation, Supplier<T> call) {
    try {
      return call.get();
    } catch (SdkException e) {
      throw classify(operation, e);
    }
  }

  static CloudException classify(String operation, SdkException e) {
    String code =
        e instanceof AwsServiceException a && a.awsErrorDetails() != null
            ? a.awsErrorDetails().errorCode()
            : "";
    String detail = operation + ": " + e.getMessage();
    return switch (code) {
      case "ResourceNotFoundException" ->
          new CloudException(Reason.ACCESS_POINT_NOT_FOUND, "Not found: " + detail, e);
      case "ConflictException" ->
          new CloudException(
              Reason.ALREADY_EXISTS,
              "Access Point already exists: " + detail,
              e,
              e instanceof RestJsonCaller.ServiceError s
                  ? Optional.ofNullable(s.body().path("resourceId").asText(null))
                  : Optional.empty());
      case "ServiceQuotaExceededException" ->
          new CloudException(
              Reason.LIMIT_EXCEEDED, "Access point limit of the file system reached: " + detail, e);
      case "ValidationException" ->
          new CloudException(Reason.BAD_REQUEST, "S3 Files rejected the request: " + detail, e);
      default -> AwsCloud.classify(operation, e);
    };
  }

  private static AccessPoint toAccessPoint(JsonNode a) {
    Map<String, String> tags = new LinkedHashMap<>();
    a.path("tags").forEach(t -> tags.put(t.path("key").asText(), t.path("value").asText()));
    JsonNode u = a.path("posixUser");
    return new AccessPoint(
        a.path("accessPointId").asText(),
        a.path("fileSystemId").asText(),
        a.path("clientToken").asText(""),
        u.isMissingNode() ? -1 : u.path("uid").asLong(-1),
        u.isMissingNode() ? -1 : u.path("gid").asLong(-1),
        a.path("rootDirectory").path("path").asText("/"),
        tags);
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
