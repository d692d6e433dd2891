#!/bin/sh
# The "Summary" step of action.yml: show the result on the run's summary page. The table and
# every figure come from pr-body.md, which efix renders from the recorded evidence only.
set -u

summary=${GITHUB_STEP_SUMMARY:-/dev/stderr}
body=${EFIX_ARTIFACTS:-}/pr-body.md
{
  if [ -n "${EFIX_ARTIFACTS:-}" ] && [ -f "$body" ]; then
    cat "$body"
  else
    printf '## efix: %s\n\nefix exited with code %s before writing evidence; the log of the "Run efix" step says why.\n' \
      "${EFIX_RESULT:-error}" "${EFIX_EXIT_CODE:-unknown}"
  fi
  if [ -n "${EFIX_PR_URL:-}" ]; then
    printf '\nPull request: %s\n' "$EFIX_PR_URL"
  fi
} >>"$summary"
