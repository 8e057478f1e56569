/**
 * The node's host directories: the kubelet dir that every path of a CSI call must lie below ({@link
 * io.efscsi.node.paths.PathConfinement}), and the state dir that must be writable for the node to
 * be ready ({@link io.efscsi.node.paths.StateDirCheck}).
 */
package io.efscsi.node.paths;
