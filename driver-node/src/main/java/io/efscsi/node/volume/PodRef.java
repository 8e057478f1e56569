package io.efscsi.node.volume;

/**
 * The pod a NodePublishVolume is for, as kubelet names it in the volume context when the CSIDriver
 * has {@code podInfoOnMount: true}.
 */
public record PodRef(String namespace, String name, String uid) {}
