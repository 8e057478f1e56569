# Sourced by scripts/test: a Docker engine for the container image test (ContainerImageIT), on its
# own socket and data directory, started here when none answers. Exports DOCKER_HOST.
: "${DOCKER_HOST:=unix:///var/tmp/efs-csi-docker/docker.sock}"
export DOCKER_HOST
if ! docker info >/dev/null 2>&1; then
  d=/var/tmp/efs-csi-docker
  mkdir -p "$d"
  nohup dockerd --host "$DOCKER_HOST" --data-root "$d/data" --exec-root "$d/exec" \
    --pidfile "$d/docker.pid" >"$d/dockerd.log" 2>&1 &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { echo "dockerd did not start; see $d/dockerd.log" >&2; exit 4; }
fi
