#!/usr/bin/env bash
# Local Redis for development and integration tests (no Docker; Debian's redis-server).
#
#   deploy/redis-local.sh start    install redis-server if missing, start it in the background
#                                  on 127.0.0.1, wait for PING -> PONG
#   deploy/redis-local.sh stop     SIGTERM by recorded PID, SIGKILL after 30 s
#   deploy/redis-local.sh status   exit 0 running, 3 not running, 1 stale/dead
#
# Environment (all optional):
#   ANONSTREAM_REDIS_PORT=16379        port on 127.0.0.1 (not 6379, so a developer's own Redis does not clash)
#   ANONSTREAM_RUN_DIR=<repo>/.run     run dir; Redis uses <run>/redis (pid file, log, working dir)
#   ANONSTREAM_REDIS_START_TIMEOUT=20  seconds to wait for PONG
# Persistence: AOF (--appendonly yes --appendfsync everysec, no RDB snapshots) in <run>/redis/appendonlydir.
# Pseudonym indexes and reassembly state live in Redis: a restart (stop, start) must keep them, and AOF
# loses at most the last second of writes on a crash where RDB would lose everything since the last
# snapshot. tests/chaos/ restarts Redis mid-stream and checks the pseudonyms are the same afterwards.
set -euo pipefail

# shellcheck source=deploy/_common.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/_common.sh"

REDIS_PORT="${ANONSTREAM_REDIS_PORT:-16379}"
REDIS_RUN="$RUN_ROOT/redis"
PID_FILE="$REDIS_RUN/redis.pid"
LOG_FILE="$REDIS_RUN/redis.log"
START_TIMEOUT="${ANONSTREAM_REDIS_START_TIMEOUT:-20}"
for v in REDIS_PORT START_TIMEOUT; do
  case "${!v}" in '' | *[!0-9]*) die "$v must be a positive integer (got '${!v}')" ;; esac
done

ensure_redis() {
  command -v redis-server >/dev/null 2>&1 && return 0
  # Debian's redis-server depends on redis-tools, so redis-cli comes along.
  apt_install redis-server
  command -v redis-server >/dev/null 2>&1 || die "redis-server not found after install"
}

# ping -> true if our port answers PING with PONG. redis-cli when present, else the project's
# Python redis client, else a raw RESP exchange over bash's /dev/tcp.
ping() {
  if command -v redis-cli >/dev/null 2>&1; then
    [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" = "PONG" ]
    return
  fi
  local py
  py="$(pick_python)"
  if "$py" -c 'import redis' 2>/dev/null; then
    "$py" - "$REDIS_PORT" <<'PY' 2>/dev/null
import sys, redis
sys.exit(0 if redis.Redis(host="127.0.0.1", port=int(sys.argv[1]), socket_timeout=1).ping() else 1)
PY
    return
  fi
  (
    exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT" || exit 1
    printf 'PING\r\n' >&3
    IFS= read -r -t 1 reply <&3 || exit 1
    [ "${reply%$'\r'}" = "+PONG" ]
  ) 2>/dev/null
}

# Our redis-server has "127.0.0.1:PORT" in its process title (argv is rewritten by Redis).
redis_running() { pid_is_ours "$(read_pid "$PID_FILE")" "127.0.0.1:$REDIS_PORT"; }

start() {
  if [ -f "$PID_FILE" ]; then
    if redis_running; then
      log "redis already running (pid $(read_pid "$PID_FILE")) at redis://127.0.0.1:$REDIS_PORT/0"
      return 0
    fi
    log "redis: removing stale pid file (pid $(read_pid "$PID_FILE") is not our running redis)"
    rm -f "$PID_FILE"
  fi
  port_in_use "$REDIS_PORT" && die "port 127.0.0.1:$REDIS_PORT is already in use (set ANONSTREAM_REDIS_PORT)"
  ensure_redis

  local t0 pid deadline
  t0="$(now)"
  mkdir -p "$REDIS_RUN"
  # --daemonize no + nohup/&: we record the PID ourselves. --dir keeps any stray file in the run dir.
  nohup redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --protected-mode yes \
    --save '' --appendonly yes --appendfsync everysec --dir "$REDIS_RUN" --daemonize no \
    >"$LOG_FILE" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PID_FILE"

  deadline=$((SECONDS + START_TIMEOUT))
  until ping; do
    if ! pid_alive "$pid"; then
      rm -f "$PID_FILE"
      warn "---- $LOG_FILE"
      tail -n 30 "$LOG_FILE" >&2 || true
      die "redis-server (pid $pid) exited during startup"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 30 "$LOG_FILE" >&2 || true
      stop_pid "$pid" "redis" 5
      rm -f "$PID_FILE"
      die "redis did not answer PING within ${START_TIMEOUT}s"
    fi
    sleep 0.1
  done
  log "redis up (pid $pid) at redis://127.0.0.1:$REDIS_PORT/0, log $LOG_FILE"
  log "redis startup time: $(elapsed "$t0")s"
}

stop() {
  if [ ! -f "$PID_FILE" ]; then
    log "redis: not running (no pid file in $REDIS_RUN)"
    return 0
  fi
  local pid
  pid="$(read_pid "$PID_FILE")"
  if redis_running; then
    stop_pid "$pid" "redis" 30
  else
    log "redis: pid ${pid:-?} is not our running redis (stale pid file removed)"
  fi
  rm -f "$PID_FILE"
}

status() {
  if [ ! -f "$PID_FILE" ]; then
    log "redis: not running"
    return 3
  fi
  if redis_running; then
    log "redis: running (pid $(read_pid "$PID_FILE"), redis://127.0.0.1:$REDIS_PORT/0)"
    return 0
  fi
  log "redis: NOT running (stale pid file, pid $(read_pid "$PID_FILE"))"
  return 1
}

usage() { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  -h | --help | help) usage ;;
  *) usage >&2; exit 2 ;;
esac
