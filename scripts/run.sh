#!/usr/bin/env bash
# The npm scripts that take a choice: package.json names each group
# ("bench": "bash scripts/run.sh bench", ...), this file maps each choice to
# its command. usage: bash scripts/run.sh <group> [choice] [arguments...]
# --help lists a group's choices; a missing or unknown one lists them and exits 2.
set -euo pipefail
cd "$(dirname "$0")/.."
PATH="$PWD/node_modules/.bin:$PATH"

group=${1:-}
if [ $# -gt 0 ]; then shift; fi
choice=${1:-}
if [ $# -gt 0 ]; then shift; fi

# What Prettier formats and checks.
prettier_paths=(src test lib generators bench scripts deploy clients '*.js' package.json tsconfig.json .prettierrc.json .dependency-cruiser.json)

# Builds unless dist/ is newer than every source of it: CI's lanes run a suite that builds beside tests that
# start dist/server.js, which a rebuild would rewrite under them.
build() {
  if [ -e dist/.tsbuildinfo ] &&
    [ -z "$(find src package.json tsconfig.json tsconfig.build.json -newer dist/.tsbuildinfo -print -quit)" ]; then
    return
  fi
  npm run build --silent
}

refuse() {
  local command="npm run $group"
  if [ "$group" = start ]; then command='npm start'; fi
  case $choice in
    --help | -h)
      printf '%s\n' "$usage"
      exit 0
      ;;
    '') printf '%s needs a choice\n%s\n' "$command" "$usage" >&2 ;;
    *) printf '%s: unknown choice %s\n%s\n' "$command" "$choice" "$usage" >&2 ;;
  esac
  exit 2
}

