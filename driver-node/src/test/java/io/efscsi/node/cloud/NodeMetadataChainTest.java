package io.efscsi.node.cloud;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.efscsi.common.error.DriverException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class NodeMetadataChainTest {

  final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  final Logger logger = (Logger) LoggerFactory.getLogger(NodeMetadataChain.class);

  @BeforeEach
  void capture() {
    logs.start();
    logger.addAppender(logs);
  }

  @AfterEach
  void release() {
    logger.detachAppender(logs);
  }

  static NodeMetadataSource failing(String name, String reason, AtomicInteger calls) {
    return new NodeMetadataSource() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public FixedNodeMetadata load() {
        calls.incrementAndGet();
        throw new Unavailable(reason);
      }
    };
  }

  static NodeMetadataSource answering(FixedNodeMetadata m, AtomicInteger calls) {
    return new NodeMetadataSource() {
      @Override
      public String name() {
        return m.source();
      }

      @Override
      public FixedNodeMetadata load() {
        calls.incrementAndGet();
        return m;
      }
    };
  }

  static final FixedNodeMetadata IMDS =
      new FixedNodeMetadata("i-1", "us-east-1", Optional.of("us-east-1a"), "instance metadata");
  static final FixedNodeMetadata NODE =
      new FixedNodeMetadata("i-2", "us-east-1", Optional.of("us-east-1b"), "Kubernetes Node n");

  @Test
  void theFirstSourceThatAnswersWinsAndLaterOnesAreNotAsked() {
    AtomicInteger k8s = new AtomicInteger();
    var chain =
        new NodeMetadataChain(
            List.of(answering(IMDS, new AtomicInteger()), answering(NODE, k8s)), Map.of());

    assertEquals(IMDS, chain.resolve());
    assertEquals(0, k8s.get());
  }

  @Test
  void imdsFailingFallsBackToTheNodeAndLogsTheReasonOnce() {
    var chain =
        new NodeMetadataChain(
            List.of(
                failing("instance metadata", "connect timed out", new AtomicInteger()),
                answering(NODE, new AtomicInteger())),
            Map.of());

    assertEquals(NODE, chain.resolve());
    assertEquals(NODE, chain.resolve());
    List<String> warnings =
        logs.list.stream()
            .filter(e -> e.getLevel().toString().equals("WARN"))
            .map(ILoggingEvent::getFormattedMessage)
            .toList();
    assertEquals(
        List.of("node metadata not available from instance metadata: connect timed out"), warnings);
  }

  @Test
  void lastResortIsTheNodeNameWithTheRegionFromTheEnvironment() {
    var chain =
        new NodeMetadataChain(
            List.of(failing("instance metadata", "disabled", new AtomicInteger())),
            Map.of("CSI_NODE_NAME", "worker-7", "AWS_DEFAULT_REGION", "ap-south-1"));

    NodeMetadata m = chain.resolve();
    assertEquals("worker-7", m.nodeId());
    assertEquals("ap-south-1", m.region());
    assertEquals(Optional.empty(), m.availabilityZone());

    var regionFirst =
        new NodeMetadataChain(
            List.of(),
            Map.of("CSI_NODE_NAME", "w", "AWS_REGION", "eu-west-3", "AWS_DEFAULT_REGION", "x"));
    assertEquals("eu-west-3", regionFirst.resolve().region());
  }

  @Test
  void nothingAtAllFailsNamingEveryReason() {
    var chain =
        new NodeMetadataChain(
            List.of(
                failing("instance metadata", "disabled", new AtomicInteger()),
                failing("Kubernetes Node w", "Node w does not exist", new AtomicInteger())),
            Map.of("CSI_NODE_NAME", "w"));

    DriverException e = assertThrows(DriverException.class, chain::resolve);
    assertEquals(DriverException.Kind.FAILED_PRECONDITION, e.kind());
    assertEquals(
        "cannot determine this node's metadata: instance metadata: disabled; Kubernetes Node w:"
            + " Node w does not exist; last resort needs CSI_NODE_NAME and AWS_REGION (or"
            + " AWS_DEFAULT_REGION), got CSI_NODE_NAME=w AWS_REGION=",
        e.getMessage());
  }

  @Test
  void standardChainWithImdsDisabledUsesTheNodeAndBuildsTheClientOnlyThen() {
    AtomicInteger built = new AtomicInteger();
    var chain =
        NodeMetadataChain.standard(
            Map.of(
                "AWS_EC2_METADATA_DISABLED", "true",
                "CSI_NODE_NAME", "w",
                "AWS_REGION", "us-east-2"),
            () -> {
              built.incrementAndGet();
              throw new IllegalStateException("no service account token");
            });

    NodeMetadata m = chain.resolve();
    assertEquals("w", m.nodeId());
    assertEquals("us-east-2", m.region());
    assertEquals(1, built.get());
  }
}
