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

fail() {
  echo "FAILED (client README, Node.js $node_version, npm $npm_major): $*" >&2
  exit 1
}
command -v curl >/dev/null || fail "curl is missing"

work=$(mktemp -d)
. "$repo/scripts/ci-node-and-service.sh"
cleanup() {
  stop_service || true
  rm -rf "$work"
}
trap cleanup EXIT

# The steps, read with this tree's tools before PATH changes.
(cd "$repo" && npx --no-install tsx scripts/docs/readmeSteps.ts "$readme" Install "First call") >"$work/steps.sh" ||
  fail "could not read the steps of $readme"

use_node_from_registry "$node_version" "$npm_major"
echo "== the client's README as written, on Node.js $(node --version), npm $(npm --version)"

if curl -s -o /dev/null "http://127.0.0.1:$port/"; then fail "port $port is taken: the README's PETS_BASE_URL needs it"; fi
cd "$repo"
start_service "$port"

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
stop_service || true
echo "the client's README ran as written"
