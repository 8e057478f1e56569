/**
 * Not the product: the commands that drive the driver against the EFS emulator ({@link
 * io.efscsi.demo.DemoMain}): {@code efs-csi demo}, {@code benchmark-controller}, the build's {@code
 * aot-training} and {@code lab}, the loopback NFS server the tests and benchmarks share. The
 * distribution keeps this module and the emulator in {@code lib/demo/}, on the class path of these
 * commands only. The image carries it because its AOT caches are made in the image build by the
 * image's own JVM, and that training drives each plugin against the emulator ({@code
 * aot-training}); see docs/architecture.md, "The demo module and the image".
 */
package io.efscsi.demo;
