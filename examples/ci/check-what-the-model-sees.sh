#!/usr/bin/env bash
# Fails when a change to the agent (its prompt, its tools, its context, its model settings) alters what the model
# sees: replays the recorded run folder with --replay-strict in a copy of the workspace it was recorded in, with no
# model and no key. On a difference it prints the annotation, then replays the recording once more without the check
# (recording every request the agent now makes) and prints `delta diff` of the recorded run and that one.
#
# Usage: check-what-the-model-sees.sh [-a AGENT_DIR] [-r RECORDED_RUN] [-w WORKSPACE] [-m TASK] [-u]
#   -a  the agent (default: agent/ beside this script)
#   -r  the recorded run folder (default: what-the-model-sees/recorded/ beside this script)
#   -w  the workspace the recording was made in, copied afresh for each check (default: what-the-model-sees/workspace/)
#   -m  the task the recorded run was given (default: the example's)
#   -u  the change is meant: record the run again (its replies from the recorded run) and replace RECORDED_RUN
# Exit status: 0 the model sees what it saw; 1 it does not (REPLAY_DIVERGED) or the replay failed; 126 refused.
# DELTA names the delta command (default: delta).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DELTA=${DELTA:-delta}
AGENT=$HERE/agent
RECORDED=$HERE/what-the-model-sees/recorded
FIXTURE=$HERE/what-the-model-sees/workspace
TASK="Check the documentation of this repository"
UPDATE=""

usage() { sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while getopts "a:r:w:m:uh" opt; do
  case "$opt" in
    a) AGENT=$OPTARG ;;
    r) RECORDED=$OPTARG ;;
    w) FIXTURE=$OPTARG ;;
    m) TASK=$OPTARG ;;
    u) UPDATE=1 ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
command -v "$DELTA" >/dev/null || { echo "::error::'$DELTA' not found on PATH" >&2; exit 2; }

scratch=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/what-the-model-sees.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# The workspace as the recording saw it: a tool's output is part of what the model sees.
cp -R "$FIXTURE" "$scratch/ws"

if [[ -n $UPDATE ]]; then
  # The recorded replies, played without a check, make the new reference run; only what a replay reads is kept.
  "$DELTA" run --agent "$AGENT" -w "$scratch/ws" --run-id recorded --replay "$RECORDED" -m "$TASK" --format raw >/dev/null
  rm -rf "$RECORDED.new"
  mkdir -p "$RECORDED.new/io"
  cp "$scratch/ws/.delta/recorded/journal.jsonl" "$RECORDED.new/"
  cp -R "$scratch/ws/.delta/recorded/io/invocations" "$RECORDED.new/io/"
  rm -rf "$RECORDED"
  mv "$RECORDED.new" "$RECORDED"
  echo "::notice::Recorded again in $RECORDED: commit it with the change to the agent" >&2
  exit 0
fi

code=0
"$DELTA" run --agent "$AGENT" -w "$scratch/ws" --run-id check --replay "$RECORDED" --replay-strict -m "$TASK" --format json -o "$scratch/result.json" >/dev/null || code=$?
case "$code" in
  0) echo "::notice::The model sees what the recorded run showed it" >&2 ;;
  1)
    if grep -q '"type": "REPLAY_DIVERGED"' "$scratch/result.json"; then
      echo "::error::A change alters what the model sees; if it is meant, record again with $0 -u and commit the recording" >&2
      # The strict run stopped before its first differing request: a plain replay sends them all, so each is recorded.
      cp -R "$FIXTURE" "$scratch/ws-now"
      "$DELTA" run --agent "$AGENT" -w "$scratch/ws-now" --run-id now --replay "$RECORDED" -m "$TASK" --format raw >/dev/null 2>&1 || true
      # Exit 1 says they differ: the diff is the explanation, not a second failure.
      "$DELTA" diff "$RECORDED" "$scratch/ws-now/.delta/now" || true
    else
      echo "::error::The replay failed: $(grep -m1 '"message"' "$scratch/result.json" || echo 'no result')" >&2
    fi
    ;;
  *) echo "::error::delta exited $code before the check could run; see the message above" >&2 ;;
esac
exit "$code"
