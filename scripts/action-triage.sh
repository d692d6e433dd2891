#!/bin/sh
# The "Triage the failed run" step of action.yml (mode `triage`): group the failures of the
# workflow run that triggered the workflow by cause and hand the matrix to the workflow. The
# inputs arrive as environment variables only (never as ${{ }} text inside a script).
# efix writes `matrix`, `jobs` and `failures` to $GITHUB_OUTPUT and the table to the step
# summary itself.
set -u

fail() {
  printf '::error title=efix triage::%s\n' "$*" >&2
  exit 2
}

if [ -z "${EFIX_RUN_ID:-}" ]; then
  fail "mode triage reads the failed workflow run of a workflow_run event; this event (${GITHUB_EVENT_NAME:-none}) names none"
fi
case ${INPUT_MAX_JOBS:-8} in
  '' | *[!0-9]*) fail "max-jobs must be a whole number, not '${INPUT_MAX_JOBS:-}'" ;;
esac
set -- triage --run-id "$EFIX_RUN_ID" --max-jobs "${INPUT_MAX_JOBS:-8}"
if [ -n "${INPUT_CONFIG:-}" ]; then
  set -- "$@" --config "$INPUT_CONFIG"
fi

efix "$@"
code=$?
case $code in
  0) ;;
  # No failing test in the run's logs (a build or lint failure): no job to start.
  3) printf '::notice title=efix triage::no failing test found in the failed jobs'"'"' logs\n' >&2 ;;
  4) printf '::warning title=efix triage::commands.allow refuses every command; no job to start\n' >&2 ;;
  *) exit "$code" ;;
esac
exit 0
