# Sourced by .ci/run: a run as stages, each timed and judged, with the table at the end; work started in the
# background that stages wait for; the processes a stage leaves running, ended. The caller sets target_s and
# budget_s (seconds) and calls report last.

overall=0
total_passed=0
total_failed=0
total_skipped=0
stage_rows=()
background_rows=()
# The failed tests of every suite, printed again at the end: a CI log is read from its tail, and a failure
# 20 minutes up is otherwise out of sight.
failures_log=$(mktemp)

# Prints every stage with its wall time and result, the total, and the totals of tests; the run's last lines.
report() {
  local row name seconds cpu result total=$SECONDS total_cpu=0 tick
  tick=$(getconf CLK_TCK)
  # Nothing is left running: work no stage waited for (a run cut short) is waited for here, and its row shown.
  for name in "${!background_pid[@]}"; do
    await_background "$name" || overall=1
    wait "${background_pid[$name]}" 2>/dev/null || true
    rm -rf "${background_log[$name]}" "${background_log[$name]}.ended" "${background_log[$name]}.shown"
  done
  if [ -s "$failures_log" ]; then
    echo "== failed tests (tap's \"not ok\" lines, the innermost last)"
    cat "$failures_log"
  fi
  rm -f "$failures_log"
  echo "== stages (wall time, and the CPU time of what the stage ran: 2 busy cores make twice the wall time; the"
  echo "   total is the run's own wall time, shorter than the rows' sum where lanes ran at once)"
  printf '%-52s %8s %8s  %s\n' stage 'm:ss' 'cpu' result
  for row in "${stage_rows[@]}"; do
    IFS=$'\t' read -r name seconds cpu result <<<"$row"
    total_cpu=$((total_cpu + cpu))
    cpu=$((cpu / tick))
    printf '%-52s %5d:%02d %5d:%02d  %s\n' "$name" $((seconds / 60)) $((seconds % 60)) $((cpu / 60)) $((cpu % 60)) "$result"
  done
  total_cpu=$((total_cpu / tick))
  printf '%-52s %5d:%02d %5d:%02d  target %d:%02d, budget %d:%02d\n' total $((total / 60)) $((total % 60)) \
    $((total_cpu / 60)) $((total_cpu % 60)) $((target_s / 60)) $((target_s % 60)) $((budget_s / 60)) $((budget_s % 60))
  if [ "${#background_rows[@]}" -gt 0 ]; then
    echo "in the background, beside the stages above (not in the total: a stage that needed one waited for it in its own row)"
    for row in "${background_rows[@]}"; do
      IFS=$'\t' read -r name seconds result <<<"$row"
      printf '%-52s %5d:%02d  %s\n' "$name" $((seconds / 60)) $((seconds % 60)) "$result"
    done
  fi
  if [ "$total" -gt "$budget_s" ]; then
    echo "FAILED: CI took ${total} s, over its budget of ${budget_s} s: see which stage grew in the table above" >&2
    overall=1
  elif [ "$total" -gt "$target_s" ]; then
    echo "CI took ${total} s: within its budget of ${budget_s} s, over its target of ${target_s} s"
  fi
  echo "${total_passed} passed, ${total_failed} failed, ${total_skipped} skipped"
}

# Runs lanes at once, each a function that runs stages one after another: for stages that mostly wait
# (on servers they start, on the network) beside those that compute. Each line a lane prints goes out as
# it comes, led by "[NAME] "; once every lane has returned, their rows join the table (led by the lane's
# name), and their tests, failures and results the run's. The run's total is its wall time, not the sum of
# its rows. usage: lanes NAME FUNCTION [NAME FUNCTION]...
lanes() {
  local name state kind fields passed failed skipped result i
  local -a states=() pids=() names=()
  while [ $# -ge 2 ]; do
    name=$1
    state=$(mktemp)
    # shellcheck disable=SC2030,SC2031 # the lane's own copies, written to $state for the run to add up
    (
      stage_rows=()
      background_rows=()
      total_passed=0 total_failed=0 total_skipped=0 overall=0
      "$2"
      {
        printf 'stage\t%s\n' "${stage_rows[@]}"
        printf 'background\t%s\n' "${background_rows[@]}"
        printf 'tests\t%s\t%s\t%s\t%s\n' "$total_passed" "$total_failed" "$total_skipped" "$overall"
      } >"$state"
    ) 2>&1 | sed -u "s/^/[$name] /" &
    pids+=("$!")
    names+=("$name")
    states+=("$state")
    shift 2
  done
  wait "${pids[@]}" || true
  for i in "${!states[@]}"; do
    if ! grep -q '^tests' "${states[$i]}"; then
      stage_rows+=("${names[$i]}: the lane itself"$'\t'0$'\t'0$'\t'"FAILED (it ended before its last stage)")
      overall=1
    fi
    while IFS=$'\t' read -r kind fields; do
      case $kind in
        stage) [ -z "$fields" ] || stage_rows+=("${names[$i]}: $fields") ;;
        background) [ -z "$fields" ] || background_rows+=("$fields") ;;
        tests)
          IFS=$'\t' read -r passed failed skipped result <<<"$fields"
          total_passed=$((total_passed + passed))
          total_failed=$((total_failed + failed))
          total_skipped=$((total_skipped + skipped))
          [ "$result" -eq 0 ] || overall=1
          ;;
      esac
    done <"${states[$i]}"
    rm -f "${states[$i]}"
  done
}

