#!/usr/bin/env bash
# System packages the test suites need beyond Node, PostgreSQL and Redis:
# Chromium for the headless check of /docs (test/http/docs.test.ts skips without it),
# PgBouncer, HAProxy and pg_auto_failover for npm run test:system -- topology (its tests skip without them),
# RE2 and g++ for test/contract/patterns.test.ts (the spec's patterns checked in RE2 too),
# Podman and debootstrap for npm run image and npm run test:system -- image (the list is
# in scripts/image/podman.sh), Java (Specmatic's jar) and curl for npm run contract -- testers,
# Prometheus for promtool (test/observability/prometheusRules.test.ts) and the live alerts of the topology suite;
# Alertmanager (amtool) and the blackbox exporter for test/rules/alertmanager.test.ts and the topology's alert drill.
# Installs only what is missing; apt-get update runs only when something is. No package starts its
# daemon: Prometheus's would listen on :9090, Alertmanager's on :9093 (the tests start private ones on free ports).
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v pgbouncer >/dev/null || missing+=(pgbouncer)
command -v haproxy >/dev/null || missing+=(haproxy)
command -v pg_autoctl >/dev/null || missing+=(pg-auto-failover-cli)
[ -f /usr/share/postgresql/15/extension/pgautofailover.control ] || missing+=(postgresql-15-auto-failover)
[ -f /usr/include/re2/re2.h ] || missing+=(libre2-dev)
command -v g++ >/dev/null || missing+=(g++)
command -v java >/dev/null || missing+=(openjdk-17-jre-headless)
command -v curl >/dev/null || missing+=(curl)
{ command -v promtool >/dev/null && command -v prometheus >/dev/null; } || missing+=(prometheus)
{ command -v amtool >/dev/null && command -v prometheus-alertmanager >/dev/null; } || missing+=(prometheus-alertmanager)
command -v prometheus-blackbox-exporter >/dev/null || missing+=(prometheus-blackbox-exporter)
# shellcheck source=scripts/image/podman.sh
. "$(dirname "$0")/image/podman.sh"
mapfile -t -O "${#missing[@]}" missing < <(image_missing_packages)
if [ "${#missing[@]}" -eq 0 ]; then
  echo "system packages present: chromium, pgbouncer, haproxy, pg_auto_failover, libre2-dev, g++, java, curl, prometheus, prometheus-alertmanager, prometheus-blackbox-exporter, and what scripts/image needs"
  exit 0
fi
echo "installing with apt-get: ${missing[*]}"
# invoke-rc.d asks policy-rc.d whether a package may start its service: 101 says no. One is put in
# place for the install only, where the machine has none.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# Written by scripts/ci-system-deps.sh for one apt-get install: no service starts.\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
