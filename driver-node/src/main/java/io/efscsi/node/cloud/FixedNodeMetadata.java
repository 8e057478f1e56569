package io.efscsi.node.cloud;

import java.util.Optional;

/**
 * Node metadata already known: what a {@link NodeMetadataSource} found, and the in-memory adapter
 * for tests.
 *
 * @param source where it came from, for logs ({@code instance metadata}, {@code Node n1}, …)
 */
public record FixedNodeMetadata(
    String nodeId, String region, Optional<String> availabilityZone, String source)
    implements NodeMetadata {}
