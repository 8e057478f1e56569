package io.efscsi.node.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.efscsi.common.error.DriverException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.ec2.model.Ec2Exception;
import software.amazon.awssdk.services.efs.model.EfsException;

class AwsMountTargetLookupTest {

  @ParameterizedTest(name = "{0} {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "efs|403|AccessDeniedException|not authorized|FAILED_PRECONDITION|the node's IAM role may not call elasticfilesystem:DescribeMountTargets (needed to find a mount target when its DNS name does not resolve): AccessDeniedException: not authorized; grant elasticfilesystem:DescribeMountTargets to the node role, or set mounttargetip",
        "ec2|400|UnauthorizedOperation|You are not authorized|FAILED_PRECONDITION|the node's IAM role may not call ec2:DescribeAvailabilityZones (needed to find a mount target when its DNS name does not resolve): UnauthorizedOperation: You are not authorized; grant ec2:DescribeAvailabilityZones to the node role, or set mounttargetip",
        "efs|404|FileSystemNotFound|File system 'fs-abcd1234' does not exist.|NOT_FOUND|file system fs-abcd1234 not found in us-east-1 (elasticfilesystem:DescribeMountTargets): FileSystemNotFound: File system 'fs-abcd1234' does not exist.",
        "efs|400|ThrottlingException|Rate exceeded|UNAVAILABLE|elasticfilesystem:DescribeMountTargets for file system fs-abcd1234 in us-east-1 failed: ThrottlingException: Rate exceeded",
      })
  void serviceErrors(
      String service,
      int status,
      String code,
      String message,
      DriverException.Kind kind,
      String expected) {
    boolean ec2 = service.equals("ec2");
    AwsServiceException.Builder builder = ec2 ? Ec2Exception.builder() : EfsException.builder();
    AwsServiceException error =
        builder
            .statusCode(status)
            .awsErrorDetails(
                AwsErrorDetails.builder().errorCode(code).errorMessage(message).build())
            .build();
    DriverException e =
        AwsMountTargetLookup.translate(
            error,
            ec2
                ? AwsMountTargetLookup.DESCRIBE_AVAILABILITY_ZONES
                : AwsMountTargetLookup.DESCRIBE_MOUNT_TARGETS,
            ec2 ? "availability zone us-east-1a" : "file system fs-abcd1234",
            "us-east-1");
    assertEquals(kind, e.kind());
    assertEquals(expected, e.getMessage());
  }

  @Test
  void clientErrorsAreUnavailable() {
    DriverException offline =
        AwsMountTargetLookup.translate(
            SdkClientException.create("Unable to execute HTTP request"),
            AwsMountTargetLookup.DESCRIBE_MOUNT_TARGETS,
            "file system fs-abcd1234",
            "us-east-1");
    assertEquals(DriverException.Kind.UNAVAILABLE, offline.kind());
    assertEquals(
        "elasticfilesystem:DescribeMountTargets for file system fs-abcd1234 in us-east-1 failed:"
            + " Unable to execute HTTP request",
        offline.getMessage());
  }
}