# A choice that takes no options refuses any, as the contract commands do: usage, exit 2.
no_options() {
  if [ $# -gt 0 ]; then
    printf 'npm run %s -- %s takes no options, got %s\n%s\n' "$group" "$choice" "$1" "$usage" >&2
    exit 2
  fi
}

case $group in
  start)
    usage='usage: npm start [-- --cluster]   (builds first)
  (none)     node dist/server.js: one process
  --cluster  node dist/cluster.js: WEB_CONCURRENCY processes (default one per core) on one port; needs DATABASE_URL'
    case $choice in
      '') exec node dist/server.js ;;
      --cluster) exec node dist/cluster.js ;;
    esac
    ;;
  lint)
    usage='usage: npm run lint [-- --fix | affected FILE...]
  (none)       typescript-eslint (with the layer rules of ARCHITECTURE.md), the import-circle check
               (dependency-cruiser, type-only imports included) and the Prettier check; changes nothing
  --fix        applies the fixes of eslint and Prettier (formatting), then fails on what is left
  affected F…  after the files F changed in a tree the whole lint passed on: eslint on those of them it lints
               and every module that imports one, directly or not (scripts/lint/affected.ts), the
               import-circle check, and Prettier on F; changes nothing'
    case $choice in
      '')
        eslint .
        depcruise src lib scripts generators test bench clients --config .dependency-cruiser.json --output-type err
        exec prettier --check "${prettier_paths[@]}"
        ;;
      affected)
        [ $# -gt 0 ] || {
          printf 'npm run lint -- affected needs the files that changed\n%s\n' "$usage" >&2
          exit 2
        }
        # An assignment, not a pipe: a failure to read the import graph fails the lint.
        linted=$(tsx scripts/lint/affected.ts "$@")
        if [ -n "$linted" ]; then
          mapfile -t linted_files <<<"$linted"
          eslint --no-warn-ignored "${linted_files[@]}"
        fi
        depcruise src lib scripts generators test bench clients --config .dependency-cruiser.json --output-type err
        formatted=()
        for file in "$@"; do
          for path in "${prettier_paths[@]}"; do
            case $file in
              "$path"/*) formatted+=("$file") ;;
              */*) continue ;;
              $path) formatted+=("$file") ;;
              *) continue ;;
            esac
            break
          done
        done
        if [ "${#formatted[@]}" -gt 0 ]; then exec prettier --check "${formatted[@]}"; fi
        exit 0
        ;;
      --fix)
        status=0
        eslint --fix . || status=$?
        depcruise src lib scripts generators test bench clients --config .dependency-cruiser.json --output-type err || status=$?
        prettier --write "${prettier_paths[@]}"
        exit "$status"
        ;;
    esac
    ;;
  generate)
    usage='usage: npm run generate [-- --check]
  (none)   refuses openapi.yaml if it uses a construct a machine refuses (docs/constructs.md, written
           from lib/constructs/), before writing anything; then regenerates src/generated/ and clients/typescript/src/generated/ from openapi.yaml; the
           version, the operations and scopes and the CHANGELOG entries the docs state
           (generators/docFacts.ts), the Prometheus rules and their promtool tests
           (deploy/prometheus/; RUNBOOK_BASE_URL, PROMETHEUS_JOB: docs/alerts.md), dashboard panels
           and docs/alerts.md table from its x-slo, the config validator and docs/configuration.md from src/config/schema.ts
  --check  fails when any of them is out of step, changing nothing (scripts/generate-check.sh)'
    case $choice in
      '')
        tsx generators/constructs.ts
        tsx generators/docFacts.ts
        tsx generators/apiTypes.ts openapi.yaml src/generated/api.ts
        tsx generators/spec.ts
        tsx generators/config.ts
        tsx generators/objectives.ts
        exec tsx generators/client.ts
        ;;
      --check) exec bash scripts/generate-check.sh ;;
    esac
    ;;
  contract)
    usage='usage: npm run contract -- gate|lint|breaking|review|changelog|release|testers [options]   (docs/contract.md)
  gate       lint, breaking, the version and its CHANGELOG.md section, generate --check, check:migrations (scripts/contract-gate.sh)
  lint       Spectral (.spectral.yaml) and Redocly (redocly.yaml) on openapi.yaml
  breaking   openapi.yaml against the last released contract: each change with its rule id; exit 1 on a breaking
             one, 2 on input it cannot read [--base FILE|REV] [--head FILE|REV] [--date YYYY-MM-DD] [--json]
  review     Markdown for a pull request: the version step needed, a sentence per change of each changed operation,
             the client'"'"'s declarations before and after, the changelog entries
             [--base FILE|REV]... [--head FILE|REV] [--date YYYY-MM-DD] [--json]
  changelog  Markdown: what changed since the last release [--base FILE|REV] [--head FILE|REV] [--date YYYY-MM-DD]
  release    if the gate passes: copies openapi.yaml to contract/released/ as the new baseline, records the version
             and commit (HEAD, or --commit REV) in contract/releases.json, sets package.json'"'"'s version
  testers    [specmatic|respect] Specmatic (strict) and the Arazzo workflows (Respect) against the service:
             a fresh one on a free port, or BASE_URL with API_KEY (scripts/contract/testers.sh)'
    case $choice in
      gate)
        no_options "$@"
        exec bash scripts/contract-gate.sh
        ;;
      lint)
        no_options "$@"
        spectral lint openapi.yaml --ruleset .spectral.yaml --fail-severity=error
        exec redocly lint openapi.yaml
        ;;
      breaking) exec tsx scripts/check-breaking.ts "$@" ;;
      review) exec tsx scripts/contract/review.ts "$@" ;;
      changelog) exec tsx scripts/contract/changelog.ts "$@" ;;
      release) exec tsx scripts/contract/release.ts "$@" ;;
      testers) exec bash scripts/contract/testers.sh "$@" ;;
    esac
    ;;
  bench)
    usage='usage: npm run bench -- [which] [options]   (docs/performance.md, docs/scaling.md)
  (none)            builds; ours against the peer, same-work and bare servers (bench/run.ts, its options below)
  variants          builds; quick A/B runs of settings or builds (bench/variants.ts)
  paired            builds; two builds driven at the same time, their CPU ratio per round (bench/paired.ts)
  statements        builds; DATABASE_STATEMENTS=unnamed and the PgBouncer hop (bench/statements.ts)
  hooks             builds; what each stage of the request path costs under load (bench/hookCosts.ts)
  cold              builds; cold starts, interleaved (bench/coldStart.ts)
  refused-flood     builds; /healthz during a flood of refused uploads (bench/refusedFlood.ts)
  scrapers          builds; /healthz while 20 clients scrape /metrics back to back (bench/scrapers.ts)
  capacity          the cost per statement in PostgreSQL and PgBouncer, with pgbench (bench/capacity.ts)
  read-your-writes  read-after-write through a streaming replica (bench/readYourWrites.ts)
  switchover-gap    where the write gap of a planned switchover goes (bench/switchoverGap.ts)'
    case $choice in
      --help | -h)
        printf '%s\n\n' "$usage"
        exec tsx bench/run.ts --help
        ;;
      '' | -*)
        build
        exec tsx bench/run.ts ${choice:+"$choice"} "$@"
        ;;
      variants)
        build
        exec tsx bench/variants.ts "$@"
        ;;
      paired)
        build
        exec tsx bench/paired.ts "$@"
        ;;
      statements)
        build
        exec tsx bench/statements.ts "$@"
        ;;
      hooks)
        build
        exec tsx bench/hookCosts.ts "$@"
        ;;
      cold)
        build
        exec tsx bench/coldStart.ts "$@"
        ;;
      refused-flood)
        build
        exec tsx bench/refusedFlood.ts "$@"
        ;;
      scrapers)
        build
        exec tsx bench/scrapers.ts "$@"
        ;;
      capacity) exec tsx bench/capacity.ts "$@" ;;
      read-your-writes) exec tsx bench/readYourWrites.ts "$@" ;;
      switchover-gap) exec tsx bench/switchoverGap.ts "$@" ;;
    esac
    ;;
  topology)
    usage='usage: npm run topology -- up|down|status [options]   (docs/deploying.md)
  up      builds, then starts the scale-out topology on this machine; prints BASE_URL=... and API_KEY=... last
  down    stops exactly what up started, by pid; deletes .run/topology (--keep keeps it)
  status  each process: pid, port, running/accepting, what the balancer sees (--json)'
    case $choice in
      up)
        build
        exec tsx scripts/topology/up.ts "$@"
        ;;
      down) exec tsx scripts/topology/down.ts "$@" ;;
      status) exec tsx scripts/topology/status.ts "$@" ;;
    esac
    ;;
  test)
    usage='usage: npm test [-- runtime|spec-driven|affected FILE...|tap options and files]   (docs/development.md)
  (none)       tap: the suite, the slow suites aside; then its five slowest files
  runtime      the files a Node.js line can change (scripts/tests/select.ts says the rule); CI runs them on
               each line besides the machine'"'"'s
  spec-driven  what a new operation in openapi.yaml can change: the files that read the spec'"'"'s operations,
               less those that judge the tools on specs of their own (test/constructs/, the contract gate'"'"'s)
  affected F…  the files that import F (a source file, directly or not) through the import graph: the quick
               loop while changing F; openapi.yaml counts as read by every file that reads a spec'"'"'s operations
  tap options and files are passed to tap as they are (npm test -- test/http/deprecation.test.ts)'
    case $choice in
      --help | -h) refuse ;;
      runtime | spec-driven | affected)
        # Each chosen file with the file tap runs for it: a folder's one process (test/helpers/oneProcess.ts)
        # loads the chosen files of its folder only, those PETS_TEST_FILES lists.
        mapfile -t chosen < <(tsx scripts/tests/select.ts --processes "$choice" "$@")
        [ "${#chosen[@]}" -gt 0 ] || {
          echo "no test file chosen" >&2
          exit 1
        }
        PETS_TEST_FILES=$(printf '%s\n' "${chosen[@]}" | cut -f2 | tr '\n' ' ')
        export PETS_TEST_FILES
        set -- $(printf '%s\n' "${chosen[@]}" | cut -f1 | sort -u)
        ;;
      *)
        # The whole suite, or what tap is given, whatever a calling run chose.
        unset PETS_TEST_FILES
        set -- ${choice:+"$choice"} "$@"
        ;;
    esac
    started_ms=$(date +%s%3N)
    status=0
    tap "$@" || status=$?
    tsx scripts/tests/slowest.ts "$started_ms" 5 || true
    exit "$status"
    ;;
  test:system)
    usage='usage: npm run test:system -- faults|topology|migrations|new-operation|consumer-tools|rules|image [tap options]   (not part of npm test; slow)
  faults      builds; test/faults/, one file at a time: private PostgreSQL clusters and processes killed (a
              --cluster worker among them)
  topology    builds; test/topology/, two files at a time: the local topology (PgBouncer, HAProxy, pg_auto_failover)
              and the upgrade drill from the previous release (contract/releases.json)
  migrations  test/migrations/: npm run check:migrations on copies of the repository with a migration committed
  new-operation  test/newOperation/: four worked examples (notes under the pet, DELETE and PATCH on it, its care by
              JSON Merge Patch and its photo in bytes, owners made by PUT at a client-chosen id, with adoptions;
              NEW_OPERATION_OWNERS=0 leaves the owners out, NEW_OPERATION_CARE_PHOTO=0 the care and photo) added to one copy of the repository with only the spec,
              handlers, SQL, migrations and their own tests; every tool (generate, gate, migrations, lint, npm test,
              conformance, client, verify) green on it
  consumer-tools  test/consumerTools/: the /docs page in headless Chromium (every "Try it out"); the TypeScript
              client packed, installed and type-checked as a consumer gets it, and driven from Chromium; its
              methods generated for operations the contract does not have yet, compiled and run
  rules       test/rules/: the promtool tests of the pages; each alerting rule broken once must fail its shipped promtool
              scenario (promtool on every core); the Alertmanager and blackbox configurations, live (amtool, probes)
  image       builds the image (npm run image) unless PET_STORE_IMAGE names one; test/image/ (scripts/image/test.sh)'
    case $choice in
      faults)
        build
        exec tap --jobs=1 test/faults/*.test.ts "$@"
        ;;
      new-operation) exec tap --jobs=1 --timeout=3600 test/newOperation/*.test.ts "$@" ;;
      consumer-tools) exec tap --jobs=1 --timeout=900 test/consumerTools/*.test.ts "$@" ;;
      topology)
        build
        # Two files at a time (tap runs them in name order): each starts its own processes on free ports in
        # folders of its own, and much of a drill is waiting (alert windows, group_wait, drains, failovers).
        exec tap --jobs=2 --timeout=600 test/topology/*.test.ts "$@"
        ;;
      migrations) exec tap --jobs=1 --timeout=900 test/migrations/*.test.ts "$@" ;;
      rules) exec tap --jobs=1 --timeout=1800 test/rules/*.test.ts "$@" ;;
      image) exec bash scripts/image/test.sh "$@" ;;
    esac
    ;;
  *)
    echo "usage: bash scripts/run.sh start|lint|generate|contract|bench|topology|test:system [choice] [arguments...]" >&2
    exit 2
    ;;
esac
refuse
