#!/usr/bin/env bash
# npm run contract -- gate: lint the spec, refuse breaking changes against the
# released contract, a changed contract without a new version and its
# CHANGELOG.md section, and generated types that drifted from the spec.
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
echo "contract gate passed"
