/**
 * An EFS mount target on loopback for the demo: TLS with a certificate for the file system's DNS
 * name (issued by a CA of its own), the BindClientToPartition handshake, and nfs-ganesha behind it,
 * with access points mapped to directories and their POSIX identity applied as EFS does.
 */
package io.efscsi.emulator.mounttarget;
