#!/usr/bin/env bash
# The README's commands as a user runs them, on a Node.js and an npm that this
# machine does not have: usage: scripts/ci-fresh-install.sh <node major> <npm major>
#
# Node.js (node-<platform>-<arch>, the official binary) and npm come from the
# npm registry. The tracked files of this tree are copied to a temp dir (what
# a clone has; this tree's node_modules is untouched), then there:
#   npm ci      must install without a warning about install scripts (allowScripts),
#   npm start   must answer 200 on /healthz and on GET /v1/pets with the key it prints,
#               and stop on SIGTERM,
#   npm test -- runtime   the files a Node.js line can change (scripts/tests/select.ts); ends with tap's
#               summary line, which .ci/run adds up.
# Exits non-zero, saying why, when any step fails, including fetching Node.js or npm.
set -euo pipefail
node_major=${1:?node major}
npm_major=${2:?npm major}
repo=$(cd "$(dirname "$0")/.." && pwd)

fail() {
  echo "FAILED (Node.js $node_major, npm $npm_major): $*" >&2
  exit 1
}
command -v curl >/dev/null || fail "curl is missing"

work=$(mktemp -d)
# Readable by the servers the tests start as user postgres (PgBouncer reads deploy/), as a clone would be.
chmod 755 "$work"
. "$repo/scripts/ci-node-and-service.sh"
cleanup() {
  stop_service || true
  rm -rf "$work"
}
trap cleanup EXIT

use_node_from_registry "$node_major" "$npm_major"
echo "== fresh copy on Node.js $(node --version), npm $(npm --version)"

mkdir "$work/app"
(cd "$repo" && git ls-files -z | tar --null -T - -c) | tar -x -C "$work/app"
cd "$work/app"

npm ci --no-audit --no-fund 2>&1 | tee "$work/ci.log" || fail "npm ci failed"
if grep -iE 'install.scripts|scripts? blocked' "$work/ci.log"; then
  fail "npm ci warned about install scripts: review them in package.json's allowScripts"
fi

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
start_service "$port"
status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" "http://127.0.0.1:$port/v1/pets")
[ "$status" = 200 ] || fail "GET /v1/pets with the printed key answered $status"
echo "npm start: /healthz 200 after ${SECONDS}s of this script, GET /v1/pets with the printed key 200"
stop_service || fail "npm start did not stop within 30 s of SIGTERM"

npm test -- runtime
