/**
 * NodeGetVolumeStats: capacity and inodes from statfs, the opt-in usage walk, and the volume's
 * condition from its proxy ({@link io.efscsi.node.stats.VolumeHealth}).
 */
package io.efscsi.node.stats;
