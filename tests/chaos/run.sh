#!/usr/bin/env bash
# `make test-chaos`: the chaos suite (issue 13) on its own Kafka and Redis (deploy/infra.sh), stopped afterwards.
# Ports and run dir come from the usual ANONSTREAM_* variables (deploy/kafka-local.sh, deploy/redis-local.sh).
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
