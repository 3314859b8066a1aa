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
#   npm test    ends with tap's summary line, which .ci/run adds up.
# Exits non-zero, saying why, when any step fails, including fetching Node.js or npm.
set -euo pipefail
node_major=${1:?node major}
npm_major=${2:?npm major}
repo=$(cd "$(dirname "$0")/.." && pwd)

# npm start builds (tsc) first; a loaded 2-core machine took about a minute.
readonly start_timeout_s=300

fail() {
  echo "FAILED (Node.js $node_major, npm $npm_major): $*" >&2
  exit 1
}
command -v curl >/dev/null || fail "curl is missing"

work=$(mktemp -d)
# Readable by the servers the tests start as user postgres (PgBouncer reads deploy/), as a clone would be.
chmod 755 "$work"
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL -- "-$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

platform_package=$(node -p '`node-${process.platform}-${process.arch}`')
if ! npm install --no-save --no-audit --no-fund --prefix "$work/tools" \
  "$platform_package@$node_major" "npm@$npm_major" >"$work/tools.log" 2>&1; then
  cat "$work/tools.log" >&2
  fail "could not install $platform_package@$node_major and npm@$npm_major from the npm registry"
fi
export PATH="$work/tools/node_modules/$platform_package/bin:$work/tools/node_modules/.bin:$PATH"
[ "$(node -p 'process.versions.node.split(".")[0]')" = "$node_major" ] || fail "node on PATH is $(node --version)"
[ "$(npm --version | cut -d. -f1)" = "$npm_major" ] || fail "npm on PATH is $(npm --version)"
echo "== fresh copy on Node.js $(node --version), npm $(npm --version)"

mkdir "$work/app"
(cd "$repo" && git ls-files -z | tar --null -T - -c) | tar -x -C "$work/app"
cd "$work/app"

npm ci --no-audit --no-fund 2>&1 | tee "$work/ci.log" || fail "npm ci failed"
if grep -iE 'install.scripts|scripts? blocked' "$work/ci.log"; then
  fail "npm ci warned about install scripts: review them in package.json's allowScripts"
fi

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
# Its own session, so that the signal reaches npm, sh and node together.
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
status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" "http://127.0.0.1:$port/v1/pets")
[ "$status" = 200 ] || fail "GET /v1/pets with the printed key answered $status"
echo "npm start: /healthz 200 after ${SECONDS}s of this script, GET /v1/pets with the printed key 200"
kill -TERM -- "-$server_pid"
wait "$server_pid" || true
server_pid=

npm test
