#!/usr/bin/env bash
# Fails when src/generated/api.ts is not what openapi.yaml generates now.
set -euo pipefail
cd "$(dirname "$0")/.."
fresh=$(mktemp --suffix=.ts)
trap 'rm -f "$fresh"' EXIT
npx --no-install openapi-typescript openapi.yaml -o "$fresh" >/dev/null 2>&1 || {
  echo "openapi-typescript failed on openapi.yaml" >&2
  npx --no-install openapi-typescript openapi.yaml -o "$fresh"
  exit 1
}
if ! diff -u src/generated/api.ts "$fresh" >&2; then
  echo "src/generated/api.ts is out of step with openapi.yaml: run 'npm run generate' and commit the result." >&2
  exit 1
fi
echo "generated types match openapi.yaml"
