package io.efscsi.controller.cloud;

import io.efscsi.controller.cloud.CloudException.Reason;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.retry.RetryUtils;
import software.amazon.awssdk.services.efs.EfsClient;
import software.amazon.awssdk.services.efs.model.AccessPointAlreadyExistsException;
import software.amazon.awssdk.services.efs.model.AccessPointDescription;
import software.amazon.awssdk.services.efs.model.AccessPointLimitExceededException;
import software.amazon.awssdk.services.efs.model.AccessPointNotFoundException;
import software.amazon.awssdk.services.efs.model.CreationInfo;
import software.amazon.awssdk.services.efs.model.FileSystemDescription;
import software.amazon.awssdk.services.efs.model.FileSystemNotFoundException;
import software.amazon.awssdk.services.efs.model.LifeCycleState;
import software.amazon.awssdk.services.efs.model.PosixUser;
import software.amazon.awssdk.services.efs.model.RootDirectory;
import software.amazon.awssdk.services.efs.model.Tag;

/** {@link Cloud} on the AWS SDK v2 EFS client. */
public final class AwsCloud implements Cloud {

  /** Page size of DescribeAccessPoints (the API's maximum). */
  static final int PAGE = 1000;

  private final String identity;
  private final EfsClient efs;

  public AwsCloud(String identity, EfsClient efs) {
    this.identity = identity;
    this.efs = efs;
  }

  @Override
  public String identity() {
    return identity;
  }

  @Override
  public FileSystem describeFileSystem(String fileSystemId) {
    FileSystemDescription d =
        call(
                "DescribeFileSystems",
                () -> efs.describeFileSystems(r -> r.fileSystemId(fileSystemId)))
            .fileSystems()
            .stream()
            .findFirst()
            .orElseThrow(() ->
                new CloudException(
                    Reason.FILE_SYSTEM_NOT_FOUND,
                    "File System does not exist: " + fileSystemId,
                    null));
    return new FileSystem(d.fileSystemId(), Optional.ofNullable(d.availabilityZoneName()));
  }

  @Override
  public AccessPoint createAccessPoint(AccessPointRequest q) {
    List<Tag> tags =
        q.tags().entrySet().stream()
            .map(e -> Tag.builder().key(e.getKey()).value(e.getValue()).build())
            .toList();
    return toAccessPoint(
        call(
            "CreateAccessPoint",
            () ->
                efs.createAccessPoint(r ->
                    r.clientToken(q.clientToken())
                        .fileSystemId(q.fileSystemId())
                        .posixUser(PosixUser.builder().uid(q.uid()).gid(q.gid()).build())
                        .rootDirectory(
                            RootDirectory.builder()
                                .path(q.rootPath())
                                .creationInfo(
                                    CreationInfo.builder()
                                        .ownerUid(q.uid())
                                        .ownerGid(q.gid())
                                        .permissions(q.permissions())
                                        .build())
                                .build())
                        .tags(tags))));
  }

  @Override
  public Optional<AccessPoint> describeAccessPoint(String fileSystemId, String accessPointId) {
    try {
      return call(
              "DescribeAccessPoints",
              () -> efs.describeAccessPoints(r -> r.accessPointId(accessPointId)))
          .accessPoints()
          .stream()
          .findFirst()
          .map(AwsCloud::toAccessPoint);
    } catch (CloudException e) {
      if (e.reason() == Reason.ACCESS_POINT_NOT_FOUND) {
        return Optional.empty();
      }
      throw e;
    }
  }

  @Override
  public void listAccessPoints(String fileSystemId, Consumer<AccessPoint> each) {
    String token = null;
    do {
      String next = token;
      var page =
          call(
              "DescribeAccessPoints",
              () ->
                  efs.describeAccessPoints(
                      r -> r.fileSystemId(fileSystemId).maxResults(PAGE).nextToken(next)));
      page.accessPoints().forEach(a -> each.accept(toAccessPoint(a)));
      token = page.nextToken();
    } while (token != null && !token.isEmpty());
  }

  @Override
  public boolean deleteAccessPoint(String accessPointId) {
    return unlessAccessPointNotFound(() ->
        call(
            "DeleteAccessPoint", () -> efs.deleteAccessPoint(r -> r.accessPointId(accessPointId))));
  }

  /** Runs a delete: true when it did, false when the access point did not exist. */
  static boolean unlessAccessPointNotFound(Supplier<?> delete) {
    try {
      delete.get();
      return true;
    } catch (CloudException e) {
      if (e.reason() == Reason.ACCESS_POINT_NOT_FOUND) {
        return false;
      }
      throw e;
    }
  }

