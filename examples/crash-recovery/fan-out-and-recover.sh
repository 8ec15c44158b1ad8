#!/usr/bin/env bash
# Fans out N runs with client-made run ids in one workspace, kills some of them with kill -9 while
# their tool runs, then recovers every unfinished run by starting it again as it was started, with
# `delta run --run-id <id> --if-exists resume`, and prints a summary: started, killed, recovered, lost.
#
# Usage: fan-out-and-recover.sh [-a AGENT_DIR] [-w WORKSPACE] [-n RUNS] [-k KILLS] [-p ID_PREFIX] [-l LOG_DIR]
#                               [-r RECORDING]   (every run and continue replays it: no model, no key)
# Exit status: 0 when every run this script started ended COMPLETED, 1 when any was lost, 2 on bad usage.
# DELTA names the delta command (default: delta).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DELTA=${DELTA:-delta}
AGENT="$HERE/agent"
WORKSPACE=./crash-recovery-workspace
RUNS=6
KILLS=2
PREFIX="job-$(date +%Y%m%d%H%M%S)"
LOG_DIR=""
REPLAY=()
WAIT_FOR_TOOL_S=60

usage() {
  sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

while getopts "a:w:n:k:p:l:r:h" opt; do
  case "$opt" in
    a) AGENT=$OPTARG ;;
    w) WORKSPACE=$OPTARG ;;
    n) RUNS=$OPTARG ;;
    k) KILLS=$OPTARG ;;
    p) PREFIX=$OPTARG ;;
    l) LOG_DIR=$OPTARG ;;
    r) [[ -r $OPTARG ]] || { echo "error: -r $OPTARG: no such recording" >&2; exit 2; }
       REPLAY=(--replay "$(cd "$(dirname "$OPTARG")" && pwd)/$(basename "$OPTARG")") ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
if ! [[ $RUNS =~ ^[0-9]+$ && $KILLS =~ ^[0-9]+$ ]] || ((RUNS < 1 || KILLS > RUNS)); then
  echo "error: -n must be at least 1 and -k at most -n (got -n $RUNS -k $KILLS)" >&2
  exit 2
fi
command -v "$DELTA" >/dev/null || { echo "error: '$DELTA' not found; put delta on PATH (npm install -g . in a clone of delta-engine) or set DELTA" >&2; exit 2; }

