#!/usr/bin/env bash
# npm run contract -- gate: lint the spec, refuse breaking changes against the
# released contract, a changed contract without a new version as large as
# its changes need (for the wire and the client's source) and its
# CHANGELOG.md section, generated types that drifted from the spec, and
# migrations that lock or break the previous release (npm run check:migrations).
# The property-based conformance suite runs with the tests (npm test).
set -euo pipefail
cd "$(dirname "$0")/.."
export REDOCLY_SUPPRESS_UPDATE_NOTICE=true

echo "== contract lint"
npm run --silent contract -- lint
echo "== contract breaking"
npm run --silent contract -- breaking
echo "== version and changelog"
npx tsx scripts/contract/version.ts
echo "== generate --check"
npm run --silent generate -- --check
echo "== migrations since the previous release (npm run check:migrations)"
npm run --silent check:migrations
echo "contract gate passed"
