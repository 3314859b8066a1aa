#!/usr/bin/env bash
# System packages the test suite needs beyond Node, PostgreSQL and Redis:
# Chromium for the headless check of /docs (test/docs.test.ts skips without it).
set -euo pipefail
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
