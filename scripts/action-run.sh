#!/bin/sh
# The "Run efix" step of action.yml: build efix's argv from the action's inputs, which arrive
# as environment variables only (never as ${{ }} text inside a script), run it, and hand the
# outputs to the workflow. The step itself always succeeds, so that publishing, the summary
# and the artifact upload run; the action's last step fails with efix's exit code.
set -u

fail() {
  printf '::error title=efix::%s\n' "$*" >&2
  printf 'exit-code=2\nresult=error\n' >>"$GITHUB_OUTPUT"
  exit 0
}

artifacts=${INPUT_ARTIFACTS_DIR:-${RUNNER_TEMP:-/tmp}/efix-artifacts}
set -- run --artifacts "$artifacts" --github-output "$GITHUB_OUTPUT"
# The event decides who may trigger a run and may name the command; the input is the fallback.
if [ -n "${GITHUB_EVENT_NAME:-}" ] && [ -n "${GITHUB_EVENT_PATH:-}" ]; then
  set -- "$@" --from-event
fi
if [ -n "${INPUT_COMMAND:-}" ]; then
  set -- "$@" --repro "$INPUT_COMMAND"
fi
if [ -n "${INPUT_SUITE:-}" ]; then
  # One suite per line; the loop reads a here-document, so it runs in this shell.
  while IFS= read -r suite; do
    suite=$(printf '%s' "$suite" | tr -d '\r')
    if [ -n "$suite" ]; then
      set -- "$@" --suite "$suite"
    fi
  done <<SUITES
$INPUT_SUITE
SUITES
fi
if [ -n "${INPUT_CONFIG:-}" ]; then
  set -- "$@" --config "$INPUT_CONFIG"
fi
if [ -n "${INPUT_MAX_ROUNDS:-}" ]; then
  case $INPUT_MAX_ROUNDS in
    *[!0-9]*) fail "max-rounds must be a whole number, not '$INPUT_MAX_ROUNDS'" ;;
  esac
  set -- "$@" --max-rounds "$INPUT_MAX_ROUNDS"
fi
if [ -n "${INPUT_CANDIDATES:-}" ]; then
  case $INPUT_CANDIDATES in
    *[!0-9]*) fail "candidates must be a whole number, not '$INPUT_CANDIDATES'" ;;
  esac
  set -- "$@" --candidates "$INPUT_CANDIDATES"
fi
if [ -n "${INPUT_TIMEOUT_MINUTES:-}" ]; then
  case $INPUT_TIMEOUT_MINUTES in
    *[!0-9]*) fail "timeout-minutes must be a whole number, not '$INPUT_TIMEOUT_MINUTES'" ;;
  esac
  set -- "$@" --timeout-seconds "$((INPUT_TIMEOUT_MINUTES * 60))"
fi
case ${INPUT_DRY_RUN:-false} in
  true) set -- "$@" --dry-run ;;
  false) ;;
  *) fail "dry-run must be true or false, not '$INPUT_DRY_RUN'" ;;
esac

efix "$@"
code=$?
{
  printf 'exit-code=%s\n' "$code"
  printf 'artifacts-dir=%s\n' "$artifacts"
  printf 'artifact-name=efix-%s-%s-%s\n' "${GITHUB_JOB:-job}" "${GITHUB_RUN_ATTEMPT:-1}" "$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
} >>"$GITHUB_OUTPUT"
# efix writes `result` whenever it got as far as a run or a refusal; anything else is an error.
if ! grep -q '^result=' "$GITHUB_OUTPUT"; then
  printf 'result=error\n' >>"$GITHUB_OUTPUT"
fi
exit 0
