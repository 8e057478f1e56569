/**
 * Proxy supervision: launch in own cgroups, adoption across plugin restarts, restart with backoff,
 * port allocation, mount table reading and the reconciler. May use proxy-core's config types only
 * (enforced by the build). The implementation arrives with the mount-supervisor issue.
 */
package io.efscsi.supervisor;
