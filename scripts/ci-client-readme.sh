#!/usr/bin/env bash
# The TypeScript client's README as a new user follows it: its "Install" and "First call" sections run as
# written, on a Node.js and an npm from the npm registry, against the service this tree serves.
# usage: scripts/ci-client-readme.sh [node version or major (24)] [npm major (12)] [README (clients/typescript/README.md)]
# (a version, 20.19.0, tests the oldest Node.js the engines fields allow; a major, its newest release)
#
# The service: npm start in this tree (it builds first), on the README's port 3000, with a temp DATA_DIR;
# the key it prints is the reader's PETS_API_KEY. The reader: an empty folder made with `npm init -y`, next
# to this tree as ../pet-store-service (where the README says the clone is). There the README's blocks run in
# order (scripts/docs/readmeSteps.ts: a sh block as it stands, a ts block saved under the file name its first
# line gives) with bash -e. Exits non-zero, saying why, when any step fails.
set -euo pipefail
node_version=${1:-24}
npm_major=${2:-12}
repo=$(cd "$(dirname "$0")/.." && pwd)
readme=$(realpath "${3:-$repo/clients/typescript/README.md}")
# The README's PETS_BASE_URL.
readonly port=3000
# npm start builds (tsc) first; a loaded 2-core machine took about a minute.
readonly start_timeout_s=300

fail() {
  echo "FAILED (client README, Node.js $node_version, npm $npm_major): $*" >&2
  exit 1
}
command -v curl >/dev/null || fail "curl is missing"

work=$(mktemp -d)
server_pid=
# Stops the service's session (npm, sh, node) and waits for it to drain, so that port 3000 is free again.
stop_service() {
  [ -n "$server_pid" ] || return 0
  kill -TERM -- "-$server_pid" 2>/dev/null || true
  for _ in $(seq 1 60); do
    kill -0 -- "-$server_pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -KILL -- "-$server_pid" 2>/dev/null || true
  server_pid=
}
cleanup() {
  stop_service
  rm -rf "$work"
}
trap cleanup EXIT

# The steps, read with this tree's tools before PATH changes.
(cd "$repo" && npx --no-install tsx scripts/docs/readmeSteps.ts "$readme" Install "First call") >"$work/steps.sh" ||
  fail "could not read the steps of $readme"

platform_package=$(node -p '`node-${process.platform}-${process.arch}`')
if ! npm install --no-save --no-audit --no-fund --prefix "$work/tools" \
  "$platform_package@$node_version" "npm@$npm_major" >"$work/tools.log" 2>&1; then
  cat "$work/tools.log" >&2
  fail "could not install $platform_package@$node_version and npm@$npm_major from the npm registry"
fi
export PATH="$work/tools/node_modules/$platform_package/bin:$work/tools/node_modules/.bin:$PATH"
case "$(node -p process.versions.node)." in
  "$node_version".*) ;;
  *) fail "node on PATH is $(node --version), not $node_version" ;;
esac
[ "$(npm --version | cut -d. -f1)" = "$npm_major" ] || fail "npm on PATH is $(npm --version)"
echo "== the client's README as written, on Node.js $(node --version), npm $(npm --version)"

if curl -s -o /dev/null "http://127.0.0.1:$port/"; then fail "port $port is taken: the README's PETS_BASE_URL needs it"; fi
# Its own session, so that the signal reaches npm, sh and node together.
cd "$repo"
DATA_DIR="$work/data" PORT=$port METRICS_PORT=off setsid npm start >"$work/start.log" 2>&1 &
server_pid=$!
deadline=$((SECONDS + start_timeout_s))
until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")" = 200 ]; do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    cat "$work/start.log" >&2
    fail "npm start exited before answering"
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    cat "$work/start.log" >&2
    fail "npm start: no 200 on /healthz within ${start_timeout_s}s"
  fi
  sleep 1
done
key=$(grep -oE 'pets_[A-Za-z0-9_-]{43,49}' "$work/start.log" | head -n 1 || true)
[ -n "$key" ] || fail "npm start printed no API key"

ln -s "$repo" "$work/pet-store-service"
mkdir "$work/my-project"
cd "$work/my-project"
npm init -y >/dev/null
echo "npm init -y wrote \"type\": $(node -p 'JSON.stringify(require("./package.json").type)')"
cat "$work/steps.sh"
echo "== running them in $PWD"
if ! env -u PETS_BASE_URL PETS_API_KEY="$key" bash "$work/steps.sh"; then
  echo "== the service's log" >&2
  tail -n 20 "$work/start.log" >&2
  fail "a step of $readme failed as written (above)"
fi
stop_service
echo "the client's README ran as written"