# Runs a stage: its command with its output, timed; a failure marks the run failed and the rest goes on.
# usage: stage NAME COMMAND...
# Everything a stage starts carries PETS_CI_STAGE=<its mark> in its environment (daemons too: they inherit it);
# what still runs once the stage has returned would take the CPU from the stages after it, so it is listed and
# ended, and the stage's row says how many. The services stage starts its servers without the mark.
stage() {
  # $BASHPID here, not inside $(...), where it names the substitution's own subshell.
  local name=$1 started=$SECONDS shell=$BASHPID cpu_started status=0 mark left result
  shift
  cpu_started=$(children_cpu_ticks "$shell")
  echo "== $name (at $(date +%T))"
  # Unique across lanes too: each lane is a subshell of its own ($BASHPID), counting its own rows.
  mark="$$-$BASHPID-${#stage_rows[@]}"
  export PETS_CI_STAGE=$mark
  "$@" || status=$?
  unset PETS_CI_STAGE
  left=$(end_leftovers "$mark")
  result=$([ "$status" -eq 0 ] && echo ok || echo "FAILED ($status)")
  [ "$left" -eq 0 ] || result="$result; $left processes it left running, ended (listed above)"
  stage_rows+=("$name"$'\t'$((SECONDS - started))$'\t'$(($(children_cpu_ticks "$shell") - cpu_started))$'\t'"$result")
  if [ "$status" -ne 0 ]; then
    echo "FAILED: $name" >&2
    overall=1
  fi
  return 0
}

# usage: children_cpu_ticks PID (the stage's shell)
# The user and system CPU time, in clock ticks, of the shell's children that have ended and been waited for (the kernel adds
# each one's own waited-for children to it): what a stage ran, less what it left running (ended, not waited for).
children_cpu_ticks() {
  local fields
  # /proc/PID/stat after the command name's closing parenthesis: field 14 and 15 there are cutime and cstime.
  read -ra fields <<<"$(sed 's/^.*) //' "/proc/$1/stat")"
  echo $((fields[13] + fields[14]))
}

# Lists (on stderr) and ends with SIGTERM the processes whose environment holds PETS_CI_STAGE=MARK; prints how
# many. usage: end_leftovers MARK
end_leftovers() {
  local pids
  pids=$(marked_processes "$1")
  if [ -z "$pids" ]; then
    echo 0
    return
  fi
  echo "left running by this stage, now ended:" >&2
  # shellcheck disable=SC2086 # one pid a word
  ps -o pid,ppid,etimes,time,args -p "$(tr '\n' ',' <<<"$pids" | sed 's/,$//')" >&2 || true
  # shellcheck disable=SC2086
  kill -TERM $pids 2>/dev/null || true
  wc -w <<<"$pids"
}

# Prints the pids of the processes whose environment holds PETS_CI_STAGE=MARK. usage: marked_processes MARK
# Bash's builtins read each process's environment (a process gone meanwhile is no match), without a fork each.
marked_processes() {
  local dir vars reads var
  for dir in /proc/[0-9]*; do
    # A process in the middle of execve has, for a moment, its new memory but not yet its environment: it reads as
    # empty (CI saw a stage's daemon missed so), and is read again every 10 ms, up to a second. A zombie's reads as
    # empty for good, and a kernel thread's cannot be read.
    for ((reads = 1; reads <= 100; reads++)); do
      mapfile -d '' -t vars 2>/dev/null <"$dir/environ" || continue 2
      [ "${#vars[@]}" -eq 0 ] && ! is_zombie "$dir" || break
      sleep 0.01
    done
    for var in "${vars[@]}"; do
      if [ "$var" = "PETS_CI_STAGE=$1" ]; then
        echo "${dir#/proc/}"
        break
      fi
    done
  done
  return 0
}

