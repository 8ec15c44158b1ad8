#!/usr/bin/env bash
# Map-reduce with Delta runs: one map run per input line (run id <prefix>-<index>), fanned out with
# xargs -P or GNU parallel; every RunResult (--format json) is collected with jq, failures are
# reported without losing any item; then one reduce run totals the collected results.
#
# Usage: map-reduce.sh -i ITEMS_FILE [-w WORKSPACE] [-o OUT_DIR] [-P JOBS] [-r xargs|parallel]
#                      [-p ID_PREFIX] [-m MAP_AGENT] [-R REDUCE_AGENT] [-f] [-x RECORDING_DIR]
#        -P: runs at once (with GNU parallel over --sshlogin: per host)
#        -x: replay RECORDING_DIR/<id>.jsonl for each map run and RECORDING_DIR/reduce.jsonl for the
#            reduce (no model, no key); recording/ beside this script fits items.txt beside it
#        map-reduce.sh --map-one WORKSPACE OUT_DIR ID_PREFIX MAP_AGENT FORCE INDEX   (one map item; used by
#                      xargs, GNU parallel, ssh workers, Slurm tasks and Kubernetes Indexed Jobs)
# Writes OUT_DIR/items.txt, <id>.json / .log / .exit per item, results.jsonl, failures.jsonl, reduce.json.
# stdout: the reduce run's result. Exit: 0 all items and the reduce completed; 1 a map item or the
# reduce failed, or a worker was lost (the reduce still runs over the items that completed; run the
# same command again to finish the rest); 2 bad usage.
# DELTA names the delta command (default: delta). With -r parallel, GNU parallel also reads its
# options from $PARALLEL, e.g. PARALLEL="--sshlogin node1,node2 --env DELTA_API_KEY".
#
# No `set -e`: a failed item or a lost worker must never end the script before it has collected and
# reported every item; each step checks what it needs and says what went wrong.
set -uo pipefail

SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
HERE=$(dirname "$SELF")
DELTA=${DELTA:-delta}

# A RunResult file counts only when it is whole: written under a temporary name and renamed once
# delta has exited, and not empty (Debian 12's jq 1.6 exits 0 for `jq -e` on an empty file).
completed() { [[ -s $1 ]] && jq -e '.status == "COMPLETED"' "$1" >/dev/null 2>&1; }

# One map item: run it, or pick up the run this id already has (a rerun, a retried job, a requeued task).
# Returns 0 once the item has a RunResult (completed or not: the collector reports failures); non-zero
# only when it could not do that, so GNU parallel --retries tries it again (on another host).
map_one() {
  local ws=$1 out=$2 prefix=$3 agent=$4 force=$5 index=$6
  local id="$prefix-$index" item rc=0 tmp
  local -a replay=()
  [[ -n ${MAP_REDUCE_RECORDING:-} ]] && replay=(--replay "$MAP_REDUCE_RECORDING/$id.jsonl")
  completed "$out/$id.json" && return 0 # done in an earlier attempt
  item=$(sed -n "$((index + 1))p" "$out/items.txt") || return 1
  tmp="$out/.$id.json.$(hostname).$$.tmp"
  if [[ $force == 1 && -d "$ws/.delta/$id" ]]; then
    # -f: take over a run whose holder here is stuck, as `continue --force` does.
    "$DELTA" continue --run-id "$id" -w "$ws" --force --format json ${replay[@]+"${replay[@]}"} >"$tmp" 2>>"$out/$id.log" || rc=$?
  else
    # A rerun, a retried job or a requeued task meets the run this id already has: --if-exists resume gives
    # a COMPLETED run's RunResult again (from its journal, no model request), continues a FAILED or
    # INTERRUPTED one or one whose engine died, and refuses (126) while another engine holds it.
    "$DELTA" run --agent "$agent" -w "$ws" --run-id "$id" --if-exists resume -m "Count the words. Text: $item" --format json \
      ${replay[@]+"${replay[@]}"} >"$tmp" 2>>"$out/$id.log" || rc=$?
  fi
  [[ -s $tmp ]] || { rm -f "$tmp"; echo "map $id: delta exited $rc without a RunResult; see $out/$id.log" >&2; return 1; }
  echo "$rc" >"$out/$id.exit.tmp" && mv -f "$out/$id.exit.tmp" "$out/$id.exit"
  mv -f "$tmp" "$out/$id.json" # last: the item counts as attempted only once its RunResult is whole
}

