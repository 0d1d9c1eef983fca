#!/usr/bin/env bash
# `make test`: start Redis and Kafka, run unit + integration tests against them, stop them again.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
cd "$ROOT"

"$HERE/infra.sh" up > .run-test-env || { echo "infrastructure did not start" >&2; exit 1; }
trap '"$HERE/infra.sh" down >&2 || true; rm -f "$ROOT/.run-test-env"' EXIT
# shellcheck disable=SC1091
source .run-test-env
export ANONSTREAM_REQUIRE_INFRA=1   # integration tests fail (not skip) when the infrastructure is missing
.venv/bin/python -m pytest -q -p no:cacheprovider "$@" tests
