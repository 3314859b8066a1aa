#!/usr/bin/env bash
# The contract gate: lint the spec, refuse breaking changes against the
# released contract, a changed contract without a new version and its
# CHANGELOG.md section, and generated types that drifted from the spec.
# The property-based conformance suite runs with the tests (npm test).
set -euo pipefail
cd "$(dirname "$0")/.."
export REDOCLY_SUPPRESS_UPDATE_NOTICE=true

echo "== lint:spec"
npm run --silent lint:spec
echo "== check:breaking"
npm run --silent check:breaking
echo "== version and changelog"
npx tsx scripts/contract/version.ts
echo "== generate:check"
npm run --silent generate:check
echo "contract gate passed"