if [[ ${1:-} == --map-one ]]; then
  shift
  (($# == 6)) || { echo "usage: $0 --map-one WORKSPACE OUT_DIR ID_PREFIX MAP_AGENT FORCE INDEX" >&2; exit 2; }
  map_one "$@"
  exit
fi

usage() { sed -n '2,18p' "$SELF" | sed 's/^# \{0,1\}//'; }

ITEMS="" WORKSPACE=./map-reduce-workspace OUT="" JOBS=4 RUNNER=xargs PREFIX=map FORCE=0
MAP_AGENT="$HERE/map-agent" REDUCE_AGENT="$HERE/reduce-agent"
while getopts "i:w:o:P:r:p:m:R:fx:h" opt; do
  case "$opt" in
    i) ITEMS=$OPTARG ;;
    w) WORKSPACE=$OPTARG ;;
    o) OUT=$OPTARG ;;
    P) JOBS=$OPTARG ;;
    r) RUNNER=$OPTARG ;;
    p) PREFIX=$OPTARG ;;
    m) MAP_AGENT=$OPTARG ;;
    R) REDUCE_AGENT=$OPTARG ;;
    f) FORCE=1 ;;
    # The map workers (started by xargs or parallel) find the recordings through the environment.
    x) [[ -d $OPTARG ]] || { echo "error: -x $OPTARG: no such directory" >&2; exit 2; }
       MAP_REDUCE_RECORDING=$(cd "$OPTARG" && pwd) && export MAP_REDUCE_RECORDING ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
fail_usage() { echo "error: $*" >&2; exit 2; }
fail() { echo "error: $*" >&2; exit 1; }
[[ -n $ITEMS && -r $ITEMS ]] || fail_usage "-i ITEMS_FILE is required and must be readable"
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || fail_usage "-P must be a positive number (got '$JOBS')"
[[ $RUNNER == xargs || $RUNNER == parallel ]] || fail_usage "-r must be xargs or parallel (got '$RUNNER')"
for tool in "$DELTA" jq "$RUNNER"; do
  command -v "$tool" >/dev/null || fail_usage "'$tool' not found on PATH"
done

