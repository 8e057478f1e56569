package io.efscsi.emulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.efscsi.emulator.EfsState.EfsError;
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
  private static final Pattern ACCESS_KEY = Pattern.compile("Credential=([^/,\\s]+)/");

  private final ObjectMapper json = new ObjectMapper();
  private final HttpServer server;
  private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
  private final EfsState state = new EfsState();
  private final EfsState s3filesState = new EfsState();
  private final EfsApi efsApi = new EfsApi(state, this);
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
    return start(InetAddress.getLoopbackAddress(), port);
  }

  /**
   * Starts on {@code address} and {@code port} (0 = ephemeral): a test cluster's pods on a pod
   * network reach it at an address of the host's other than 127.0.0.1.
   */
  public static EfsEmulator start(InetAddress address, int port) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(address, port), 512);
    EfsEmulator emulator = new EfsEmulator(server);
    server.createContext("/", emulator::handle);
    server.setExecutor(emulator.executor);
    server.start();
    return emulator;
  }

  /** The base URL, for AWS_ENDPOINT_URL_EFS and AWS_ENDPOINT_URL_STS. */
  public URI endpoint() {
    InetSocketAddress a = server.getAddress();
    return URI.create("http://" + a.getAddress().getHostAddress() + ":" + a.getPort());
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
      return Optional.of(EfsApi.toMap(s3filesState.accessPoint(DEFAULT_ACCOUNT, id)));
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

  /** Every access point of the file system, as DescribeAccessPoints answers them. */
  public synchronized java.util.List<Map<String, Object>> accessPoints(String fileSystemId) {
    return state.accessPoints(fileSystemId).stream().map(EfsApi::toMap).toList();
  }

  /** Creates an access point directly (no HTTP, no faults), for seeding. */
  public synchronized String seedAccessPoint(String fileSystemId, long uid, long gid, String path) {
    return seed(state, ownerOf(fileSystemId), fileSystemId, uid, gid, path);
  }

  /** The access point as stored, or empty. */
  public synchronized Optional<Map<String, Object>> accessPoint(String id) {
    for (String account : accountsWithFileSystems()) {
      try {
        return Optional.of(EfsApi.toMap(state.accessPoint(account, id)));
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
      if (path.startsWith(EfsApi.API)) {
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
    String action = EfsApi.action(method, path);
    calls.computeIfAbsent(action, k -> new LongAdder()).increment();
    try {
      faults.apply(action);
      String account = account(ex);
      Map<String, String> q =
          form(Optional.ofNullable(ex.getRequestURI().getRawQuery()).orElse(""));
      JsonNode out = efsApi.handle(action, account, path, q, body);
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
      faults.apply(action);
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
