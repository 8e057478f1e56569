package io.efscsi.node.iam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.http.SdkHttpFullRequest;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4FamilyHttpSigner;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.identity.spi.AwsSessionCredentialsIdentity;

class ConnectSignatureTest {

  static final Instant TIME = Instant.parse("2024-01-15T10:20:30Z");
  static final String FS = "fs-0123456789abcdef0";
  static final String REGION = "eu-west-1";
  static final String KEY_HASH = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b";
  static final String TOKEN = "IQoJb3JpZ2luX2VjE+/abc==";
  static final ConnectSignature.Credentials CREDS =
      new ConnectSignature.Credentials(
          "ASIAEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", Optional.of(TOKEN));

  @Test
  void canonicalRequestIsEfsUtilsLayoutWithTheFileSystemAsHostAndNoBlankLine() {
    String query = ConnectSignature.canonicalQuery(CREDS, KEY_HASH, REGION, TIME);

    assertEquals(
        "Action=Connect&PublicKeyHash="
            + KEY_HASH
            + "&X-Amz-Algorithm=AWS4-HMAC-SHA256"
            + "&X-Amz-Credential=ASIAEXAMPLEKEY%2F20240115%2Feu-west-1%2Felasticfilesystem%2Faws4_request"
            + "&X-Amz-Date=20240115T102030Z&X-Amz-Expires=86400"
            + "&X-Amz-Security-Token=IQoJb3JpZ2luX2VjE%2B%2Fabc%3D%3D"
            + "&X-Amz-SignedHeaders=host",
        query);
    assertEquals(
        "GET\n/\n"
            + query
            + "\nhost:"
            + FS
            + "\nhost\n"
            + "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ConnectSignature.canonicalRequest(query, FS));
  }

  @Test
  void queryAndSigningChainMatchTheSdkSignerForTheStandardFormOfTheSameRequest() {
    SignedRequest signed = sdkPresign(CREDS);
    Map<String, String> sdkQuery = encodedQuery(signed);
    String sdkSignature = sdkQuery.remove("X-Amz-Signature");
    String sdkCanonicalQuery =
        sdkQuery.entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue())
            .collect(Collectors.joining("&"));

    String ours = ConnectSignature.canonicalQuery(CREDS, KEY_HASH, REGION, TIME);
    assertEquals(sdkCanonicalQuery, ours);

    // Standard SigV4 has a blank line after the headers; with it, our chain gives the SDK's value.
    String standard = "GET\n/\n" + ours + "\nhost:" + FS + "\n\nhost\n" + emptyPayloadHash();
    assertEquals(
        sdkSignature,
        ConnectSignature.signCanonicalRequest(standard, CREDS.secretAccessKey(), REGION, TIME));

    // efs-utils drops that blank line, so the embedded signature differs from the standard one.
    ConnectSignature efs = ConnectSignature.sign(CREDS, KEY_HASH, FS, REGION, TIME);
    assertNotEquals(sdkSignature, efs.signature());
    assertEquals(
        ConnectSignature.signCanonicalRequest(
            ConnectSignature.canonicalRequest(ours, FS), CREDS.secretAccessKey(), REGION, TIME),
        efs.signature());
    assertEquals(64, efs.signature().length());
    assertEquals(TIME, efs.time());
    assertEquals(Optional.of(TOKEN), efs.sessionToken());
  }

