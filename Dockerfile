# The efs-csi-java image: the distribution on a Debian base with a trimmed JDK 25 runtime and the
# tools the node plugin runs (mount, mount.nfs4, umount, realpath, rm, stat). One image for every role: the
# chart's containers pass `controller` or `node` (or nothing, for all of it) as arguments.
#
#   ./mvnw -B -DskipTests package
#   docker build -t <registry>/efs-csi:<version> .
#
# JDK_IMAGE is any image with a JDK 25 at $JAVA_HOME (Temurin's by default), BASE_IMAGE a Debian
# bookworm. Only dist/target/efs-csi goes into the build (.dockerignore). The AOT caches are made
# again in the image: a cache only works with the JVM that wrote it.
ARG JDK_IMAGE=eclipse-temurin:25-jdk
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${JDK_IMAGE} AS jdk
# The modules the driver and the proxy use (jdeps over lib/ and lib/proxy/, plus what is loaded by
# name: DNS, EC keys, zip file systems), and jcmd for diagnostics (docs/troubleshooting.md).
RUN "$JAVA_HOME/bin/jlink" --output /jre --strip-java-debug-attributes --no-man-pages --no-header-files \
      --add-modules java.base,java.desktop,java.logging,java.management,java.naming,java.net.http,java.sql,java.xml,jdk.crypto.ec,jdk.httpserver,jdk.jcmd,jdk.jfr,jdk.management,jdk.naming.dns,jdk.unsupported,jdk.zipfs

FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends nfs-common util-linux coreutils ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=jdk /jre /opt/java
ENV JAVA_HOME=/opt/java PATH=/opt/java/bin:$PATH
COPY dist/target/efs-csi /opt/efs-csi
RUN /opt/efs-csi/bin/efs-csi train && /opt/efs-csi/bin/efs-csi version
ENTRYPOINT ["/opt/efs-csi/bin/efs-csi"]
