/**
 * The controller's {@code --delete-access-point-root-dir} and {@code onDelete}, on the node's own
 * mount path ({@link io.efscsi.node.cleanup.DirectoryCleanup}); the launcher wires it to the
 * controller's {@code DirectoryRemover} port.
 */
package io.efscsi.node.cleanup;
