#!/usr/bin/env bash
# Local Apache Kafka 3.9 (KRaft, no ZooKeeper) for development and integration tests.
# No Docker, no tarball: the broker classpath is resolved from Maven Central with deploy/kafka/pom.xml
# and the broker runs as plain `java -cp 'lib/*' kafka.Kafka <generated server.properties>`.
#
#   deploy/kafka-local.sh fetch        resolve the jars once (skipped when already cached)
#   deploy/kafka-local.sh start [1|2]  fresh cluster (fetches first if needed); 1 = one combined
#                                      broker+controller node, 2 = + a broker-only second node
#   deploy/kafka-local.sh stop         SIGTERM by recorded PID (broker-only node first), SIGKILL after 30 s
#   deploy/kafka-local.sh status       exit 0 running, 3 not running, 1 stale/dead
#
# Environment (all optional):
#   ANONSTREAM_KAFKA_PORT=19092             client listener of node 1 (127.0.0.1)
#   ANONSTREAM_KAFKA_CONTROLLER_PORT=19093  KRaft controller listener of node 1
#   ANONSTREAM_KAFKA_PORT2=19094            client listener of node 2
#   ANONSTREAM_PARTITIONS=4                 num.partitions for auto-created topics
#   ANONSTREAM_KAFKA_VERSION=3.9.2          3.9.x patch release to fetch
#   ANONSTREAM_KAFKA_HOME=~/.cache/anonstream/kafka-<version>   jar cache (lib/)
#   ANONSTREAM_RUN_DIR=<repo>/.run          run dir; Kafka uses <run>/kafka (data, logs, pids, configs)
#   ANONSTREAM_KAFKA_HEAP="-Xms512m -Xmx512m"   ANONSTREAM_KAFKA_START_TIMEOUT=90 (s)
#   ANONSTREAM_PYTHON                       python with aiokafka (default: <repo>/.venv/bin/python)
# Ports default to 1909x rather than 9092 so a developer's own Kafka does not clash.
set -euo pipefail

# shellcheck source=deploy/_common.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/_common.sh"

KAFKA_VERSION="${ANONSTREAM_KAFKA_VERSION:-3.9.2}"
case "$KAFKA_VERSION" in 3.9.*) ;; *) die "ANONSTREAM_KAFKA_VERSION=$KAFKA_VERSION: only 3.9.x is supported (pom + reload4j logging)" ;; esac
KAFKA_HOME="${ANONSTREAM_KAFKA_HOME:-$HOME/.cache/anonstream/kafka-$KAFKA_VERSION}"
LIB="$KAFKA_HOME/lib"
CP="$LIB/*" # passed quoted: java expands lib/* itself
KAFKA_RUN="$RUN_ROOT/kafka"
PORT1="${ANONSTREAM_KAFKA_PORT:-19092}"
CONTROLLER_PORT="${ANONSTREAM_KAFKA_CONTROLLER_PORT:-19093}"
PORT2="${ANONSTREAM_KAFKA_PORT2:-19094}"
PARTITIONS="${ANONSTREAM_PARTITIONS:-4}"
START_TIMEOUT="${ANONSTREAM_KAFKA_START_TIMEOUT:-90}"
read -r -a HEAP_OPTS <<<"${ANONSTREAM_KAFKA_HEAP:--Xms512m -Xmx512m}"
# JVM flags as in Kafka's bin/kafka-run-class.sh, plus exit on OOM instead of limping on.
JVM_OPTS=(-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
  -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -XX:+ExitOnOutOfMemoryError
  -Djava.awt.headless=true)
BROKER_LOG_OPTS=("-Dlog4j.configuration=file:$DEPLOY_DIR/kafka/log4j.properties")
# StorageTool is a short-lived JVM: C1 only + serial GC halves its run time (about 1.4 s -> 0.7 s here).
TOOL_JVM_OPTS=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx256m
  "-Dlog4j.configuration=file:$DEPLOY_DIR/kafka/tools-log4j.properties")

for v in PORT1 CONTROLLER_PORT PORT2 PARTITIONS START_TIMEOUT; do
  case "${!v}" in '' | *[!0-9]*) die "$v must be a positive integer (got '${!v}')" ;; esac
done

# ---------------------------------------------------------------------------------------------------
# prerequisites