mkdir -p "$WORKSPACE"
WORKSPACE=$(cd "$WORKSPACE" && pwd)
LOG_DIR=${LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/fan-out-logs.XXXXXX")}
mkdir -p "$LOG_DIR"
say() { echo "[fan-out] $*" >&2; }

# 1. Fan out: one background engine per run id. The ids are ours, so we can find every run again.
declare -a IDS=()
declare -A PID=()
for ((i = 1; i <= RUNS; i++)); do
  id="$PREFIX-$i"
  IDS+=("$id")
  "$DELTA" run --agent "$AGENT" -w "$WORKSPACE" --run-id "$id" -m "Process item $i" --format json ${REPLAY[@]+"${REPLAY[@]}"} \
    >"$LOG_DIR/$id.run.json" 2>"$LOG_DIR/$id.run.log" &
  PID[$id]=$!
done
say "started ${#IDS[@]} runs in $WORKSPACE (logs in $LOG_DIR)"

# 2. Crash some: kill -9 the first KILLS runs while their journal shows a tool call in flight
#    (more ACTION_REQUEST than ACTION_RESULT events).
journal_shows_action() {
  local journal="$WORKSPACE/.delta/$1/journal.jsonl" requested finished
  requested=$(grep -c '"type":"ACTION_REQUEST"' "$journal" 2>/dev/null) || return 1
  finished=$(grep -c '"type":"ACTION_RESULT"' "$journal" 2>/dev/null) || finished=0
  ((requested > finished))
}
killed=0
declare -A REAPED=()
for ((i = 0; i < KILLS; i++)); do
  id=${IDS[$i]}
  deadline=$((SECONDS + WAIT_FOR_TOOL_S))
  until journal_shows_action "$id" || ((SECONDS > deadline)) || ! kill -0 "${PID[$id]}" 2>/dev/null; do
    sleep 0.1
  done
  if journal_shows_action "$id" && kill -9 "${PID[$id]}" 2>/dev/null; then
    # Reaped at once, quietly: left to itself, bash reports a killed job on stderr at its next command
    # ("line 71: 4242 Killed  …"); the summary below says it once, in our words.
    rc=0
    wait "${PID[$id]}" 2>/dev/null || rc=$?
    echo "$rc" >"$LOG_DIR/$id.run.exit"
    REAPED[$id]=1
    killed=$((killed + 1))
    say "kill -9 ${PID[$id]} ($id) while its tool runs"
  else
    say "could not kill $id mid-run (it had already ended or never reached a tool)"
  fi
done

# Every other engine exits with its own exit code.
for id in "${IDS[@]}"; do
  [[ -z ${REAPED[$id]:-} ]] || continue
  rc=0
  wait "${PID[$id]}" || rc=$?
  echo "$rc" >"$LOG_DIR/$id.run.exit"
done

# 3. Recover: every run we started is retried exactly as it was started, with --if-exists resume.
#    A COMPLETED run gives its RunResult again (no model request), a killed run (journal says RUNNING,
#    process gone) is taken over: the janitor marks it INTERRUPTED and gives the cut tool call a
#    synthesized result before the model goes on; FAILED and INTERRUPTED runs are continued; a run
#    waiting for a human exits 101 with its question. Nobody reads a journal by hand.
declare -A COMPLETED=() RECOVERING=() TASK=()
while read -r id; do COMPLETED[$id]=1; done < <("$DELTA" list-runs -w "$WORKSPACE" --status COMPLETED --format raw)
for ((i = 1; i <= RUNS; i++)); do TASK[$PREFIX-$i]="Process item $i"; done
for id in "${IDS[@]}"; do
  [[ -z ${COMPLETED[$id]:-} ]] || continue
  "$DELTA" run --agent "$AGENT" -w "$WORKSPACE" --run-id "$id" --if-exists resume -m "${TASK[$id]}" --format json ${REPLAY[@]+"${REPLAY[@]}"} \
    >"$LOG_DIR/$id.continue.json" 2>"$LOG_DIR/$id.continue.log" &
  RECOVERING[$id]=$!
done

recovered=0
for id in "${!RECOVERING[@]}"; do
  rc=0
  wait "${RECOVERING[$id]}" || rc=$?
  if ((rc == 0)); then
    recovered=$((recovered + 1))
    say "recovered $id"
  elif ((rc == 101)); then
    say "$id waits for an answer"
  else
    say "continue of $id exited $rc (see $LOG_DIR/$id.continue.log)"
  fi
done

# 4. Account for every run: whatever is not COMPLETED now is lost (or waiting for a human).
declare -A DONE=() WAITING=()
while read -r id; do DONE[$id]=1; done < <("$DELTA" list-runs -w "$WORKSPACE" --status COMPLETED --format raw)
while read -r id; do WAITING[$id]=1; done < <("$DELTA" list-runs -w "$WORKSPACE" --status WAITING_FOR_INPUT --format raw)
lost=0
waiting=0
for id in "${IDS[@]}"; do
  if [[ -n ${DONE[$id]:-} ]]; then continue; fi
  if [[ -n ${WAITING[$id]:-} ]]; then
    waiting=$((waiting + 1))
    say "$id is waiting for an answer: delta continue --run-id $id -w $WORKSPACE -m \"<answer>\""
  else
    lost=$((lost + 1))
    say "LOST $id: see $LOG_DIR/$id.*"
  fi
done

printf 'started %d\nkilled %d\nrecovered %d\nwaiting %d\nlost %d\n' "${#IDS[@]}" "$killed" "$recovered" "$waiting" "$lost"
((lost == 0))