# Whether the process at DIR (/proc/PID) has ended and not yet been waited for. usage: is_zombie DIR
is_zombie() {
  local stat
  read -r stat 2>/dev/null <"$1/stat" || return 1
  # After the command name's closing parenthesis comes the state: Z (a zombie) or X (dead).
  [[ ${stat##*) } == [ZX]* ]]
}

# A stage the rest cannot go without (the install, the build): on failure, the table, then exit.
required_stage() {
  stage "$@"
  if [ "$overall" -ne 0 ]; then
    report
    exit 1
  fi
}

# Work that only waits on the network (downloads), started in the background while the CPU-bound stages run.
# A stage that needs one waits for it (`needs`), prints its output, and fails when it failed; its own wall time
# is a row of its own, under the table.
declare -A background_pid background_log background_status background_started
background() {
  local name=$1
  shift
  background_log[$name]=$(mktemp)
  background_started[$name]=$SECONDS
  echo "== started in the background: $name"
  # It stamps its status and its end in a file, written whole by a rename: a lane (a subshell) cannot `wait`
  # for its parent's child, and the wait for it can come long after.
  (
    status=0
    "$@" >"${background_log[$name]}" 2>&1 || status=$?
    echo "$status $SECONDS" >"${background_log[$name]}.ending"
    mv "${background_log[$name]}.ending" "${background_log[$name]}.ended"
    exit "$status"
  ) &
  background_pid[$name]=$!
}

# Waits for the background work NAME: the first to wait (of the run and its lanes) prints what it printed and
# adds its row; returns its status.
await_background() {
  local name=$1 log=${background_log[$1]} status ended
  if [ -z "${background_status[$name]:-}" ]; then
    until [ -e "$log.ended" ]; do sleep 1; done
    read -r status ended <"$log.ended"
    background_status[$name]=$status
    # mkdir is atomic: one waiter prints it, however many lanes wait at once.
    if mkdir "$log.shown" 2>/dev/null; then
      echo "-- $name, in the background since $((SECONDS - background_started[$name])) s ago:"
      cat "$log"
      background_rows+=("$name"$'\t'$((ended - background_started[$name]))$'\t'"$([ "$status" -eq 0 ] && echo ok || echo "FAILED ($status)")")
    else
      echo "-- $name: done in the background (its output is printed once, above)"
    fi
  fi
  return "${background_status[$name]}"
}

# usage: needs NAME COMMAND...: waits for the background work NAME, then runs COMMAND; fails without running
# it when NAME failed.
needs() {
  local name=$1
  shift
  if ! await_background "$name"; then
    echo "FAILED: $name, which this stage needs, failed in the background (its output above)" >&2
    return 1
  fi
  "$@"
}

# Runs a command that ends with tap's summary line "# { total: N, pass: P, fail: F, skip: S }", adds it up,
# and keeps its "not ok" lines; fails when the command does, or when it passed no test.
counted() {
  local label=$1 log status summary passed failed skipped
  shift
  log=$(mktemp)
  set +e
  "$@" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  set -e
  # A suite that runs tap inside a copy (the worked examples) reports the inner run's "not ok" lines as tap
  # comments ("# not ok"): those name the file that failed, so they are kept too.
  grep -E '^[[:space:]]*(#[[:space:]]*)?not ok ' "$log" | awk -v suite="$label" '{ print "[" suite "] " $0 }' >>"$failures_log" || true
  summary=$(grep -E '^# \{ total: ' "$log" | tail -n 1)
  passed=$(sed -nE 's/.*pass: ([0-9]+).*/\1/p' <<<"$summary")
  failed=$(sed -nE 's/.*fail: ([0-9]+).*/\1/p' <<<"$summary")
  skipped=$(sed -nE 's/.*skip: ([0-9]+).*/\1/p' <<<"$summary")
  rm -f "$log"
  echo "$label: ${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped"
  total_passed=$((total_passed + ${passed:-0}))
  total_failed=$((total_failed + ${failed:-0}))
  total_skipped=$((total_skipped + ${skipped:-0}))
  [ "$status" -eq 0 ] && [ "${passed:-0}" -gt 0 ]
}