mkdir -p "$WORKSPACE" && WORKSPACE=$(cd "$WORKSPACE" && pwd) || fail "cannot create the workspace $WORKSPACE"
OUT=${OUT:-$WORKSPACE.out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || fail "cannot create the out dir $OUT"
MAP_AGENT=$(cd "$MAP_AGENT" && pwd) || fail_usage "-m $MAP_AGENT: no such directory"
say() { echo "[map-reduce] $*" >&2; }

# The item list every worker reads by index: non-empty lines, fixed before the fan-out starts.
# A rerun must bring the same items, since run ids and kept results are matched by index.
grep -v '^[[:space:]]*$' "$ITEMS" >"$OUT/items.next"
if [[ -f $OUT/items.txt ]] && ! cmp -s "$OUT/items.txt" "$OUT/items.next"; then
  rm -f "$OUT/items.next"
  fail_usage "$OUT holds the results of a different item list; rerun with the same items, or use a new -o and -w"
fi
mv "$OUT/items.next" "$OUT/items.txt" || fail "cannot write $OUT/items.txt"
COUNT=$(wc -l <"$OUT/items.txt")
((COUNT > 0)) || fail_usage "$ITEMS has no items"
say "map: $COUNT items with $RUNNER -P $JOBS into $WORKSPACE (results in $OUT)"

# Map: indexes 0…COUNT-1, one `delta run` each, at most JOBS at a time (per host with --sshlogin).
# With GNU parallel, a job whose worker was lost (an ssh host that died: exit 255) is retried on
# another host, and hosts that cannot be reached at the start are left out, instead of every job
# failing on them at once.
fan_rc=0
if [[ $RUNNER == xargs ]]; then
  seq 0 $((COUNT - 1)) | xargs -P "$JOBS" -n 1 "$SELF" --map-one "$WORKSPACE" "$OUT" "$PREFIX" "$MAP_AGENT" "$FORCE" || fan_rc=$?
else
  # One command line, quoted here: parallel's -q would also quote the host checks of --filter-hosts and break them.
  worker=$(printf '%q ' "$SELF" --map-one "$WORKSPACE" "$OUT" "$PREFIX" "$MAP_AGENT" "$FORCE")
  seq 0 $((COUNT - 1)) | parallel --will-cite --retries 3 --filter-hosts -j "$JOBS" "$worker{}" || fan_rc=$?
fi
((fan_rc == 0)) || say "map: $RUNNER exited $fan_rc: some workers were lost; their items are reported below"

# Collect: every index ends up in results.jsonl or failures.jsonl, never in neither, never twice.
: >"$OUT/results.jsonl.tmp" && : >"$OUT/failures.jsonl.tmp" || fail "cannot write in $OUT"
for ((index = 0; index < COUNT; index++)); do
  id="$PREFIX-$index"
  item=$(sed -n "$((index + 1))p" "$OUT/items.txt")
  exit_code=$(cat "$OUT/$id.exit" 2>/dev/null) && [[ $exit_code =~ ^[0-9]+$ ]] || exit_code=null
  if completed "$OUT/$id.json"; then
    jq -c --arg item "$item" '{item: $item, run_id, result}' "$OUT/$id.json" >>"$OUT/results.jsonl.tmp"
  elif [[ -s $OUT/$id.json ]] && jq -e . "$OUT/$id.json" >/dev/null 2>&1; then
    jq -c --arg item "$item" --arg id "$id" --argjson exit "$exit_code" \
      '{item: $item, run_id: (.run_id // $id), status: (.status // "REFUSED"), exit_code: $exit, error}' \
      "$OUT/$id.json" >>"$OUT/failures.jsonl.tmp"
  else
    jq -nc --arg item "$item" --arg id "$id" --argjson exit "$exit_code" \
      '{item: $item, run_id: $id, status: "NO_RESULT", exit_code: $exit,
        error: {type: "NO_RESULT", message: "the map worker left no RunResult (lost or killed); see its .log, and run the same command again"}}' >>"$OUT/failures.jsonl.tmp"
  fi
done
mv -f "$OUT/results.jsonl.tmp" "$OUT/results.jsonl" && mv -f "$OUT/failures.jsonl.tmp" "$OUT/failures.jsonl" || fail "cannot write in $OUT"
DONE=$(wc -l <"$OUT/results.jsonl")
FAILED=$(wc -l <"$OUT/failures.jsonl")
say "map: $DONE completed, $FAILED failed"
while read -r failure; do
  say "  FAILED $(jq -r '"\(.run_id) (\(.status), exit \(.exit_code)): \(.error.type // "?"): \(.error.message // "")"' <<<"$failure")"
done <"$OUT/failures.jsonl"
if ((FAILED > 0)); then
  say "retry the failed items by running the same command again: completed items are kept, failed runs are continued"
fi

# Reduce: one run over the collected results, which it reads from the workspace.
cp "$OUT/results.jsonl" "$WORKSPACE/$PREFIX-results.jsonl" || fail "cannot copy the results into $WORKSPACE"
reduce_id="$PREFIX-reduce-$(date +%Y%m%d%H%M%S)-$$"
rc=0
reduce_replay=()
[[ -n ${MAP_REDUCE_RECORDING:-} ]] && reduce_replay=(--replay "$MAP_REDUCE_RECORDING/reduce.jsonl")
"$DELTA" run --agent "$REDUCE_AGENT" -w "$WORKSPACE" --run-id "$reduce_id" ${reduce_replay[@]+"${reduce_replay[@]}"} \
  -m "Total the word counts in the results file $PREFIX-results.jsonl ($DONE items)." --format json \
  >"$OUT/reduce.json" 2>"$OUT/reduce.log" || rc=$?
if ((rc != 0)); then
  say "reduce run $reduce_id exited $rc: $(jq -r '.error.message // .status' "$OUT/reduce.json" 2>/dev/null || echo "no RunResult")"
  exit 1
fi
say "reduce: run $reduce_id completed"
jq -c .result "$OUT/reduce.json"
((FAILED == 0 && fan_rc == 0))
