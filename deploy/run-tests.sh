#!/usr/bin/env bash
# `make test`: start Redis, a Redis Cluster and Kafka (deploy/infra.sh), run unit + integration tests against them
# (the Redis store tests run on both Redis and the cluster: ANONSTREAM_REDIS_CLUSTER_NODES), stop them again.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
cd "$ROOT"

"$HERE/infra.sh" up > .run-test-env || { echo "infrastructure did not start" >&2; exit 1; }
trap '"$HERE/secure-local.sh" down >&2 || true; "$HERE/infra.sh" down >&2 || true; rm -f "$ROOT/.run-test-env"' EXIT
# The secured broker + Redis of tests/integration/test_security.py (SASL_SSL/SCRAM, TLS + ACL user). Its
# environment (with the passwords) stays in its own mode-600 file; every other test keeps the plain pair.
if "$HERE/secure-local.sh" up >/dev/null; then
  ANONSTREAM_SECURE_ENV_FILE="$("$HERE/secure-local.sh" env-file)"
  export ANONSTREAM_SECURE_ENV_FILE
else
  echo "secured Kafka/Redis did not start: tests/integration/test_security.py will fail" >&2
fi
# shellcheck disable=SC1091
source .run-test-env
export ANONSTREAM_REQUIRE_INFRA=1   # integration tests fail (not skip) when the infrastructure is missing
.venv/bin/python -m pytest -q -p no:cacheprovider "$@" tests
