#!/usr/bin/env bash
# The two base images the Dockerfile takes as build arguments, made on this machine because no
# image registry is reachable from it: a Debian bookworm from debootstrap (as debian:bookworm-slim
# would be: no nfs-common, so the Dockerfile's own install is exercised) and a JDK image with the
# JDK of JAVA_HOME at /opt/java/openjdk (as eclipse-temurin:25-jdk has it; symbolic links out of
# the JDK, such as Debian's cacerts, resolved). Usage: base-images.sh <debian tag> <jdk tag> <work dir>
set -euo pipefail
debian="$1" jdk="$2" work="$3"
mkdir -p "$work"
if ! docker image inspect "$debian" >/dev/null 2>&1; then
  rm -rf "$work/rootfs"
  debootstrap --variant=minbase bookworm "$work/rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  tar -C "$work/rootfs" -c . | docker import - "$debian" >/dev/null
  rm -rf "$work/rootfs"
fi
if ! docker image inspect "$jdk" >/dev/null 2>&1; then
  rm -rf "$work/jdk"
  mkdir -p "$work/jdk"
  cp -rL "$JAVA_HOME" "$work/jdk/jdk"
  printf 'FROM %s\nCOPY jdk /opt/java/openjdk\nENV JAVA_HOME=/opt/java/openjdk PATH=/opt/java/openjdk/bin:$PATH\n' \
    "$debian" >"$work/jdk/Dockerfile"
  docker build -q -t "$jdk" "$work/jdk" >/dev/null
  rm -rf "$work/jdk"
fi