# Java (11+; 17 here) and Maven (fetch only). Installed with apt when missing and we can.
ensure_java() {
  command -v java >/dev/null 2>&1 && return 0
  apt_install default-jre-headless
  command -v java >/dev/null 2>&1 || die "java not found after install"
}
ensure_maven() {
  command -v mvn >/dev/null 2>&1 && return 0
  apt_install maven
  command -v mvn >/dev/null 2>&1 || die "mvn not found after install"
}

# The cache is complete when fetch wrote its marker (a half-finished fetch never leaves lib/ behind).
jars_cached() { [ -f "$LIB/.fetched-$KAFKA_VERSION" ] && [ -f "$LIB/kafka_2.13-$KAFKA_VERSION.jar" ]; }

fetch() {
  if jars_cached; then
    log "kafka $KAFKA_VERSION jars already cached in $LIB ($(find "$LIB" -name '*.jar' | wc -l) jars; delete $KAFKA_HOME to refetch)"
    return 0
  fi
  ensure_java
  ensure_maven
  local t0 tmp
  t0="$(now)"
  mkdir -p "$KAFKA_HOME"
  tmp="$(mktemp -d "$KAFKA_HOME/lib.partial.XXXXXX")"
  log "fetching kafka_2.13:$KAFKA_VERSION runtime classpath from Maven Central into $LIB ..."
  # -f: the pom stays in deploy/kafka; packaging=pom, so Maven creates no target/ there.
  # Maven's output goes to a log that is shown only on failure (-q still prints terminal escapes).
  if ! mvn -q -B -Dstyle.color=never -f "$DEPLOY_DIR/kafka/pom.xml" "-Dkafka.version=$KAFKA_VERSION" \
    dependency:copy-dependencies -DincludeScope=runtime "-DoutputDirectory=$tmp" \
    >"$KAFKA_HOME/fetch.log" 2>&1; then
    cat "$KAFKA_HOME/fetch.log" >&2
    rm -rf "$tmp"
    die "maven could not resolve kafka_2.13:$KAFKA_VERSION (try ANONSTREAM_KAFKA_VERSION=3.9.1)"
  fi
  [ -f "$tmp/kafka_2.13-$KAFKA_VERSION.jar" ] || { rm -rf "$tmp"; die "kafka_2.13-$KAFKA_VERSION.jar missing after fetch"; }
  [ -f "$tmp/slf4j-reload4j-1.7.36.jar" ] || { rm -rf "$tmp"; die "logging backend (slf4j-reload4j) missing after fetch"; }
  touch "$tmp/.fetched-$KAFKA_VERSION"
  rm -rf "$LIB" # never mix the jars of two fetches in one classpath
  mv "$tmp" "$LIB"
  log "fetched $(find "$LIB" -name '*.jar' | wc -l) jars in $(elapsed "$t0")s"
}

# ---------------------------------------------------------------------------------------------------
# configuration

node_port() { if [ "$1" = 1 ]; then echo "$PORT1"; else echo "$PORT2"; fi; }

# write_props NODE NODES -> generated server.properties path for node 1 (broker+controller) or 2 (broker);
# internal topics (consumer offsets, transaction state) get one replica per node, so a 2-node cluster keeps
# its group offsets and transactions when the broker-only node dies (failover tests)
write_props() {
  local id="$1" replicas="${2:-1}" roles listeners port f="$KAFKA_RUN/node$1.properties"
  port="$(node_port "$id")"
  if [ "$id" = 1 ]; then
    roles="broker,controller"
    listeners="PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$CONTROLLER_PORT"
  else
    # a broker-only node must not list the CONTROLLER listener and is not a voter
    roles="broker"
    listeners="PLAINTEXT://127.0.0.1:$port"
  fi
  # NB: .properties files have no inline comments, hence the comment lines.
  cat >"$f" <<PROPS
# generated by deploy/kafka-local.sh -- overwritten on every start
process.roles=$roles
node.id=$id
# static quorum: node 1 is the only controller (so StorageTool format runs without --standalone)
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
controller.listener.names=CONTROLLER
listeners=$listeners
advertised.listeners=PLAINTEXT://127.0.0.1:$port
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KAFKA_RUN/data/node$id

$(topic_and_footprint_props "$replicas")
PROPS
  echo "$f"
}

