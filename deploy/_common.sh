# shellcheck shell=bash
# Helpers shared by deploy/kafka-local.sh and deploy/redis-local.sh (sourced, not executed).
#
# Conventions:
#   * processes are only ever signalled by a PID we recorded ourselves (pid files under the run dir),
#     never by a name pattern: other people run their own Kafka/Redis on the same machines;
#   * before signalling a recorded PID we check that its command line still mentions our own
#     config/run path, so a recycled PID of an unrelated process is never touched.

DEPLOY_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$DEPLOY_DIR/.." && pwd)"
# shellcheck disable=SC2034 # used by the sourcing scripts
RUN_ROOT="${ANONSTREAM_RUN_DIR:-$REPO_DIR/.run}"

log() { printf '%s\n' "$*"; }
warn() { printf '%s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Wall clock with sub-second resolution (bash >= 5 has EPOCHREALTIME; fall back to date).
now() {
  if [ -n "${EPOCHREALTIME:-}" ]; then printf '%s\n' "${EPOCHREALTIME/,/.}"; else date +%s.%N; fi
}
# elapsed START -> seconds since START with one decimal
elapsed() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }

# Python used for probes: ANONSTREAM_PYTHON, else the repo venv, else python3 from PATH.
pick_python() {
  if [ -n "${ANONSTREAM_PYTHON:-}" ]; then
    printf '%s\n' "$ANONSTREAM_PYTHON"
  elif [ -x "$REPO_DIR/.venv/bin/python" ]; then
    printf '%s\n' "$REPO_DIR/.venv/bin/python"
  else
    printf '%s\n' python3
  fi
}

# port_in_use PORT -> true if something accepts TCP connections on 127.0.0.1:PORT
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pid_cmdline PID -> the process' command line (NUL separators turned into spaces), empty if gone
pid_cmdline() {
  if [ -r "/proc/$1/cmdline" ]; then
    tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null || true
  else
    ps -o command= -p "$1" 2>/dev/null || true
  fi
}

# pid_alive PID -> true if the process exists and is not a zombie (kill -0 succeeds on zombies,
# which matters while the starting shell is still the parent of a process that just died).
pid_alive() {
  local pid="$1" state=""
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  if [ -r "/proc/$pid/stat" ]; then
    state="$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$pid/stat" 2>/dev/null || true)"
  else
    state="$(ps -o stat= -p "$pid" 2>/dev/null || true)"
  fi
  [ "${state:0:1}" != "Z" ]
}

# pid_is_ours PID MARKER -> alive and its command line contains MARKER (e.g. our config path)
pid_is_ours() {
  pid_alive "$1" || return 1
  case "$(pid_cmdline "$1")" in *"$2"*) return 0 ;; *) return 1 ;; esac
}

# read_pid FILE -> the PID recorded in FILE (empty if the file is missing or malformed)
read_pid() {
  local pid=""
  [ -f "$1" ] && read -r pid <"$1" 2>/dev/null || true
  case "$pid" in '' | *[!0-9]*) printf '' ;; *) printf '%s' "$pid" ;; esac
}

# stop_pid PID NAME [GRACE_S=30] -> SIGTERM, wait up to GRACE_S, then SIGKILL; waits until gone.
stop_pid() {
  local pid="$1" name="$2" grace="${3:-30}" t0
  pid_alive "$pid" || return 0
  t0="$(now)"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + grace))
  while pid_alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
  if pid_alive "$pid"; then
    warn "$name (pid $pid) still running ${grace}s after SIGTERM: sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while pid_alive "$pid"; do sleep 0.1; done
  fi
  log "$name stopped (pid $pid, $(elapsed "$t0")s)"
}

# apt_install PKG... -> install Debian packages (root, or via sudo when available)
apt_install() {
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found: install $* with your package manager"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to apt-get install $*"
    sudo=(sudo)
  fi
  log "installing $* (apt-get)..."
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
