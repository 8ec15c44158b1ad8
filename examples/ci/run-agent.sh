#!/usr/bin/env bash
# Runs one Delta agent in CI and turns its outcome into the job's: prints what happened (as GitHub
# annotations), names the run directory to upload as an artifact, and exits non-zero unless the run
# COMPLETED.
#
# Usage: run-agent.sh -a AGENT_DIR -m MESSAGE [-w WORKSPACE] [-i RUN_ID] [-r RECORDING] [-o RESULT_FILE]
#   -w  workspace the agent works in (default: $GITHUB_WORKSPACE, else the current directory)
#   -i  run id (default: ci-$GITHUB_RUN_ID-$GITHUB_RUN_ATTEMPT, else ci-local-<time>)
#   -r  answer the model calls from a recording (delta run --replay): no key, no network
#   -o  where the RunResult JSON is written (default: ./delta-result.json)
# Prints run_id=, status=, exit_code=, run_dir= and result_file= lines on stdout, and appends them to
# $GITHUB_OUTPUT when set. Exit status: delta's (0 COMPLETED, 1 FAILED, 75 DEFERRED, 101
# WAITING_FOR_INPUT, 126 refused, 130 INTERRUPTED, other: the engine was killed), and 1 should delta
# ever exit 0 without a COMPLETED result. DELTA names the delta command (default: delta).
set -euo pipefail

DELTA=${DELTA:-delta}
AGENT="" MESSAGE="" RECORDING=""
WORKSPACE=${GITHUB_WORKSPACE:-$PWD}
RUN_ID="ci-${GITHUB_RUN_ID:-local}-${GITHUB_RUN_ATTEMPT:-$(date +%s)}"
RESULT_FILE=./delta-result.json

usage() { sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while getopts "a:m:w:i:r:o:h" opt; do
  case "$opt" in
    a) AGENT=$OPTARG ;;
    m) MESSAGE=$OPTARG ;;
    w) WORKSPACE=$OPTARG ;;
    i) RUN_ID=$OPTARG ;;
    r) RECORDING=$OPTARG ;;
    o) RESULT_FILE=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
if [[ -z $AGENT || -z $MESSAGE ]]; then
  usage >&2
  exit 2
fi
for tool in "$DELTA" jq; do
  command -v "$tool" >/dev/null || { echo "::error::'$tool' not found on PATH" >&2; exit 2; }
done

args=(run --agent "$AGENT" -w "$WORKSPACE" --run-id "$RUN_ID" -m "$MESSAGE" --format json)
[[ -n $RECORDING ]] && args+=(--replay "$RECORDING")

code=0
"$DELTA" "${args[@]}" >"$RESULT_FILE" || code=$?

status=$(jq -r '.status // "NONE"' "$RESULT_FILE" 2>/dev/null || echo NONE)
error=$(jq -r 'if .error then "\(.error.type): \(.error.message)" else "" end' "$RESULT_FILE" 2>/dev/null || true)
# A refusal can come before the workspace exists: then there is no run directory to name.
run_dir=""
if ws_abs=$(cd "$WORKSPACE" 2>/dev/null && pwd) && [[ -d $ws_abs/.delta/$RUN_ID ]]; then run_dir="$ws_abs/.delta/$RUN_ID"; fi

case "$code" in
  0)
    if [[ $status == COMPLETED ]]; then
      echo "::notice::Run $RUN_ID completed: $(jq -c .result "$RESULT_FILE")" >&2
    else
      echo "::error::delta exited 0 but the run's status is $status; treating it as a failure" >&2
      code=1
    fi
    ;;
  1) echo "::error::Run $RUN_ID failed: $error" >&2 ;;
  75)
    # A rate limit, the account's quota or a budget: nothing failed and nothing is lost; the run goes on later.
    deferred=$(jq -r '"\(.deferred.reason) until \(.deferred.resume_after // "it is raised or access returns")"' "$RESULT_FILE" 2>/dev/null || echo "unknown")
    echo "::warning::Run $RUN_ID is deferred ($deferred): nothing failed; re-run the job after that, or continue this run where its directory is kept with delta continue --run-id $RUN_ID" >&2
    ;;
  101) echo "::error::Run $RUN_ID is waiting for a human answer ($(jq -r .interaction.prompt "$RESULT_FILE")); nobody can answer in CI. Answer it locally with delta continue -m, or make the agent not ask." >&2 ;;
  126) echo "::error::Refused before anything ran: $error" >&2 ;;
  130) echo "::error::Run $RUN_ID was interrupted (SIGINT/SIGTERM: was the job cancelled or did it time out?)" >&2 ;;
  *) echo "::error::delta exited $code without a result (killed? out of memory?); the run directory holds what it did" >&2 ;;
esac

outputs=$(printf 'run_id=%s\nstatus=%s\nexit_code=%s\nrun_dir=%s\nresult_file=%s\n' \
  "$RUN_ID" "$status" "$code" "$run_dir" "$(cd "$(dirname "$RESULT_FILE")" && pwd)/$(basename "$RESULT_FILE")")
echo "$outputs"
if [[ -n ${GITHUB_OUTPUT:-} ]]; then echo "$outputs" >>"$GITHUB_OUTPUT"; fi
exit "$code"
