#!/usr/bin/env bash
# `make test-chaos`: the chaos suite (issues 13 and 28) on its own Kafka, Redis and Redis Cluster (deploy/infra.sh),
# stopped afterwards: one process per stage (test_chaos.py), then two per stage on the Redis Cluster (test_chaos_scale.py).
# Ports and run dir come from the usual ANONSTREAM_* variables (deploy/kafka-local.sh, deploy/redis-local.sh,
# deploy/redis-cluster-local.sh).
# Figures: benchmarks/results/reliability.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
ENV_FILE="$(mktemp)"
"$ROOT/deploy/infra.sh" up >"$ENV_FILE" || { echo "infrastructure did not start" >&2; exit 1; }
trap '"$ROOT/deploy/infra.sh" down >&2 || true; rm -f "$ENV_FILE"' EXIT
# shellcheck disable=SC1090
source "$ENV_FILE"
export ANONSTREAM_REQUIRE_INFRA=1 ANONSTREAM_CHAOS=1
.venv/bin/python -m pytest -q -p no:cacheprovider "$@" tests/chaos
