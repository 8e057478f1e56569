/**
 * The mount work of the CSI Node calls: NodeStage/NodeUnstage ({@link
 * io.efscsi.node.mounts.StagingMounts}: one NFS mount per volume through its proxy),
 * NodePublish/NodeUnpublish ({@link io.efscsi.node.mounts.PublishMounts}: bind mounts) and unmounts
 * that return only once the mount table agrees. Mounting itself is the host layer's ({@code
 * supervisor.host.Mounter}).
 */
package io.efscsi.node.mounts;
