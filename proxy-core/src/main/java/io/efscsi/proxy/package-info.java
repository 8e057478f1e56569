/**
 * The per-mount proxy process that sits between the kernel NFS client on 127.0.0.1 and the EFS
 * mount target. Its own minimal classpath: Netty and SLF4J only; never gRPC, the AWS SDK or fabric8
 * (enforced by the build). The data path arrives with the proxy-core issue.
 */
package io.efscsi.proxy;