  @Test
  void longTermCredentialsHaveNoSecurityTokenAndMatchTheSdkToo() {
    var creds =
        new ConnectSignature.Credentials("AKIDEXAMPLE", "secret/with+chars", Optional.empty());
    Map<String, String> sdkQuery = encodedQuery(sdkPresign(creds));
    String sdkSignature = sdkQuery.remove("X-Amz-Signature");
    String ours = ConnectSignature.canonicalQuery(creds, KEY_HASH, REGION, TIME);

    assertEquals(
        sdkQuery.entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue())
            .collect(Collectors.joining("&")),
        ours);
    assertEquals(
        sdkSignature,
        ConnectSignature.signCanonicalRequest(
            "GET\n/\n" + ours + "\nhost:" + FS + "\n\nhost\n" + emptyPayloadHash(),
            creds.secretAccessKey(),
            REGION,
            TIME));
  }

  @Test
  void quotePlusEncodesLikePython() {
    assertEquals("a-b_c.d~e", ConnectSignature.quotePlus("a-b_c.d~e"));
    assertEquals("a+b%2Fc%2Bd%3D%C3%A9", ConnectSignature.quotePlus("a b/c+d=é"));
  }

  @Test
  void toStringHidesSecrets() {
    ConnectSignature s = ConnectSignature.sign(CREDS, KEY_HASH, FS, REGION, TIME);
    assertEquals(-1, s.toString().indexOf(TOKEN));
    assertEquals(-1, CREDS.toString().indexOf(CREDS.secretAccessKey()));
    assertEquals(-1, CREDS.toString().indexOf(TOKEN));
  }

  /** Amazon S3 Files mounts sign the same request for service s3files; the SDK agrees on it. */
  @Test
  void s3filesSignsForServiceS3filesAsTheSdkSignerDoes() {
    SignedRequest signed = sdkPresign(CREDS, "s3files");
    Map<String, String> sdkQuery = encodedQuery(signed);
    String sdkSignature = sdkQuery.remove("X-Amz-Signature");
    String ours = ConnectSignature.canonicalQuery(CREDS, KEY_HASH, REGION, TIME, "s3files");
    assertEquals(
        sdkQuery.entrySet().stream()
            .map(e -> e.getKey() + "=" + e.getValue())
            .collect(Collectors.joining("&")),
        ours);
    assertTrue(ours.contains("%2Fs3files%2Faws4_request"), ours);
    String standard = "GET\n/\n" + ours + "\nhost:" + FS + "\n\nhost\n" + emptyPayloadHash();
    assertEquals(
        sdkSignature,
        ConnectSignature.signCanonicalRequest(
            standard, CREDS.secretAccessKey(), REGION, TIME, "s3files"));
    ConnectSignature s3 = ConnectSignature.sign(CREDS, KEY_HASH, FS, REGION, TIME, "s3files");
    assertNotEquals(
        ConnectSignature.sign(CREDS, KEY_HASH, FS, REGION, TIME).signature(), s3.signature());
  }

  private static SignedRequest sdkPresign(ConnectSignature.Credentials c) {
    return sdkPresign(c, "elasticfilesystem");
  }

  /** The SDK's own SigV4 signer presigning GET /?Action=Connect&PublicKeyHash=… for host FS. */
  private static SignedRequest sdkPresign(ConnectSignature.Credentials c, String service) {
    AwsCredentialsIdentity identity =
        c.sessionToken().isPresent()
            ? AwsSessionCredentialsIdentity.create(
                c.accessKeyId(), c.secretAccessKey(), c.sessionToken().get())
            : AwsCredentialsIdentity.create(c.accessKeyId(), c.secretAccessKey());
    SdkHttpFullRequest request =
        SdkHttpFullRequest.builder()
            .method(SdkHttpMethod.GET)
            .uri(URI.create("https://" + FS + "/"))
            .putRawQueryParameter("Action", "Connect")
            .putRawQueryParameter("PublicKeyHash", KEY_HASH)
            .build();
    return AwsV4HttpSigner.create()
        .sign(r ->
            r.request(request)
                .identity(identity)
                .putProperty(AwsV4HttpSigner.REGION_NAME, REGION)
                .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, service)
                .putProperty(
                    AwsV4HttpSigner.AUTH_LOCATION, AwsV4FamilyHttpSigner.AuthLocation.QUERY_STRING)
                .putProperty(AwsV4HttpSigner.EXPIRATION_DURATION, Duration.ofSeconds(86400))
                .putProperty(AwsV4HttpSigner.SIGNING_CLOCK, Clock.fixed(TIME, ZoneOffset.UTC)));
  }

  private static Map<String, String> encodedQuery(SignedRequest signed) {
    String raw = signed.request().getUri().getRawQuery();
    Map<String, String> out = new TreeMap<>();
    Arrays.stream(raw.split("&"))
        .map(p -> p.split("=", 2))
        .forEach(kv -> out.put(kv[0], kv.length > 1 ? kv[1] : ""));
    return out;
  }

  private static String emptyPayloadHash() {
    return "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  }
}
