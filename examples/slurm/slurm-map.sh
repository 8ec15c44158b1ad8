#!/usr/bin/env bash
# Map items with a Slurm job array of Delta runs (one run per item, run id <prefix>-<index>), and
# resume whatever a cancelled, failed, requeued or lost task left unfinished.
#
# Usage: slurm-map.sh submit -i ITEMS_FILE -w WORKSPACE [-o OUT_DIR] [-m MAP_AGENT] [-p ID_PREFIX]
#                            [-P MAX_RUNNING] [-x RECORDING_DIR] [-- SBATCH_OPTION...]
#          writes OUT_DIR/items.txt and settings.json, submits map-array.sbatch as an array of one task
#          per item, prints the job id. Exit 0 submitted, 1 sbatch failed, 2 bad usage.
#        slurm-map.sh resume -o OUT_DIR [-n]
#          (after the array has ended) collects every completed item into OUT_DIR/results.jsonl, lists
#          the others in OUT_DIR/remaining.jsonl and resubmits, as one new array with the same settings,
#          every item `delta list-runs --resumable` says can go on and every item that has no run yet;
#          items whose run is DEFERRED until a time still to come go in a second array that Slurm
#          starts only then (sbatch --begin). -n: report only, submit nothing.
#          Exit 0 every item completed; 3 items resubmitted (the new job ids on stdout, joined by ':':
#          resume again after they end); 1 items remain that a resubmission cannot finish (waiting for an answer,
#          or still held by a running engine: listed on stderr, and with -n, items that would be
#          resubmitted); 2 bad usage.
# Default OUT_DIR: <workspace>.out. DELTA names the delta command (default: delta). With -x, every run
# and continue replays RECORDING_DIR/<run id>.jsonl (no model, no key).
set -uo pipefail

SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
HERE=$(dirname "$SELF")
DELTA=${DELTA:-delta}
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$SELF"; }
fail_usage() { echo "error: $*" >&2; exit 2; }
say() { echo "[slurm-map] $*" >&2; }
absolute() { (cd "$1" && pwd); }
require() { for tool in "$@"; do command -v "$tool" >/dev/null || fail_usage "'$tool' not found on PATH"; done; }

# Submits map-array.sbatch for the given array indexes (e.g. "0-47" or "3,17") with the settings in OUT;
# a third argument is one more sbatch option (--begin=…).
submit_array() {
  local out=$1 indexes=$2 throttle ws agent prefix recording
  local -a extra=() task=() recorded=() more=(${3:+"$3"})
  throttle=$(jq -r '.max_running // empty' "$out/settings.json")
  ws=$(jq -r '.workspace' "$out/settings.json")
  agent=$(jq -r '.map_agent' "$out/settings.json")
  prefix=$(jq -r '.id_prefix' "$out/settings.json")
  recording=$(jq -r '.recording // empty' "$out/settings.json")
  mapfile -t extra < <(jq -r '.sbatch_options[]' "$out/settings.json")
  [[ -n $recording ]] && recorded=(-x "$recording")
  task=(-w "$ws" -o "$out" -m "$agent" -p "$prefix" ${recorded[@]+"${recorded[@]}"})
  sbatch --parsable --array="$indexes${throttle:+%$throttle}" -o "$out/slurm-%A_%a.out" ${more[@]+"${more[@]}"} ${extra[@]+"${extra[@]}"} \
    "$HERE/map-array.sbatch" "${task[@]}" | cut -d ';' -f 1
}

