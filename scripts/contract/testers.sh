#!/usr/bin/env bash
# npm run contract -- testers [specmatic|respect]: the contract testers
# consumers run, against the service (docs/contract.md, "Testers consumers run").
#   specmatic  Specmatic's contract test in its default strict mode: the
#              spec's named examples and openapi_examples/, no generated tests
#   respect    Redocly Respect runs every workflow of pets.arazzo.yaml
#   (none)     both
# With BASE_URL (the API's base, e.g. https://host/v1) and API_KEY set, they
# run against that deployment, which must hold an animal with id 1 (the spec's
# `found` example). Otherwise this builds and starts the service on a free
# port with the embedded database in a temporary DATA_DIR and a bootstrap key,
# adds that animal, and stops the service afterwards.
# Exits non-zero when any test or workflow fails, or none ran.
set -euo pipefail
cd "$(dirname "$0")/../.."
PATH="$PWD/node_modules/.bin:$PATH"
export REDOCLY_SUPPRESS_UPDATE_NOTICE=true REDOCLY_TELEMETRY=off

which=${1:-all}
case $which in
  all | specmatic | respect) ;;
  *)
    echo "usage: npm run contract -- testers [specmatic|respect]" >&2
    exit 2
    ;;
esac

scratch=$(mktemp -d)
server_pid=
stop() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -INT "$server_pid"
    wait "$server_pid" || true
  fi
  rm -rf "$scratch"
}
trap stop EXIT

start_service() {
  npm run build --silent
  local port
  port=$(node -e "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
  API_KEY=$(node -e "console.log(require('node:crypto').randomBytes(24).toString('base64url'))")
  BASE_URL="http://127.0.0.1:$port/v1"
  PORT=$port DATA_DIR="$scratch/data" BOOTSTRAP_API_KEY=$API_KEY LOG_LEVEL=warn METRICS_PORT=off \
    node dist/server.js >"$scratch/server.log" 2>&1 &
  server_pid=$!
  local ready=
  for _ in $(seq 1 240); do
    if curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null; then
      ready=yes
      break
    fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.5
  done
  if [ -z "$ready" ]; then
    echo "the service did not become ready:" >&2
    cat "$scratch/server.log" >&2
    exit 1
  fi
  # The spec's `found` example asks for animal 1: the first one a store adds.
  curl -fsS -o /dev/null -X POST "$BASE_URL/pets" -H "Authorization: Bearer $API_KEY" \
    -H 'Content-Type: application/json' --data '{"name":"Rex","categoryId":3}'
  echo "== the service at $BASE_URL (embedded database in $scratch/data)"
}

# Specmatic exits 0 even when a test fails: its closing summary is the verdict.
# It runs a copy of the spec without the operations it must not send
# (scripts/contract/specmaticSpec.ts prints each with the reason).
run_specmatic() {
  echo "== specmatic test openapi.yaml (strict: named examples and openapi_examples/ only)"
  local log="$scratch/specmatic.log" summary total passed
  tsx scripts/contract/specmaticSpec.ts "$scratch/specmatic"
  (cd "$scratch" && bearerAuth=$API_KEY specmatic test "$scratch/specmatic/openapi.yaml" --testBaseURL="$BASE_URL") 2>&1 |
    tee "$log" | grep -E '^Scenario: |^ *Skipping Scenario|^Tests run:|^WARNING: Ignoring' || true
  summary=$(grep -E '^Tests run: ' "$log" | tail -n 1)
  total=$(sed -nE 's/^Tests run: ([0-9]+).*/\1/p' <<<"$summary")
  passed=$(sed -nE 's/.*Successes: ([0-9]+).*/\1/p' <<<"$summary")
  if [ -z "$total" ] || [ "$total" -eq 0 ] || [ "$passed" != "$total" ]; then
    echo "FAILED: specmatic: ${summary:-no summary}" >&2
    grep -A 12 -E '^Unsuccessful Scenarios|FAILED$' "$log" >&2 || true
    return 1
  fi
  if grep -q '^WARNING: Ignoring' "$log"; then
    echo "FAILED: specmatic ignored a named example that has no partner of the same name" >&2
    return 1
  fi
  echo "specmatic: $passed of $total tests passed"
}

run_respect() {
  echo "== redocly respect pets.arazzo.yaml"
  redocly respect pets.arazzo.yaml --server "pets=$BASE_URL" --input "apiKey=$API_KEY"
}

if [ -n "${BASE_URL:-}" ] && [ -n "${API_KEY:-}" ]; then
  echo "== the deployment at $BASE_URL"
else
  start_service
fi
status=0
if [ "$which" != respect ]; then run_specmatic || status=1; fi
if [ "$which" != specmatic ]; then run_respect || status=1; fi
exit "$status"
