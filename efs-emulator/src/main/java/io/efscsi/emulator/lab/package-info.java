/**
 * The project's one loopback NFS lab: nfs-ganesha ({@link io.efscsi.emulator.mounttarget.Ganesha})
 * with, when asked, an stunnel TLS server in front of it standing in for the EFS side. The
 * integration tests ({@code NfsLab}) and the benchmarks ({@code efs-csi lab}, {@code
 * benchmarks/nfslab.py}) start it; the emulator's mount target and so the demo run the same ganesha
 * behind a TLS front of their own.
 */
package io.efscsi.emulator.lab;
