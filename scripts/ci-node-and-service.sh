# Sourced by scripts/ci-fresh-install.sh and scripts/ci-client-readme.sh: a Node.js and an npm from the npm
# registry, and `npm start` of a tree as a user runs it. The caller defines fail (prints why, exits 1) and
# work (its temp dir).

# npm start builds (tsc) first; a loaded 2-core machine took about a minute.
readonly start_timeout_s=300
server_pid=

# Installs node-<platform>-<arch>@$1 (the official binary) and npm@$2 under $work/tools and puts them first
# on PATH; fails unless node is that version (a major, or a whole version) and npm that major.
use_node_from_registry() {
  local node_version=$1 npm_major=$2 platform_package
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
