#!/usr/bin/env bash
# Fails when openapi.yaml uses a construct some machine refuses (generators/constructs.ts), or docs/constructs.md
# is not the matrix lib/constructs/ makes, or src/generated (api.ts, openapi.json, routes.json) is not what openapi.yaml generates now,
# or configValidator.js is not what src/config/schema.ts compiles to, or docs/configuration.md is not
# the reference its descriptions make, or the TypeScript client's types, methods, version, error table and
# README table of methods are not what openapi.yaml makes (clients/typescript), or a fact the hand-written
# text states is not what openapi.yaml says (generators/docFacts.ts: the version, the operations and scopes,
# the changelog's entries), or the objectives' rules, dashboard panels and docs/alerts.md table are not what
# x-slo in openapi.yaml makes, or the alerts, their promtool tests and the load-shedding facts of the docs are
# not what the code says (generators/objectives.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
# First, and before anything else is compared: a construct some machine refuses (docs/constructs.md).
freshMatrix=$(mktemp -d)
trap 'rm -rf "$freshMatrix"' EXIT
npx --no-install tsx generators/constructs.ts openapi.yaml "$freshMatrix"
if ! diff -u docs/constructs.md "$freshMatrix/docs/constructs.md" >&2; then
  echo "docs/constructs.md is out of step with lib/constructs/catalogue.ts: run 'npm run generate' and commit the result." >&2
  exit 1
fi
rm -rf "$freshMatrix"
fresh=$(mktemp --suffix=.ts)
freshSpec=$(mktemp --suffix=.json)
freshRoutes=$(mktemp --suffix=.json)
freshConfig=$(mktemp --suffix=.js)
freshReference=$(mktemp --suffix=.md)
freshPublishedJson=$(mktemp --suffix=.json)
freshPublishedYaml=$(mktemp --suffix=.yaml)
trap 'rm -f "$fresh" "$freshSpec" "$freshRoutes" "$freshConfig" "$freshReference" "$freshPublishedJson" "$freshPublishedYaml"' EXIT
npx --no-install tsx generators/apiTypes.ts openapi.yaml "$fresh" || {
  echo "the types of openapi.yaml could not be generated (generators/apiTypes.ts)" >&2
  exit 1
}
if ! diff -u src/generated/api.ts "$fresh" >&2; then
  echo "src/generated/api.ts is out of step with openapi.yaml: run 'npm run generate' and commit the result." >&2
  exit 1
fi
npx --no-install tsx generators/spec.ts "$freshSpec" "$freshRoutes" "$freshPublishedJson" "$freshPublishedYaml"
npx --no-install tsx generators/config.ts "$freshConfig" "$freshReference"
for pair in "openapi.json:$freshSpec" "routes.json:$freshRoutes" "published.json:$freshPublishedJson" \
  "published.yaml:$freshPublishedYaml" "configValidator.js:$freshConfig"; do
  if ! diff -u "src/generated/${pair%%:*}" "${pair#*:}" >&2; then
    echo "src/generated/${pair%%:*} is out of step with openapi.yaml or src/config/schema.ts: run 'npm run generate' and commit the result." >&2
    exit 1
  fi
done
freshClient=$(mktemp -d)
trap 'rm -rf "$fresh" "$freshSpec" "$freshRoutes" "$freshConfig" "$freshReference" "$freshPublishedJson" "$freshPublishedYaml" "$freshClient"' EXIT
npx --no-install tsx generators/client.ts "$fresh" "$freshClient"
for file in src/generated package.json README.md; do
  if ! diff -ru "clients/typescript/$file" "$freshClient/$file" >&2; then
    echo "clients/typescript/$file is out of step with openapi.yaml (types, methods, info.version): run 'npm run generate' and commit the result." >&2
    exit 1
  fi
done
if ! diff -u docs/configuration.md "$freshReference" >&2; then
  echo "docs/configuration.md is out of step with src/config/schema.ts: run 'npm run generate' and commit the result." >&2
  exit 1
fi
freshDocs=$(mktemp -d)
trap 'rm -rf "$fresh" "$freshSpec" "$freshRoutes" "$freshConfig" "$freshReference" "$freshClient" "$freshDocs"' EXIT
npx --no-install tsx generators/docFacts.ts "$freshDocs"
for file in openapi.yaml docs/api.md docs/errors.md CHANGELOG.md README.md clients/typescript/README.md package.json package-lock.json src/generated/release.json; do
  if ! diff -u "$file" "$freshDocs/$file" >&2; then
    echo "$file states another version, list of operations and scopes, or changelog entries than openapi.yaml: run 'npm run generate' and commit the result." >&2
    exit 1
  fi
done
freshObjectives=$(mktemp -d)
trap 'rm -rf "$fresh" "$freshSpec" "$freshRoutes" "$freshConfig" "$freshReference" "$freshClient" "$freshDocs" "$freshObjectives"' EXIT
npx --no-install tsx generators/objectives.ts "$freshObjectives"
for file in deploy/prometheus/objectives.yml deploy/prometheus/alerts.yml deploy/prometheus/objectives.test.yml deploy/prometheus/alerts.test.yml deploy/prometheus/objectives-pages.test.yml deploy/prometheus/prometheus.yml deploy/blackbox/blackbox.yml deploy/grafana/dashboard.json docs/alerts.md docs/operations.md; do
  if ! diff -u "$file" "$freshObjectives/$file" >&2; then
    echo "$file is out of step with the objectives (x-slo) in openapi.yaml or the load-shedding constants: run 'npm run generate' and commit the result." >&2
    exit 1
  fi
done
echo "generated types, spec JSON and route table match openapi.yaml; the READMEs state its version; the objectives' rules, the alerts, their promtool tests, dashboard panels and table match its x-slo and the code's constants; the config validator and docs/configuration.md match its schema"
