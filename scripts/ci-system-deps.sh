#!/usr/bin/env bash
# System packages the test suites need beyond Node, PostgreSQL and Redis:
# Chromium for the headless check of /docs (test/docs.test.ts skips without it),
# PgBouncer and HAProxy for npm run test:topology (its tests skip without them),
# RE2 and g++ for test/contract/patterns.test.ts (the spec's patterns checked in RE2 too).
# Installs only what is missing; apt-get update runs only when something is.
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v pgbouncer >/dev/null || missing+=(pgbouncer)
command -v haproxy >/dev/null || missing+=(haproxy)
[ -f /usr/include/re2/re2.h ] || missing+=(libre2-dev)
command -v g++ >/dev/null || missing+=(g++)
if [ "${#missing[@]}" -eq 0 ]; then
  echo "system packages present: chromium, pgbouncer, haproxy, libre2-dev, g++"
  exit 0
fi
echo "installing with apt-get: ${missing[*]}"
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
