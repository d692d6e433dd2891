#!/bin/sh
# The "Publish" step of action.yml: turn the run's artifacts into a pull request and an issue
# comment with `efix publish` (inputs arrive as environment variables only). Nothing is
# published when the run wrote no evidence (a refused trigger, a usage error).
set -u

if [ ! -f "${EFIX_ARTIFACTS:-}/evidence.json" ]; then
  printf 'efix: nothing to publish: no evidence in %s\n' "${EFIX_ARTIFACTS:-(no directory)}" >&2
  exit 0
fi
set -- publish --artifacts "$EFIX_ARTIFACTS" --github-output "$GITHUB_OUTPUT"
[ "${INPUT_DRY_RUN:-false}" = true ] && set -- "$@" --dry-run
[ "${INPUT_CREATE_PR:-true}" = true ] || set -- "$@" --no-pr
[ "${INPUT_COMMENT:-true}" = true ] || set -- "$@" --no-comment
[ "${INPUT_DRAFT:-false}" = true ] && set -- "$@" --draft
if [ -n "${INPUT_LABELS:-}" ]; then
  # Labels are separated by commas or line breaks; spaces around them are dropped.
  labels=$(printf '%s\n' "$INPUT_LABELS" | tr -d '\r' | tr ',' '\n')
  while IFS= read -r label; do
    label=$(printf '%s' "$label" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
    if [ -n "$label" ]; then
      set -- "$@" --label "$label"
    fi
  done <<LABELS
$labels
LABELS
fi
exec efix "$@"