# topic_and_footprint_props REPLICAS -> the server.properties lines every local broker shares (this script's
# and deploy/secure-local.sh's): topic defaults, internal topics with REPLICAS replicas, a small footprint
topic_and_footprint_props() {
  cat <<PROPS
# topics: auto-created on first use with ANONSTREAM_PARTITIONS partitions, one replica per node
num.partitions=$PARTITIONS
default.replication.factor=$1
min.insync.replicas=1
auto.create.topics.enable=true
delete.topic.enable=true

# consumer offsets: one partition (the default 50 make the first group join slow), no join delay
offsets.topic.replication.factor=$1
offsets.topic.num.partitions=1
group.initial.rebalance.delay.ms=0

# transactions (the sink's produce + offsets): state log with one replica per node
transaction.state.log.replication.factor=$1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1

# small footprint: 2-core dev machines, 512 MB heap
num.network.threads=2
num.io.threads=2
background.threads=2
num.recovery.threads.per.data.dir=1
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=16777216
PROPS
}

bootstrap_for() { # bootstrap_for NODES -> comma-separated client listeners
  if [ "$1" = 2 ]; then echo "127.0.0.1:$PORT1,127.0.0.1:$PORT2"; else echo "127.0.0.1:$PORT1"; fi
}

# ---------------------------------------------------------------------------------------------------
# processes

pid_file() { echo "$KAFKA_RUN/node$1.pid"; }

# node_running N -> true if node N's recorded PID is alive and is our broker (config path in argv)
node_running() { pid_is_ours "$(read_pid "$(pid_file "$1")")" "$KAFKA_RUN/node$1.properties"; }

# Stop every recorded node: broker-only node 2 first (its controlled shutdown talks to node 1's
# controller), node 1 last. Stale pid files are removed.
stop_nodes() {
  local n f pid
  for n in 2 1; do
    f="$(pid_file "$n")"
    [ -f "$f" ] || continue
    pid="$(read_pid "$f")"
    if node_running "$n"; then
      stop_pid "$pid" "kafka node$n" 30
    else
      log "kafka node$n: pid ${pid:-?} is not our running broker (stale pid file removed)"
    fi
    rm -f "$f"
  done
}

# fail MESSAGE NODE... -> print the logs of the given nodes, stop what we started, exit 1
fail() {
  local msg="$1" n
  shift
  warn "error: $msg"
  for n in "$@"; do
    [ -f "$KAFKA_RUN/node$n.log" ] && { warn "---- last lines of $KAFKA_RUN/node$n.log"; tail -n 40 "$KAFKA_RUN/node$n.log" >&2; }
  done
  stop_nodes >&2 || true
  exit 1
}

# wait_started N DEADLINE_SECONDS -> until node N logged "Kafka Server started" (KafkaRaftServer, INFO)
wait_started() {
  local n="$1" deadline="$2" pid
  pid="$(read_pid "$(pid_file "$n")")"
  until grep -q "Kafka Server started" "$KAFKA_RUN/node$n.log" 2>/dev/null; do
    pid_alive "$pid" || fail "kafka node$n (pid $pid) exited during startup" "$n"
    [ "$SECONDS" -lt "$deadline" ] || fail "kafka node$n not started after ${START_TIMEOUT}s" "$n"
    sleep 0.2
  done
}

start() {
  local nodes="${1:-1}" n t0 t_fetch cid props pid deadline py bootstrap
  case "$nodes" in 1 | 2) ;; *) die "start: node count must be 1 or 2 (got '$nodes')" ;; esac

  # Already running? Then there is nothing to do (idempotent). Stale pid files are cleaned up.
  local running=()
  for n in 1 2; do
    [ -f "$(pid_file "$n")" ] || continue
    if node_running "$n"; then
      running+=("node$n pid $(read_pid "$(pid_file "$n")")")
    else
      log "kafka node$n: removing stale pid file (pid $(read_pid "$(pid_file "$n")") is not our running broker)"
      rm -f "$(pid_file "$n")"
    fi
  done
  if [ "${#running[@]}" -gt 0 ]; then
    log "kafka already running (${running[*]}) at $(cat "$KAFKA_RUN/bootstrap" 2>/dev/null || bootstrap_for 1)"
    [ "${#running[@]}" -eq "$nodes" ] || warn "note: ${#running[@]} node(s) running, $nodes requested: run 'stop' first to change the node count"
    return 0
  fi

  # Someone else (a developer's own Kafka, another checkout) on our ports? Refuse rather than clash.
  local ports=("$PORT1" "$CONTROLLER_PORT")
  [ "$nodes" = 2 ] && ports+=("$PORT2")
  for p in "${ports[@]}"; do
    port_in_use "$p" && die "port 127.0.0.1:$p is already in use (set ANONSTREAM_KAFKA_PORT / _CONTROLLER_PORT / _PORT2)"
  done

  t0="$(now)"
  if ! jars_cached; then
    fetch
  fi
  ensure_java
  t_fetch="$(elapsed "$t0")"

  # Fresh cluster every time: wipe data, logs and generated configs of the previous run.
  local t1
  t1="$(now)"
  rm -rf "$KAFKA_RUN"
  mkdir -p "$KAFKA_RUN/data"

  # Cluster id: 16 random bytes, base64url without padding (what `StorageTool random-uuid` prints);
  # generated in Python to save one JVM start. Kafka ids never start with '-'.
  py="$(pick_python)"
  cid="$("$py" -c 'import base64, uuid
