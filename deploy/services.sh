#!/usr/bin/env bash
# `make up` / `make down`: the whole service set as separate local processes on the local broker.
#   deploy/services.sh up       infrastructure up, topics created, one process per stage
#   deploy/services.sh down     stop the stage processes (by recorded PID), then the infrastructure
#   deploy/services.sh status
# Logs: .run/services/<stage>.log. Produce documents to <prefix>.documents.v1; read <prefix>.sanitized.v1.
# Metrics: every stage serves GET /metrics on 127.0.0.1: the audit on ${ANONSTREAM_AUDIT_METRICS_PORT:-9464}, with its
# built-in dashboard (runtime/dashboard.py) at /; the other stages on consecutive ports from
# ${ANONSTREAM_STAGE_METRICS_PORT_BASE:-9465} in the order of STAGES (ingest 9465 ... sink 9471), and the audit's
# dashboard scrapes them (ANONSTREAM_DASHBOARD_SCRAPE; set it to override the list).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
RUN="${ANONSTREAM_RUN_DIR:-$ROOT/.run}/services"
STAGES=(ingest pii embed cluster refit swap sink audit)
BIN="$ROOT/.venv/bin"
AUDIT_PORT="${ANONSTREAM_AUDIT_METRICS_PORT:-9464}"
STAGE_PORT_BASE="${ANONSTREAM_STAGE_METRICS_PORT_BASE:-9465}"

metrics_port() {  # the metrics port of stage $1
  local i
  if [ "$1" = audit ]; then echo "$AUDIT_PORT"; return; fi
  for i in "${!STAGES[@]}"; do
    if [ "${STAGES[$i]}" = "$1" ]; then echo $((STAGE_PORT_BASE + i)); return; fi
  done
  echo "unknown stage $1" >&2; return 1
}

scrape_list() {  # host:port of every stage but the audit (which reads its own registry), comma-separated
  local stage out=""
  for stage in "${STAGES[@]}"; do
    [ "$stage" = audit ] && continue
    out="${out:+$out,}127.0.0.1:$(metrics_port "$stage")"
  done
  echo "$out"
}

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
  local scrape="${ANONSTREAM_DASHBOARD_SCRAPE:-$(scrape_list)}" stage port
  for stage in "${STAGES[@]}"; do
    if [ -f "$RUN/$stage.pid" ] && kill -0 "$(cat "$RUN/$stage.pid")" 2>/dev/null; then
      echo "$stage already running (pid $(cat "$RUN/$stage.pid"))"; continue
    fi
    port="$(metrics_port "$stage")"
    ANONSTREAM_METRICS_PORT="$port" ANONSTREAM_DASHBOARD_SCRAPE="$scrape" \
      nohup "$BIN/anonstream" service "$stage" >"$RUN/$stage.log" 2>&1 </dev/null &
    echo $! > "$RUN/$stage.pid"
    echo "$stage started (pid $!, log $RUN/$stage.log, metrics http://127.0.0.1:$port/metrics)"
  done
  echo "dashboard on http://127.0.0.1:$AUDIT_PORT/ (the stages' metrics scraped from $scrape)"
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
      echo "$stage: running (pid $(cat "$RUN/$stage.pid"), metrics http://127.0.0.1:$(metrics_port "$stage")/metrics)"
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