  @Override
  public void tagAccessPoint(String accessPointId, Map<String, String> tags) {
    List<Tag> list =
        tags.entrySet().stream()
            .map(e -> Tag.builder().key(e.getKey()).value(e.getValue()).build())
            .toList();
    call("TagResource", () -> efs.tagResource(r -> r.resourceId(accessPointId).tags(list)));
  }

  @Override
  public List<MountTarget> describeMountTargets(String fileSystemId) {
    return call(
            "DescribeMountTargets",
            () -> efs.describeMountTargets(r -> r.fileSystemId(fileSystemId)))
        .mountTargets()
        .stream()
        .map(m ->
            new MountTarget(
                m.mountTargetId(),
                m.availabilityZoneName(),
                m.ipAddress(),
                m.lifeCycleState() == LifeCycleState.AVAILABLE))
        .toList();
  }

  private static AccessPoint toAccessPoint(AccessPointDescription a) {
    Map<String, String> tags = new LinkedHashMap<>();
    a.tags().forEach(t -> tags.put(t.key(), t.value()));
    PosixUser u = a.posixUser();
    return new AccessPoint(
        a.accessPointId(),
        a.fileSystemId(),
        a.clientToken() == null ? "" : a.clientToken(),
        u == null ? -1 : u.uid(),
        u == null ? -1 : u.gid(),
        a.rootDirectory() == null ? "/" : a.rootDirectory().path(),
        tags);
  }

  private static AccessPoint toAccessPoint(
      software.amazon.awssdk.services.efs.model.CreateAccessPointResponse a) {
    Map<String, String> tags = new LinkedHashMap<>();
    a.tags().forEach(t -> tags.put(t.key(), t.value()));
    return new AccessPoint(
        a.accessPointId(),
        a.fileSystemId(),
        a.clientToken(),
        a.posixUser().uid(),
        a.posixUser().gid(),
        a.rootDirectory().path(),
        tags);
  }

  /** Runs one SDK call (retries included) and classifies its failure. */
  static <T> T call(String operation, Supplier<T> sdkCall) {
    try {
      return sdkCall.get();
    } catch (SdkException e) {
      throw classify(operation, e);
    }
  }

  static CloudException classify(String operation, SdkException e) {
    String detail = operation + ": " + e.getMessage();
    return switch (e) {
      case AccessPointAlreadyExistsException x ->
          new CloudException(
              Reason.ALREADY_EXISTS,
              "Access Point already exists: " + detail,
              e,
              Optional.ofNullable(x.accessPointId()));
      case AccessPointNotFoundException x ->
          new CloudException(Reason.ACCESS_POINT_NOT_FOUND, "Access point not found: " + detail, x);
      case FileSystemNotFoundException x ->
          new CloudException(
              Reason.FILE_SYSTEM_NOT_FOUND, "File System does not exist: " + detail, x);
      case AccessPointLimitExceededException x ->
          new CloudException(
              Reason.LIMIT_EXCEEDED, "Access point limit of the file system reached: " + detail, x);
      case AdaptiveConcurrency.WindowFull x ->
          new CloudException(Reason.THROTTLED, x.getMessage() + "; retry later", x);
      case SdkException x when RetryUtils.isThrottlingException(x) ->
          new CloudException(
              Reason.THROTTLED,
              "AWS kept throttling after the SDK's retries, retry later: " + detail,
              x);
      case AwsServiceException x when isAccessDenied(x) ->
          new CloudException(
              Reason.ACCESS_DENIED,
              "Access Denied. Please ensure you have the right AWS permissions: " + detail,
              x);
      case AwsServiceException x when x.statusCode() >= 500 ->
          new CloudException(
              Reason.UNAVAILABLE, "AWS failed after the SDK's retries, retry later: " + detail, x);
      case AwsServiceException x when x.statusCode() == 400 ->
          new CloudException(Reason.BAD_REQUEST, "AWS rejected the request: " + detail, x);
      case SdkClientException x ->
          new CloudException(Reason.UNAVAILABLE, "cannot reach AWS: " + detail, x);
      default -> new CloudException(Reason.OTHER, detail, e);
    };
  }

  private static boolean isAccessDenied(AwsServiceException e) {
    String code = e.awsErrorDetails() == null ? "" : e.awsErrorDetails().errorCode();
    return code != null
        && (code.startsWith("AccessDenied") || code.equals("UnauthorizedOperation"));
  }
}
