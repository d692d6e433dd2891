#!/usr/bin/env bash
# The cost of the canary runs (issue 18): extra runner invocations and their time, from the
# evidence of real runs. Usage: scripts/canary-cost.sh [EFIX] [RUNS]
# Runs the bundled demo (cargo test) and, when `pytest` is on PATH, a small pytest project
# fixed through the replay engine; prints, per run, the canary commands and their share of
# the time spent in commands.
set -euo pipefail
efix=${1:-target/debug/efix}
runs=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cost() {
  python3 - "$1" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
ms = lambda c: (c.get("outcome") or {}).get("duration_ms", 0)
canary = [c for c in e["commands"] if c["purpose"] == "canary"]
print(f"  commands {len(e['commands'])}, canary {len(canary)}: "
      f"{sum(map(ms, canary))} ms of {sum(map(ms, e['commands']))} ms "
      f"({', '.join(str(ms(c)) for c in canary)})")
PY
}
echo "demo (cargo test):"
for i in $(seq "$runs"); do
  "$efix" demo --artifacts "$work/demo$i" >/dev/null 2>&1 || true
  cost "$work/demo$i/evidence.json"
done
if command -v pytest >/dev/null; then
  echo "pytest:"
  for i in $(seq "$runs"); do
    repo="$work/py$i/repo"
    mkdir -p "$repo/tests"
    printf '__pycache__/\n.pytest_cache/\n' >"$repo/.gitignore"
    printf '[pytest]\npythonpath = .\n' >"$repo/pytest.ini"
    printf 'def word_count(text):\n    return len(text.split(" "))\n' >"$repo/words.py"
    printf 'from words import word_count\n\n\ndef test_repeated_spaces():\n    assert word_count("a  b") == 2\n' >"$repo/tests/test_words.py"
    git -C "$repo" init -q && git -C "$repo" add -A && git -C "$repo" -c user.name=b -c user.email=b@b commit -qm i
    cat >"$work/py$i/replay.yml" <<'YML'
version: 1
plan: {hypothesis: h, focus_files: [words.py]}
fix:
  - edits: [{path: words.py, old_text: 'text.split(" ")', new_text: 'text.split()'}]
    root_cause: r
    fix_summary: f
    tests_summary: t
    risk_rollback: x
    file_justifications: [{file: words.py, reason: r}]
YML
    "$efix" run --repro "pytest tests/test_words.py::test_repeated_spaces" --engine replay \
      --replay "$work/py$i/replay.yml" --repo "$repo" --artifacts "$work/py$i/artifacts" \
      --dry-run >/dev/null 2>&1 || true
    cost "$work/py$i/artifacts/evidence.json"
  done
fi