submit() {
  local items="" ws="" out="" agent="$HERE/../map-reduce/map-agent" prefix=map throttle="" recording="" opt
  while getopts "i:w:o:m:p:P:x:h" opt; do
    case "$opt" in
      i) items=$OPTARG ;;
      w) ws=$OPTARG ;;
      o) out=$OPTARG ;;
      m) agent=$OPTARG ;;
      p) prefix=$OPTARG ;;
      P) throttle=$OPTARG ;;
      x) recording=$OPTARG ;;
      h) usage; exit 0 ;;
      *) usage >&2; exit 2 ;;
    esac
  done
  shift $((OPTIND - 1))
  [[ -n $items && -r $items ]] || fail_usage "-i ITEMS_FILE is required and must be readable"
  [[ -n $ws ]] || fail_usage "-w WORKSPACE is required (on a file system every node mounts at the same path)"
  [[ -d $agent ]] || fail_usage "-m $agent: no such agent directory"
  [[ -z $throttle || $throttle =~ ^[1-9][0-9]*$ ]] || fail_usage "-P must be a positive number (got '$throttle')"
  [[ $prefix =~ ^[A-Za-z0-9_][A-Za-z0-9._-]*$ ]] || fail_usage "-p must be letters, digits, '.', '_' or '-' (got '$prefix')"
  [[ -z $recording || -d $recording ]] || fail_usage "-x $recording: no such directory"
  require jq sbatch "$DELTA"

  mkdir -p "$ws" && ws=$(absolute "$ws")
  out=${out:-$ws.out}
  mkdir -p "$out" && out=$(absolute "$out")
  agent=$(absolute "$agent")
  [[ -n $recording ]] && recording=$(absolute "$recording")
  # Tasks read their item by index, so a resubmission must see the same list.
  grep -v '^[[:space:]]*$' "$items" >"$out/items.next" || true
  if [[ -f $out/items.txt ]] && ! cmp -s "$out/items.txt" "$out/items.next"; then
    rm -f "$out/items.next"
    fail_usage "$out holds the items of another submission; use a new -o and -w, or 'slurm-map.sh resume -o $out'"
  fi
  mv "$out/items.next" "$out/items.txt"
  local count
  count=$(wc -l <"$out/items.txt")
  ((count > 0)) || fail_usage "$items has no items"
  # The extra sbatch options as a JSON array, one string each (jq's --args would read "--partition=x" as its own option).
  local options
  options=$(for option in "$@"; do jq -n --arg option "$option" '$option'; done | jq -sc .)
  jq -n --arg ws "$ws" --arg agent "$agent" --arg prefix "$prefix" --arg throttle "$throttle" --arg recording "$recording" \
    --argjson options "$options" \
    '{workspace: $ws, map_agent: $agent, id_prefix: $prefix, max_running: ($throttle | if . == "" then null else tonumber end),
      recording: (if $recording == "" then null else $recording end), sbatch_options: $options}' \
    >"$out/settings.json.tmp" && mv "$out/settings.json.tmp" "$out/settings.json"

  local job
  job=$(submit_array "$out" "0-$((count - 1))") && [[ -n $job ]] || { say "sbatch failed"; exit 1; }
  say "submitted job array $job: $count items into $ws (results in $out)"
  echo "$job"
}

# The RunResult of a COMPLETED run whose task died before renaming its own: `delta run --if-exists resume`
# gives it again from the journal, with no model request.
rebuild_result() {
  local ws=$1 id=$2 file=$3 item=$4 agent
  agent=$(jq -r '.map_agent' "$(dirname "$file")/settings.json")
  "$DELTA" run --agent "$agent" -w "$ws" --run-id "$id" --if-exists resume -m "Count the words. Text: $item" --format json \
    >"$file.tmp.resume" 2>/dev/null && [[ -s $file.tmp.resume ]] && mv -f "$file.tmp.resume" "$file" || rm -f "$file.tmp.resume"
}