while True:
    s = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    if not s.startswith("-"):
        print(s); break')"
  echo "$cid" >"$KAFKA_RUN/cluster.id"

  # Format every node's log dir with the same cluster id (static voters => no --standalone) ...
  for n in $(seq 1 "$nodes"); do
    props="$(write_props "$n" "$nodes")"
    java "${TOOL_JVM_OPTS[@]}" -cp "$CP" kafka.tools.StorageTool format -t "$cid" -c "$props" \
      >"$KAFKA_RUN/format-node$n.log" 2>&1 ||
      { cat "$KAFKA_RUN/format-node$n.log" >&2; die "StorageTool format failed for node$n"; }
  done

  local t_format
  t_format="$(elapsed "$t1")"

  # ... then launch them one after the other: node 2 (broker only) needs node 1's controller, and
  # two JVMs warming up at once on a 2-core machine are slower than one after the other.
  # Ready = every node logged "Kafka Server started" AND a metadata round trip sees all brokers.
  deadline=$((SECONDS + START_TIMEOUT))
  for n in $(seq 1 "$nodes"); do
    nohup java "${HEAP_OPTS[@]}" "${JVM_OPTS[@]}" "${BROKER_LOG_OPTS[@]}" -cp "$CP" \
      kafka.Kafka "$KAFKA_RUN/node$n.properties" >"$KAFKA_RUN/node$n.log" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$(pid_file "$n")"
    log "kafka node$n starting (pid $pid, 127.0.0.1:$(node_port "$n"), log $KAFKA_RUN/node$n.log)"
    wait_started "$n" "$deadline"
  done
  bootstrap="$(bootstrap_for "$nodes")"
  "$py" "$DEPLOY_DIR/wait_for_kafka.py" "$bootstrap" "$nodes" "$((deadline - SECONDS > 5 ? deadline - SECONDS : 5))" ||
    fail "metadata round trip to $bootstrap failed" $(seq 1 "$nodes")
  echo "$bootstrap" >"$KAFKA_RUN/bootstrap"

  log "kafka $KAFKA_VERSION up: $nodes node(s), bootstrap $bootstrap, cluster id $cid"
  log "kafka startup time: $(elapsed "$t1")s (format ${t_format}s + broker start + metadata check); total incl. fetch/check: $(elapsed "$t0")s (fetch/check ${t_fetch}s)"
}

stop() {
  if ! ls "$KAFKA_RUN"/node*.pid >/dev/null 2>&1; then
    log "kafka: not running (no pid files in $KAFKA_RUN)"
    return 0
  fi
  stop_nodes
  # The data dir is wiped on every start anyway; drop it now (a SIGKILLed broker would need recovery).
  rm -rf "$KAFKA_RUN/data" "$KAFKA_RUN/bootstrap"
}

status() {
  local n f pid rc=3 dead=0
  for n in 1 2; do
    f="$(pid_file "$n")"
    [ -f "$f" ] || continue
    pid="$(read_pid "$f")"
    if node_running "$n"; then
      log "kafka node$n: running (pid $pid, 127.0.0.1:$(node_port "$n"))"
      rc=0
    else
      log "kafka node$n: NOT running (stale pid file, pid ${pid:-?})"
      dead=1
    fi
  done
  if [ "$dead" = 1 ]; then return 1; fi
  if [ "$rc" = 3 ]; then log "kafka: not running"; else log "kafka bootstrap: $(cat "$KAFKA_RUN/bootstrap" 2>/dev/null || echo '? (still starting)')"; fi
  return "$rc"
}

usage() { sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

# Sourced (deploy/secure-local.sh reuses fetch, the JVM options and the node helpers): no command.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

case "${1:-}" in
  fetch) fetch ;;
  start) start "${2:-1}" ;;
  stop) stop ;;
  status) status ;;
  -h | --help | help) usage ;;
  *) usage >&2; exit 2 ;;
esac
