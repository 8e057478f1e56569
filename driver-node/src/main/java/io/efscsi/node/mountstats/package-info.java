/**
 * The kernel NFS client's per-mount statistics ({@code /proc/self/mountstats}), read for the
 * per-volume {@code efs_csi_nfs_*} metrics ({@link io.efscsi.node.metrics.NfsClientMetrics}).
 */
package io.efscsi.node.mountstats;
