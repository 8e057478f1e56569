/**
 * The node plugin's top level: wiring and the CSI service, nothing else.
 *
 * <ul>
 *   <li>{@link io.efscsi.node.NodePlugin}: the composition root (the node's object graph, built
 *       once from its options) and its lifecycle (start-up retries, takeover passes, close); also
 *       builds the controller's cleanup mounts for the launcher.
 *   <li>{@link io.efscsi.node.HostAdapters}: this host's real adapters, made here only.
 *   <li>{@link io.efscsi.node.NodeService}: the CSI Node service (validates, guards, delegates,
 *       maps).
 *   <li>{@link io.efscsi.node.NodeOptions}, {@link io.efscsi.node.SupervisorOptions}: the typed
 *       config from flags.
 * </ul>
 *
 * <p>The work lives in packages named for what they do, which never import this one: {@code mounts}
 * (NodeStage/NodePublish: staging and bind mounts, verified unmounts), {@code stats}
 * (NodeGetVolumeStats: statfs, usage walks, the volume condition), {@code paths} (the kubelet dir
 * calls are confined to, the state dir check), {@code volume} (volume ids, options and the mount
 * plan), {@code iam} (client certificates and credentials), {@code cloud} (node metadata), {@code
 * events}, {@code k8s}, {@code metrics}, {@code takeover}, {@code status} and {@code cleanup} (the
 * controller's {@code --delete-access-point-root-dir} on the node's mount path).
 *
 * <p>{@code StagingMounts}, {@code PublishMounts} and {@code Unmounts}, the CSI work the service
 * drives, moved to {@code mounts} rather than staying here: the move made no member public ({@code
 * Unmounts} and {@code StagingMounts.proxySpec} stay package-private, next to their only users),
 * and {@code cleanup} stages through {@code StagingMounts} too, which from here would have been an
 * arrow back up to the wiring.
 */
package io.efscsi.node;
