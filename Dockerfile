# The efs-csi-java image: the distribution on a Debian base with a trimmed JDK 25 runtime and the
# tools the node plugin runs (mount, mount.nfs4, umount, realpath, rm, stat). One image for every role: the
# chart's containers pass `controller` or `node` (or nothing, for all of it) as arguments.
#
#   ./mvnw -B -DskipTests package
#   docker build -t <registry>/efs-csi:<version> \
#     --build-arg VERSION=<version> --build-arg REVISION="$(git rev-parse HEAD)" \
#     --build-arg CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)" .
#
# For amd64 and arm64 (docs/install.md): `docker buildx build --platform linux/amd64,linux/arm64`
# on a builder that runs both (an arm64 machine, or QEMU binfmt emulation): every stage runs on the
# target architecture, TARGETARCH says which, and the distribution keeps only that architecture's
# Netty natives (epoll, BoringSSL). The classic builder does not set TARGETARCH; then the base
# image's own architecture is used.
#
# JDK_IMAGE is any image with a JDK 25 at $JAVA_HOME (Temurin's by default, multi-architecture),
# BASE_IMAGE a Debian bookworm. Only dist/target/efs-csi goes into the build (.dockerignore). The
# AOT caches are made again in the image: a cache only works with the JVM that wrote it.
ARG JDK_IMAGE=eclipse-temurin:25-jdk
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${JDK_IMAGE} AS jdk
# The modules the driver and the proxy use (jdeps over lib/, lib/proxy/ and lib/demo/, plus what is
# loaded by name: DNS, EC keys, zip file systems), and jcmd for diagnostics (docs/troubleshooting.md).
RUN "$JAVA_HOME/bin/jlink" --output /jre --strip-java-debug-attributes --no-man-pages --no-header-files \
      --add-modules java.base,java.desktop,java.logging,java.management,java.naming,java.net.http,java.sql,java.xml,jdk.crypto.ec,jdk.httpserver,jdk.jcmd,jdk.jfr,jdk.management,jdk.naming.dns,jdk.unsupported,jdk.zipfs

# The distribution with the natives of the architecture the image is for; the other
# architecture's go here, in a stage of their own, so no layer of the image carries them (and
# before the AOT caches are made: the proxy's cache is tied to its exact classpath).
FROM ${BASE_IMAGE} AS dist
COPY dist/target/efs-csi /opt/efs-csi
ARG TARGETARCH
RUN set -eu; arch="${TARGETARCH:-$(dpkg --print-architecture)}"; \
    if [ "$arch" != "$(dpkg --print-architecture)" ]; then \
      echo "TARGETARCH=$arch but the base image is $(dpkg --print-architecture)" >&2; exit 1; fi; \
    case "$arch" in amd64) own=x86_64 other=aarch_64 ;; arm64) own=aarch_64 other=x86_64 ;; \
      *) echo "no Netty natives for $arch (amd64 and arm64 only)" >&2; exit 1 ;; esac; \
    rm -f /opt/efs-csi/lib/*-linux-$other.jar /opt/efs-csi/lib/proxy/*-linux-$other.jar \
      /opt/efs-csi/lib/proxy/native/*_$other.so; \
    ls /opt/efs-csi/lib/proxy/native/libnetty_transport_native_epoll_$own.so \
      /opt/efs-csi/lib/proxy/native/libnetty_tcnative_linux_$own.so >/dev/null

FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends nfs-common util-linux coreutils ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=jdk /jre /opt/java
ENV JAVA_HOME=/opt/java PATH=/opt/efs-csi/bin:/opt/java/bin:$PATH
COPY --from=dist /opt/efs-csi /opt/efs-csi
# The training drives each plugin against the EFS emulator (lib/demo/, the demo module with the
# emulator; never on the plugins' class path): the reason the image carries lib/demo/
# (docs/architecture.md, "The demo module and the image").
RUN /opt/efs-csi/bin/efs-csi train && /opt/efs-csi/bin/efs-csi version
# Open Container Initiative annotations, from the build's arguments (ContainerImageIT passes what
# the distribution's `efs-csi version` prints).
ARG VERSION=unknown
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="efs-csi-java" \
      org.opencontainers.image.description="A drop-in replacement for the AWS EFS CSI driver, with supervised per-mount TLS proxies" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="https://github.com/efs-csi-java/efs-csi-java" \
      org.opencontainers.image.licenses="Apache-2.0"
ENTRYPOINT ["/opt/efs-csi/bin/efs-csi"]
