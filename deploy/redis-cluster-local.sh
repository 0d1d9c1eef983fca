#!/usr/bin/env bash
# Local 3-master Redis Cluster for development and integration tests (no Docker; Debian's redis-server).
#
#   deploy/redis-cluster-local.sh start    install redis-server if missing, start three cluster-enabled
#                                          redis-servers on 127.0.0.1, join them with `redis-cli --cluster
#                                          create` (no replicas) on first start, wait for cluster_state:ok
#   deploy/redis-cluster-local.sh stop     SIGTERM each node by recorded PID, SIGKILL after 30 s
#   deploy/redis-cluster-local.sh status   exit 0 all running, 3 none running, 1 partly running/stale
#   deploy/redis-cluster-local.sh nodes    print the nodes, comma-separated 127.0.0.1:PORT (the value of
#                                          ANONSTREAM_REDIS_CLUSTER_NODES)
#
# Environment (all optional):
#   ANONSTREAM_REDIS_CLUSTER_PORT=17001    first port; the nodes use PORT, PORT+1, PORT+2 and, for the cluster
#                                          bus, PORT+10000.. (clear of 16379/16479 Redis and 19092.. Kafka)
#   ANONSTREAM_RUN_DIR=<repo>/.run         run dir; node N uses <run>/redis-cluster/<port> (pid, log, nodes.conf)
#   ANONSTREAM_REDIS_START_TIMEOUT=20      seconds to wait for each PONG and for cluster_state:ok
# Persistence as deploy/redis-local.sh (AOF, everysec); nodes.conf keeps the slot map, so stop + start brings the
# same cluster back with its data. Delete <run>/redis-cluster to start from an empty cluster.
set -euo pipefail

# shellcheck source=deploy/_common.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/_common.sh"

FIRST_PORT="${ANONSTREAM_REDIS_CLUSTER_PORT:-17001}"
START_TIMEOUT="${ANONSTREAM_REDIS_START_TIMEOUT:-20}"
for v in FIRST_PORT START_TIMEOUT; do
  case "${!v}" in '' | *[!0-9]*) die "$v must be a positive integer (got '${!v}')" ;; esac
done
CLUSTER_RUN="$RUN_ROOT/redis-cluster"
PORTS=("$FIRST_PORT" "$((FIRST_PORT + 1))" "$((FIRST_PORT + 2))")

node_dir() { printf '%s\n' "$CLUSTER_RUN/$1"; }
node_pid_file() { printf '%s\n' "$CLUSTER_RUN/$1/redis.pid"; }
# Our redis-server has "127.0.0.1:PORT" in its process title (argv is rewritten by Redis).
node_running() { pid_is_ours "$(read_pid "$(node_pid_file "$1")")" "127.0.0.1:$1"; }
cli() { local port="$1"; shift; redis-cli -h 127.0.0.1 -p "$port" "$@"; }
nodes() { local IFS=,; printf '%s\n' "${PORTS[*]/#/127.0.0.1:}"; }

ensure_redis() {
  command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 && return 0
  apt_install redis-server   # Debian's redis-server depends on redis-tools (redis-cli)
  command -v redis-cli >/dev/null 2>&1 || die "redis-cli not found after install"
}

# wait_until SECONDS COMMAND... -> true once COMMAND succeeds, false after SECONDS
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}
pong() { [ "$(cli "$1" ping 2>/dev/null)" = "PONG" ]; }
cluster_ok() {
  local port
  for port in "${PORTS[@]}"; do
    cli "$port" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || return 1
  done
}
# Slots assigned: the nodes were joined before (nodes.conf) and come back as the same cluster.
cluster_formed() { cli "${PORTS[0]}" cluster info 2>/dev/null | grep -q '^cluster_slots_assigned:16384'; }

start_node() {
  local port="$1" dir pid
  dir="$(node_dir "$port")"
  if [ -f "$(node_pid_file "$port")" ]; then
    if node_running "$port"; then
      log "redis cluster node 127.0.0.1:$port already running"
      return 0
    fi
    rm -f "$(node_pid_file "$port")"
  fi
  port_in_use "$port" && die "port 127.0.0.1:$port is already in use (set ANONSTREAM_REDIS_CLUSTER_PORT)"
  port_in_use "$((port + 10000))" && die "cluster bus port 127.0.0.1:$((port + 10000)) is already in use"
  mkdir -p "$dir"
  nohup redis-server --bind 127.0.0.1 --port "$port" --protected-mode yes \
    --cluster-enabled yes --cluster-config-file "$dir/nodes.conf" --cluster-node-timeout 5000 \
    --save '' --appendonly yes --appendfsync everysec --dir "$dir" --daemonize no \
    >"$dir/redis.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$(node_pid_file "$port")"
  if ! wait_until "$START_TIMEOUT" pong "$port"; then
    tail -n 30 "$dir/redis.log" >&2 || true
    stop_pid "$pid" "redis cluster node $port" 5
    rm -f "$(node_pid_file "$port")"
    die "redis cluster node 127.0.0.1:$port did not answer PING within ${START_TIMEOUT}s"
  fi
}

start() {
  ensure_redis
  local t0 port
  t0="$(now)"
  for port in "${PORTS[@]}"; do start_node "$port"; done
  if ! cluster_formed; then
    redis-cli --cluster create $(nodes | tr ',' ' ') --cluster-replicas 0 --cluster-yes >"$CLUSTER_RUN/create.log" 2>&1 ||
      { cat "$CLUSTER_RUN/create.log" >&2; stop; die "redis-cli --cluster create failed"; }
  fi
  if ! wait_until "$START_TIMEOUT" cluster_ok; then
    cli "${PORTS[0]}" cluster info >&2 || true
    stop
    die "redis cluster did not reach cluster_state:ok within ${START_TIMEOUT}s"
  fi
  log "redis cluster up: nodes $(nodes | tr ',' ' '), logs $CLUSTER_RUN/<port>/redis.log"
  log "redis cluster startup time: $(elapsed "$t0")s"
}

stop() {
  local port pid
  for port in "${PORTS[@]}"; do
    [ -f "$(node_pid_file "$port")" ] || continue
    pid="$(read_pid "$(node_pid_file "$port")")"
    if node_running "$port"; then
      stop_pid "$pid" "redis cluster node $port" 30
    else
      log "redis cluster node $port: pid ${pid:-?} is not our running redis (stale pid file removed)"
    fi
    rm -f "$(node_pid_file "$port")"
  done
}

status() {
  local port up=0
  for port in "${PORTS[@]}"; do node_running "$port" && up=$((up + 1)); done
  if [ "$up" = 3 ]; then
    log "redis cluster: running, nodes $(nodes | tr ',' ' ')"
    return 0
  fi
  if [ "$up" = 0 ] && ! ls "$CLUSTER_RUN"/*/redis.pid >/dev/null 2>&1; then
    log "redis cluster: not running"
    return 3
  fi
  log "redis cluster: $up of 3 nodes running"
  return 1
}

usage() { sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  nodes) nodes ;;
  -h | --help | help) usage ;;
  *) usage >&2; exit 2 ;;
esac
