#!/usr/bin/env bash
# System packages the test suites need beyond Node, PostgreSQL and Redis:
# Chromium for the headless check of /docs (test/docs.test.ts skips without it),
# PgBouncer, HAProxy and pg_auto_failover for npm run test:topology (its tests skip without them).
# Installs only what is missing; apt-get update runs only when something is.
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v pgbouncer >/dev/null || missing+=(pgbouncer)
command -v haproxy >/dev/null || missing+=(haproxy)
# pg_auto_failover for the failover topology (npm run test:topology, test/topology/failover.test.ts).
command -v pg_autoctl >/dev/null || missing+=(pg-auto-failover-cli)
[ -f /usr/share/postgresql/15/extension/pgautofailover.control ] || missing+=(postgresql-15-auto-failover)
if [ "${#missing[@]}" -eq 0 ]; then
  echo "system packages present: chromium, pgbouncer, haproxy, pg_auto_failover"
  exit 0
fi
echo "installing with apt-get: ${missing[*]}"
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
