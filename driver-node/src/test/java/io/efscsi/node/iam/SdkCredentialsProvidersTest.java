package io.efscsi.node.iam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.efscsi.common.error.DriverException;
import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsCredentials;

class SdkCredentialsProvidersTest {

  @TempDir Path dir;
  final SdkCredentialsProviders providers = new SdkCredentialsProviders("us-east-1");

  @AfterEach
  void close() {
    providers.close();
    System.clearProperty("aws.sharedCredentialsFile");
    System.clearProperty("aws.configFile");
  }

  @Test
  void awsprofileReadsThatProfileFromTheSharedCredentialsFile() throws Exception {
    Path creds = dir.resolve("credentials");
    Files.writeString(
        creds,
        "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = d\n"
            + "[team]\naws_access_key_id = AKIDTEAM\naws_secret_access_key = t\n");
    System.setProperty("aws.sharedCredentialsFile", creds.toString());
    System.setProperty("aws.configFile", dir.resolve("absent-config").toString());
    var team = new IamCredentialsSource(Optional.of("team"), Optional.empty(), Optional.empty());

    AwsCredentials c = providers.forSource(team).resolveCredentials();

    assertEquals("AKIDTEAM", c.accessKeyId());
    assertEquals("t", c.secretAccessKey());
    assertSame(providers.forSource(team), providers.forSource(team), "one provider per source");
  }

  @Test
  void rolearnWithoutJwtpathIsRejected() {
    var half =
        new IamCredentialsSource(
            Optional.empty(), Optional.of("arn:aws:iam::111122223333:role/r"), Optional.empty());
    DriverException e = assertThrows(DriverException.class, () -> providers.forSource(half));
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
    assertEquals(
        "rolearn and jwtpath go together, got rolearn=arn:aws:iam::111122223333:role/r,jwtpath=",
        e.getMessage());
  }
}
