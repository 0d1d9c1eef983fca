#!/usr/bin/env bash
# System packages, installed from Debian where missing.
#   deploy/system-deps.sh          the run time (`make setup`, hence `make demo`): WordNet only
#   deploy/system-deps.sh --test   also what the tests drive (`make test`, `make test-chaos`): prometheus, chromium
#
# Run time:
#   wordnet-base   WordNet 3.0 data files (/usr/share/wordnet): the English vocabulary the PII policy uses
#                  (shared/anonstream/pii/wordnet.py). Skipped when ANONSTREAM_WORDNET_DIR points at a WordNet
#                  "dict" directory.
# Tests only (--test):
#   prometheus     tests/integration/test_dashboards.py runs every Grafana panel's query
#                  (deploy/grafana/dashboards/) against a real Prometheus scraping the services.
#   chromium, chromium-driver
#                  tests/integration/test_dashboards.py loads the audit service's built-in
#                  dashboard in headless Chromium (Selenium, the system chromedriver).
# Kafka and Redis are not here: deploy/kafka-local.sh and deploy/redis-local.sh fetch/install them when started.
set -euo pipefail

# shellcheck source=deploy/_common.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/_common.sh"

wordnet_present() {
  [ -n "${ANONSTREAM_WORDNET_DIR:-}" ] && [ -f "$ANONSTREAM_WORDNET_DIR/data.noun" ] && return 0
  [ -f /usr/share/wordnet/data.noun ]
}

if ! wordnet_present; then
  apt_install wordnet-base
  wordnet_present || die "WordNet data not found after installing wordnet-base"
fi

case "${1:-}" in
  "") exit 0 ;;
  --test) ;;
  *) die "usage: $0 [--test]" ;;
esac

command -v prometheus >/dev/null 2>&1 || apt_install --no-install-recommends prometheus
if ! { command -v chromium && command -v chromedriver; } >/dev/null 2>&1; then
  apt_install --no-install-recommends chromium chromium-driver
fi
