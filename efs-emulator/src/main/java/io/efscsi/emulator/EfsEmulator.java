package io.efscsi.emulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.efscsi.emulator.EfsState.AccessPoint;
import io.efscsi.emulator.EfsState.EfsError;
import io.efscsi.emulator.EfsState.FileSystem;
import io.efscsi.emulator.EfsState.MountTarget;
import io.efscsi.emulator.EfsState.PosixUser;
import io.efscsi.emulator.EfsState.RootDirectory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An emulator of the EFS REST-JSON API (access points, file systems, mount targets), the Amazon S3
 * Files REST-JSON calls of the CSI driver ({@link S3FilesApi}, its own file systems, the same
 * faults) and the STS AssumeRole query API on 127.0.0.1, for the real AWS SDK to talk to by
 * endpoint override. The caller's account comes from the access key in the SigV4 {@code
 * Authorization} header (signatures are not checked): any key is the {@link #DEFAULT_ACCOUNT}, keys
 * issued by AssumeRole belong to the role's account. Faults (throttling, 5xx, latency) are injected
 * through {@link #faults()}.
 */
public final class EfsEmulator implements AutoCloseable {

  public static final String DEFAULT_ACCOUNT = "111122223333";
  private static final String API = "/2015-02-01/";
  private static final Pattern ACCESS_KEY = Pattern.compile("Credential=([^/,\\s]+)/");
  private static final Pattern AP_PATH = Pattern.compile(API + "access-points/([^/?]+)");

  private final ObjectMapper json = new ObjectMapper();
  private final HttpServer server;
  private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
  private final EfsState state = new EfsState();
  private final EfsState s3filesState = new EfsState();
  private final S3FilesApi s3files = new S3FilesApi(s3filesState, this);
  private final Faults faults = new Faults();
  private final Map<String, LongAdder> calls = new ConcurrentHashMap<>();
  private final StsApi sts = new StsApi();

  private EfsEmulator(HttpServer server) {
    this.server = server;
  }

  /** Starts on 127.0.0.1 and an ephemeral port. */
  public static EfsEmulator start() throws IOException {
    return start(0);
  }

  /** Starts on 127.0.0.1 and the given port (0 = ephemeral). */
  public static EfsEmulator start(int port) throws IOException {
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 512);
    EfsEmulator emulator = new EfsEmulator(server);
    server.createContext("/", emulator::handle);
    server.setExecutor(emulator.executor);
    server.start();
    return emulator;
  }

  /** The base URL, for AWS_ENDPOINT_URL_EFS and AWS_ENDPOINT_URL_STS. */
  public URI endpoint() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  public Faults faults() {
    return faults;
  }

  /** Creates a regional file system in the default account. */
  public String createFileSystem() {
    return createFileSystem(DEFAULT_ACCOUNT, Optional.empty());
  }

  /** Creates a file system in {@code account}; One Zone when {@code oneZoneAz} is present. */
  public synchronized String createFileSystem(String account, Optional<String> oneZoneAz) {
    return state.createFileSystem(account, oneZoneAz).id;
  }

  /** Creates an Amazon S3 Files file system in the default account (S3 Files API only). */
  public synchronized String createS3FilesFileSystem() {
    return s3filesState.createFileSystem(DEFAULT_ACCOUNT, Optional.empty()).id;
  }

  /** Creates an S3 Files access point directly (no HTTP, no faults), for seeding. */
  public synchronized String seedS3FilesAccessPoint(
      String fileSystemId, long uid, long gid, String path) {
    return seed(s3filesState, DEFAULT_ACCOUNT, fileSystemId, uid, gid, path);
  }

  private static String seed(
      EfsState state, String account, String fileSystemId, long uid, long gid, String path) {
    return state
        .create(
            account,
            "seed-" + UUID.randomUUID(),
            fileSystemId,
            new PosixUser(uid, gid),
            new RootDirectory(path, uid, gid, "700"),
            Map.of())
        .id();
  }

  /** The S3 Files access point as stored (EFS-shaped map), or empty. */
  public synchronized Optional<Map<String, Object>> s3filesAccessPoint(String id) {
    try {
      return Optional.of(toMap(s3filesState.accessPoint(DEFAULT_ACCOUNT, id)));
    } catch (EfsError e) {
      return Optional.empty();
    }
  }

  public synchronized int s3filesAccessPointCount(String fileSystemId) {
    return s3filesState.accessPointCount(fileSystemId);
  }

  public synchronized String addMountTarget(String fileSystemId, String az, String ip) {
    return state.addMountTarget(fileSystemId, az, ip).id();
  }

  /** Lets AssumeRole on {@code roleArn} issue credentials of {@code account}. */
  public void addRole(String roleArn, String account, Optional<String> externalId) {
    sts.addRole(roleArn, account, externalId);
  }

  public synchronized void accessPointLimit(int limit) {
    state.accessPointLimit = limit;
  }

  public synchronized int accessPointCount(String fileSystemId) {
    return state.accessPointCount(fileSystemId);
  }

  /** Creates an access point directly (no HTTP, no faults), for seeding. */
  public synchronized String seedAccessPoint(String fileSystemId, long uid, long gid, String path) {
    return seed(state, ownerOf(fileSystemId), fileSystemId, uid, gid, path);
  }

  /** The access point as stored, or empty. */
  public synchronized Optional<Map<String, Object>> accessPoint(String id) {
    for (String account : accountsWithFileSystems()) {
      try {
        return Optional.of(toMap(state.accessPoint(account, id)));
      } catch (EfsError e) {
        // not in this account
      }
    }
    return Optional.empty();
  }

  /**
   * Starts a mount target for {@code fileSystemId} (TLS, BindClientToPartition, nfs-ganesha behind
   * it) with its files in {@code dir}; access points are looked up in this emulator's state.
   */
  public io.efscsi.emulator.mounttarget.MountTarget startMountTarget(
      String fileSystemId, String region, java.nio.file.Path dir)
      throws IOException, InterruptedException {
    return io.efscsi.emulator.mounttarget.MountTarget.start(
        fileSystemId, region, dir, this::accessPointDirectory);
  }

  private synchronized Optional<io.efscsi.emulator.mounttarget.MountTarget.AccessPointDirectory>
      accessPointDirectory(String id) {
    for (String account : accountsWithFileSystems()) {
      try {
        EfsState.AccessPoint ap = state.accessPoint(account, id);
        return Optional.of(
            new io.efscsi.emulator.mounttarget.MountTarget.AccessPointDirectory(
                ap.id(),
                ap.posixUser() == null ? -1 : ap.posixUser().uid(),
                ap.posixUser() == null ? -1 : ap.posixUser().gid(),
                java.util.List.of(),
                ap.root().path(),
                ap.root().ownerUid(),
                ap.root().ownerGid(),
                ap.root().permissions()));
      } catch (EfsError e) {
        // not in this account
      }
    }
    return Optional.empty();
  }

  /** Number of requests per API action ("CreateAccessPoint", "AssumeRole", …) so far. */
  public long calls(String action) {
    LongAdder a = calls.get(action);
    return a == null ? 0 : a.sum();
  }

  public Map<String, Long> calls() {
    Map<String, Long> m = new TreeMap<>();
    calls.forEach((k, v) -> m.put(k, v.sum()));
    return m;
  }

  public void resetCalls() {
    calls.clear();
  }

  private String ownerOf(String fileSystemId) {
    for (String account : accountsWithFileSystems()) {
      if (state.fileSystems(account).stream().anyMatch(f -> f.id.equals(fileSystemId))) {
        return account;
      }
    }
    throw new IllegalArgumentException("no file system " + fileSystemId);
  }

  private java.util.Set<String> accountsWithFileSystems() {
    java.util.Set<String> accounts = new java.util.HashSet<>();
    accounts.add(DEFAULT_ACCOUNT);
    accounts.addAll(sts.accounts());
    return accounts;
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      String path = ex.getRequestURI().getRawPath();
      String method = ex.getRequestMethod();
      String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      if (path.startsWith(API)) {
        efs(ex, method, path, body);
      } else if (S3FilesApi.handles(path)) {
        s3files(ex, method, path, body);
      } else if (method.equals("POST") && body.contains("Action=AssumeRole")) {
        calls.computeIfAbsent("AssumeRole", k -> new LongAdder()).increment();
        StsApi.Answer a = sts.assumeRole(form(body));
        send(ex, a.status(), "text/xml", a.xml());
      } else {
        send(ex, 404, "text/plain", "unknown path " + path);
      }
    }
  }

  private void efs(HttpExchange ex, String method, String path, String body) throws IOException {
    String action = action(method, path);
    calls.computeIfAbsent(action, k -> new LongAdder()).increment();
    try {
      faults.apply();
      String account = account(ex);
      Map<String, String> q =
          form(Optional.ofNullable(ex.getRequestURI().getRawQuery()).orElse(""));
      JsonNode out =
          switch (action) {
            case "CreateAccessPoint" -> createAccessPoint(account, json.readTree(body));
            case "DescribeAccessPoints" -> describeAccessPoints(account, q);
            case "DeleteAccessPoint" -> deleteAccessPoint(account, path);
            case "DescribeFileSystems" -> describeFileSystems(account, q);
            case "DescribeMountTargets" -> describeMountTargets(account, q);
            default -> throw new EfsError(400, "BadRequest", "unsupported " + method + " " + path);
          };
      if (out == null) {
        ex.getResponseHeaders().add("x-amzn-RequestId", UUID.randomUUID().toString());
        ex.sendResponseHeaders(204, -1);
      } else {
        send(ex, 200, "application/json", json.writeValueAsString(out));
      }
    } catch (EfsError e) {
      ObjectNode err =
          json.createObjectNode().put("ErrorCode", e.code).put("Message", e.getMessage());
      e.extra.forEach(err::put);
      ex.getResponseHeaders().add("x-amzn-ErrorType", e.code);
      send(ex, e.status, "application/json", json.writeValueAsString(err));
    }
  }

  private void s3files(HttpExchange ex, String method, String path, String body)
      throws IOException {
    String action = S3FilesApi.action(method, path);
    calls.computeIfAbsent(action, k -> new LongAdder()).increment();
    try {
      faults.apply();
      String account = account(ex);
      String auth = ex.getRequestHeaders().getFirst("Authorization");
      if (!auth.contains("/s3files/aws4_request")) {
        throw new EfsError(
            403, "InvalidSignatureException", "not signed for service s3files: " + auth);
      }
      Map<String, String> q =
          form(Optional.ofNullable(ex.getRequestURI().getRawQuery()).orElse(""));
      S3FilesApi.Answer a = s3files.handle(action, account, path, q, body);
      if (a.body() == null) {
        ex.getResponseHeaders().add("x-amzn-RequestId", UUID.randomUUID().toString());
        ex.sendResponseHeaders(a.status(), -1);
      } else {
        send(ex, a.status(), "application/json", json.writeValueAsString(a.body()));
      }
    } catch (EfsError e) {
      String code = e.code.equals("InternalServerError") ? "InternalServerException" : e.code;
      ObjectNode err = json.createObjectNode().put("__type", code).put("message", e.getMessage());
      e.extra.forEach(err::put);
      ex.getResponseHeaders().add("x-amzn-ErrorType", code);
      send(ex, e.status, "application/json", json.writeValueAsString(err));
    }
  }

  private static String action(String method, String path) {
    String rest = path.substring(API.length());
    return switch (method
        + " "
        + (rest.contains("/") ? rest.substring(0, rest.indexOf('/')) : rest)) {
      case "POST access-points" -> "CreateAccessPoint";
      case "GET access-points" -> "DescribeAccessPoints";
      case "DELETE access-points" -> "DeleteAccessPoint";
      case "GET file-systems" -> "DescribeFileSystems";
      case "GET mount-targets" -> "DescribeMountTargets";
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
    synchronized (this) {
      return describe(state.create(account, token, fsId, user, dir, tags));
    }
  }

  private JsonNode describeAccessPoints(String account, Map<String, String> q) {
    int max = Integer.parseInt(q.getOrDefault("MaxResults", "100"));
    ObjectNode out = json.createObjectNode();
    ArrayNode list = out.putArray("AccessPoints");
    synchronized (this) {
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
    synchronized (this) {
      state.delete(account, URLDecoder.decode(m.group(1), StandardCharsets.UTF_8));
    }
    return null;
  }

  private synchronized JsonNode describeFileSystems(String account, Map<String, String> q) {
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

  private synchronized JsonNode describeMountTargets(String account, Map<String, String> q) {
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

  private ObjectNode describe(AccessPoint ap) {
    return json.valueToTree(toMap(ap));
  }

  private static Map<String, Object> toMap(AccessPoint ap) {
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

  private String account(HttpExchange ex) {
    String auth = Optional.ofNullable(ex.getRequestHeaders().getFirst("Authorization")).orElse("");
    Matcher m = ACCESS_KEY.matcher(auth);
    if (!m.find()) {
      throw new EfsError(403, "AccessDeniedException", "Missing or unsigned Authorization header");
    }
    String key = m.group(1);
    if (faults.deniedKeys.contains(key)) {
      throw new EfsError(403, "AccessDeniedException", "User " + key + " is not authorized");
    }
    return sts.accountOf(key).orElse(DEFAULT_ACCOUNT);
  }

  private static Map<String, String> form(String s) {
    Map<String, String> m = new LinkedHashMap<>();
    for (String kv : s.split("&")) {
      if (kv.isEmpty()) {
        continue;
      }
      int i = kv.indexOf('=');
      String k = URLDecoder.decode(i < 0 ? kv : kv.substring(0, i), StandardCharsets.UTF_8);
      m.put(k, i < 0 ? "" : URLDecoder.decode(kv.substring(i + 1), StandardCharsets.UTF_8));
    }
    return m;
  }

  private static void send(HttpExchange ex, int status, String type, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("Content-Type", type);
    ex.getResponseHeaders().add("x-amzn-RequestId", UUID.randomUUID().toString());
    ex.sendResponseHeaders(status, bytes.length);
    ex.getResponseBody().write(bytes);
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
