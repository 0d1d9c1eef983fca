#!/usr/bin/env bash
# Local infrastructure for anonstream: Redis, a 3-master Redis Cluster and Kafka, no Docker.
#
#   deploy/infra.sh up       start Redis, the Redis Cluster, then Kafka; print the environment to export (on
#                            stdout; progress goes to stderr, so `eval "$(deploy/infra.sh up)"` works)
#   deploy/infra.sh down     stop Kafka, the Redis Cluster, then Redis
#   deploy/infra.sh status   status of all three (exit 0 only if all are running)
#   deploy/infra.sh env      print the exports again
#
# ANONSTREAM_KAFKA_NODES=1|2 selects the Kafka node count for `up` (default 1). Every other knob (ports,
# run dir, partitions) is read by deploy/kafka-local.sh, deploy/redis-local.sh, deploy/redis-cluster-local.sh.
# The services use the single Redis; the cluster's nodes (ANONSTREAM_REDIS_CLUSTER_NODES) are for the tests
# that run the stores on both (a service uses the cluster with ANONSTREAM_REDIS_CLUSTER=1 and
# ANONSTREAM_REDIS_URL=redis://<one node>/0).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RUN_ROOT="${ANONSTREAM_RUN_DIR:-$HERE/../.run}"
KAFKA_NODES="${ANONSTREAM_KAFKA_NODES:-1}"
REDIS_PORT="${ANONSTREAM_REDIS_PORT:-16379}"

print_env() {
  local bootstrap
  bootstrap="$(cat "$RUN_ROOT/kafka/bootstrap" 2>/dev/null || echo "127.0.0.1:${ANONSTREAM_KAFKA_PORT:-19092}")"
  echo "export ANONSTREAM_BOOTSTRAP=$bootstrap"
  echo "export ANONSTREAM_REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0"
  echo "export ANONSTREAM_REDIS_CLUSTER_NODES=$("$HERE/redis-cluster-local.sh" nodes)"
}

up() {
  local redis_was_running=0 cluster_was_running=0
  "$HERE/redis-local.sh" status >/dev/null 2>&1 && redis_was_running=1
  "$HERE/redis-cluster-local.sh" status >/dev/null 2>&1 && cluster_was_running=1
  # Don't leave half an environment behind: stop what this call started when a later part fails.
  undo() {
    if [ "$cluster_was_running" = 0 ]; then "$HERE/redis-cluster-local.sh" stop >&2 || true; fi
    if [ "$redis_was_running" = 0 ]; then "$HERE/redis-local.sh" stop >&2 || true; fi
  }
  "$HERE/redis-local.sh" start >&2
  if ! "$HERE/redis-cluster-local.sh" start >&2; then
    undo
    echo "error: the redis cluster did not start (logs in $RUN_ROOT/redis-cluster)" >&2
    exit 1
  fi
  if ! "$HERE/kafka-local.sh" start "$KAFKA_NODES" >&2; then
    undo
    echo "error: kafka did not start (logs in $RUN_ROOT/kafka)" >&2
    exit 1
  fi
  echo "# infrastructure up; export these for services and tests:" >&2
  print_env
}

down() {
  local rc=0
  "$HERE/kafka-local.sh" stop || rc=1
  "$HERE/redis-cluster-local.sh" stop || rc=1
  "$HERE/redis-local.sh" stop || rc=1
  return "$rc"
}

status() {
  local rc=0 r
  "$HERE/redis-local.sh" status || rc=$?
  "$HERE/redis-cluster-local.sh" status || { r=$?; [ "$rc" -ne 0 ] || rc=$r; }
  "$HERE/kafka-local.sh" status || { r=$?; [ "$rc" -ne 0 ] || rc=$r; }
  return "$rc"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  env) print_env ;;
  -h | --help | help) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
  *) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