resume() {
  local out="" report_only=0 opt
  while getopts "o:nh" opt; do
    case "$opt" in
      o) out=$OPTARG ;;
      n) report_only=1 ;;
      h) usage; exit 0 ;;
      *) usage >&2; exit 2 ;;
    esac
  done
  [[ -n $out && -r $out/settings.json && -r $out/items.txt ]] || fail_usage "-o OUT_DIR must be the directory 'slurm-map.sh submit' wrote (with settings.json and items.txt)"
  require jq "$DELTA"
  out=$(absolute "$out")
  local ws prefix count
  ws=$(jq -r '.workspace' "$out/settings.json")
  prefix=$(jq -r '.id_prefix' "$out/settings.json")
  count=$(wc -l <"$out/items.txt")

  # Every run's status, then the runs `continue` can take; --check-liveness watches any run still held on
  # another node for one stale period, so a run whose node died counts as resumable and a live one does not.
  # A DEFERRED run (a rate limit, a quota, a budget) is resumable; one whose resume_after is still to come
  # is not --due, and waits for that time in an array of its own.
  declare -A status=() resumable=() holder=() due=() resume_after=() reason=()
  local listed
  listed=$("$DELTA" list-runs -w "$ws" --format json) || { say "delta list-runs -w $ws failed"; exit 1; }
  # Fields split at a unit separator: a tab is whitespace to read, and empty fields between tabs would merge.
  while IFS=$'\x1f' read -r id state host why after; do status[$id]=$state holder[$id]=$host reason[$id]=$why resume_after[$id]=$after; done \
    < <(jq -r '.[] | [.run_id, .status, (.holder.hostname // ""), (.deferred.reason // ""), (.deferred.resume_after // "")] | join("\u001f")' <<<"$listed")
  listed=$("$DELTA" list-runs -w "$ws" --resumable --check-liveness --format json) || { say "delta list-runs --resumable failed"; exit 1; }
  while read -r id; do resumable[$id]=1; done < <(jq -r '.[].run_id' <<<"$listed")
  listed=$("$DELTA" list-runs -w "$ws" --due --format json) || { say "delta list-runs --due failed"; exit 1; }
  while read -r id; do due[$id]=1; done < <(jq -r '.[].run_id' <<<"$listed")

  : >"$out/results.jsonl.tmp"
  : >"$out/remaining.jsonl.tmp"
  local -a again=() later=() blocked=()
  local index id item file state action begin=
  for ((index = 0; index < count; index++)); do
    id="$prefix-$index"
    item=$(sed -n "$((index + 1))p" "$out/items.txt")
    file="$out/$id.json"
    state=${status[$id]:-NO_RUN}
    [[ $state == COMPLETED ]] && ! { [[ -s $file ]] && jq -e '.status == "COMPLETED"' "$file" >/dev/null 2>&1; } && rebuild_result "$ws" "$id" "$file" "$item"
    if [[ $state == COMPLETED && -s $file ]] && jq -e '.status == "COMPLETED"' "$file" >/dev/null 2>&1; then
      jq -c --arg item "$item" --arg id "$id" '{item: $item, run_id: $id, result}' "$file" >>"$out/results.jsonl.tmp"
      continue
    fi
    if [[ $state == DEFERRED && -z ${due[$id]:-} ]]; then
      # ISO-8601 times of one form sort as text: the array begins once the last of them has passed.
      [[ ${resume_after[$id]} > $begin ]] && begin=${resume_after[$id]}
      action="resubmit to begin at ${resume_after[$id]} (deferred: ${reason[$id]})"
      later+=("$index")
    elif [[ $state == NO_RUN || ( -n ${resumable[$id]:-} && $state != WAITING_FOR_INPUT ) ]]; then
      action=resubmit
      again+=("$index")
    elif [[ $state == WAITING_FOR_INPUT ]]; then
      action="answer: $DELTA continue --run-id $id -w $ws -m '<answer>', then resume"
      blocked+=("$id waits for an answer: $DELTA continue --run-id $id -w $ws -m '<answer>'")
    else
      action="wait: held by a running engine${holder[$id]:+ on ${holder[$id]}}"
      blocked+=("$id is still running${holder[$id]:+ on ${holder[$id]}}: resume again once it has ended")
    fi
    # The last attempt's error, when it left a RunResult.
    jq -nc --arg item "$item" --arg id "$id" --arg status "$state" --arg action "$action" \
      --slurpfile last <({ [[ -s $file ]] && jq -c . "$file" 2>/dev/null; } || true) \
      '{item: $item, run_id: $id, status: $status, error: ($last[0].error // null), next: $action}' >>"$out/remaining.jsonl.tmp"
  done
  mv "$out/results.jsonl.tmp" "$out/results.jsonl"
  mv "$out/remaining.jsonl.tmp" "$out/remaining.jsonl"
  local done_count
  done_count=$(wc -l <"$out/results.jsonl")
  say "$done_count of $count items completed (results.jsonl); ${#again[@]} to resubmit, ${#later[@]} deferred${begin:+ until $begin}, ${#blocked[@]} blocked"
  local line
  for line in "${blocked[@]+"${blocked[@]}"}"; do say "  $line"; done
  ((done_count == count)) && return 0
  if ((${#again[@]} + ${#later[@]} == 0 || report_only)); then
    ((${#again[@]} > 0)) && say "  to resubmit: ${again[*]/#/$prefix-}"
    ((${#later[@]} > 0)) && say "  to resubmit at $begin: ${later[*]/#/$prefix-}"
    return 1
  fi

  require sbatch
  local indexes job
  local -a jobs=()
  if ((${#again[@]} > 0)); then
    indexes=$(IFS=,; echo "${again[*]}")
    job=$(submit_array "$out" "$indexes") && [[ -n $job ]] || { say "sbatch failed"; exit 1; }
    say "resubmitted ${#again[@]} items as job array $job (indexes $indexes)"
    jobs+=("$job")
  fi
  if ((${#later[@]} > 0)); then
    # Slurm reads --begin in the local time zone; resume_after is UTC.
    indexes=$(IFS=,; echo "${later[*]}")
    job=$(submit_array "$out" "$indexes" "--begin=$(date -d "$begin" +%Y-%m-%dT%H:%M:%S)") && [[ -n $job ]] || { say "sbatch failed"; exit 1; }
    say "resubmitted ${#later[@]} deferred items as job array $job (indexes $indexes), to begin at $begin"
    jobs+=("$job")
  fi
  say "run resume again once the job arrays have ended"
  (IFS=:; echo "${jobs[*]}")
  return 3
}

case "${1:-}" in
  submit) shift; submit "$@" ;;
  resume) shift; resume "$@"; exit $? ;;
  -h | --help) usage ;;
  *) usage >&2; exit 2 ;;
esac
