#!/usr/bin/env bash
# `make up` / `make down`: the whole service set as separate local processes on the local broker.
#   deploy/services.sh up       infrastructure up, topics created, one process per stage
#   deploy/services.sh down     stop the stage processes (by recorded PID), then the infrastructure
#   deploy/services.sh status
# Logs: .run/services/<stage>.log. Produce documents to <prefix>.documents.v1; read <prefix>.sanitized.v1.
# The audit service's Prometheus gauges (risk, DU, attack accuracy): http://127.0.0.1:${ANONSTREAM_AUDIT_METRICS_PORT:-9464}/metrics
# and its built-in dashboard (runtime/dashboard.py): http://127.0.0.1:${ANONSTREAM_AUDIT_METRICS_PORT:-9464}/
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
RUN="${ANONSTREAM_RUN_DIR:-$ROOT/.run}/services"
STAGES=(ingest pii embed cluster refit swap sink audit)
BIN="$ROOT/.venv/bin"

up() {
  mkdir -p "$RUN"
  eval "$("$HERE/infra.sh" up)"
  if [ -z "${ANONSTREAM_PSEUDONYM_KEY:-}" ]; then
    # Local development only: a key kept in the run dir. Deployments pass their own secret.
    [ -s "$RUN/pseudonym.key" ] || (umask 077; "$BIN/python" -c 'import secrets; print(secrets.token_hex(32))' > "$RUN/pseudonym.key")
    ANONSTREAM_PSEUDONYM_KEY="$(cat "$RUN/pseudonym.key")"
    echo "ANONSTREAM_PSEUDONYM_KEY not set: using the local development key in $RUN/pseudonym.key" >&2
  fi
  export ANONSTREAM_BOOTSTRAP ANONSTREAM_REDIS_URL ANONSTREAM_PSEUDONYM_KEY
  "$BIN/anonstream" topics create
  for stage in "${STAGES[@]}"; do
    if [ -f "$RUN/$stage.pid" ] && kill -0 "$(cat "$RUN/$stage.pid")" 2>/dev/null; then
      echo "$stage already running (pid $(cat "$RUN/$stage.pid"))"; continue
    fi
    port=0
    [ "$stage" = audit ] && port="${ANONSTREAM_AUDIT_METRICS_PORT:-9464}"
    ANONSTREAM_METRICS_PORT="$port" nohup "$BIN/anonstream" service "$stage" >"$RUN/$stage.log" 2>&1 </dev/null &
    echo $! > "$RUN/$stage.pid"
    echo "$stage started (pid $!, log $RUN/$stage.log)"
  done
  echo "audit gauges on http://127.0.0.1:${ANONSTREAM_AUDIT_METRICS_PORT:-9464}/metrics, dashboard on http://127.0.0.1:${ANONSTREAM_AUDIT_METRICS_PORT:-9464}/"
  echo "produce to ${ANONSTREAM_TOPIC_PREFIX:-anonstream}.documents.v1 at $ANONSTREAM_BOOTSTRAP; sanitized documents on ${ANONSTREAM_TOPIC_PREFIX:-anonstream}.sanitized.v1"
  echo "feed and read them:  $BIN/anonstream produce --input docs.jsonl"
  echo "                     $BIN/anonstream consume --output out.jsonl --count N"
}

down() {
  local stage pid
  for stage in "${STAGES[@]}"; do
    [ -f "$RUN/$stage.pid" ] || continue
    pid="$(cat "$RUN/$stage.pid")"
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid"
      for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    fi
    rm -f "$RUN/$stage.pid"
  done
  "$HERE/infra.sh" down
}

status() {
  local stage
  for stage in "${STAGES[@]}"; do
    if [ -f "$RUN/$stage.pid" ] && kill -0 "$(cat "$RUN/$stage.pid")" 2>/dev/null; then
      echo "$stage: running (pid $(cat "$RUN/$stage.pid"))"
    else
      echo "$stage: stopped"
    fi
  done
  "$HERE/infra.sh" status || true
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) sed -n '2,6p' "$0"; exit 2 ;;
esac
