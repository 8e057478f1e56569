# Sourced by scripts/test: a Docker engine for the container image test (ContainerImageIT), on its
# own socket and data directory, started here when none answers (then EFSCSI_DOCKERD_STARTED=1, and
# stop_docker_engine stops it again). Exports DOCKER_HOST.
: "${DOCKER_HOST:=unix:///var/tmp/efs-csi-docker/docker.sock}"
export DOCKER_HOST
if ! docker info >/dev/null 2>&1; then
  EFSCSI_DOCKERD_STARTED=1
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

# Stops the engine if this script started it.
stop_docker_engine() {
  local pidfile=/var/tmp/efs-csi-docker/docker.pid
  [ "${EFSCSI_DOCKERD_STARTED:-}" = 1 ] && [ -f "$pidfile" ] || return 0
  local pid
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 30); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 1
  done
  echo "dockerd ($pid) did not stop within 30 s of SIGTERM" >&2
  return 1
}
