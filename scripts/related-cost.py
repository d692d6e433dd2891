#!/usr/bin/env python3
"""What the related form costs (issue 25, item 2): one generated pytest project whose whole
suite is estimated over the budget, fixed through the replay engine; prints the commands the
related form added (its listing, its run before and after the change) and their time, against
the whole run.

Usage: scripts/related-cost.py [EFIX] [MODULES] [TESTS]   (from the repository root, after the
integration tests made target/tmp/pytest-venv)

The project: a package `app/` of MODULES modules, each importing the one before it (so a test
of module k reaches module 0 through k imports), TESTS test files under `other/` each
importing one module, a slow reproduction under `tests/` and 300 quick benchmark tests; the
change edits `app/m0.py`, which every module reaches, and `app/m{MODULES-1}.py`'s tests are
the ones furthest from it.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.getcwd()
EFIX = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/debug/efix")
MODULES = int(sys.argv[2]) if len(sys.argv) > 2 else 6
TESTS = int(sys.argv[3]) if len(sys.argv) > 3 else 400
PATH = os.path.join(ROOT, "target", "tmp", "pytest-venv", "bin")


def files():
    out = {
        ".gitignore": "__pycache__/\n.pytest_cache/\n",
        "pytest.ini": "[pytest]\npythonpath = .\n",
        ".efix.yml": "version: 1\ntest:\n  suite-budget-ms: 30000\n",
        "app/__init__.py": "",
        "app/m0.py": 'def words(text):\n    return text.split(" ")\n',
        "tests/test_words.py": "import time\n\nfrom app.m0 import words\n\n\n"
        "def test_repeated_spaces():\n    time.sleep(0.3)\n    assert len(words(\"a  b\")) == 2\n",
        "bench/test_many.py": "import pytest\n\n\n@pytest.mark.parametrize(\"n\", range(300))\n"
        "def test_many(n):\n    assert n >= 0\n",
        "lone/__init__.py": "",
        "lone/util.py": "def one():\n    return 1\n",
    }
    for k in range(1, MODULES):
        out[f"app/m{k}.py"] = f"from app.m{k - 1} import words\n\n\ndef f{k}(text):\n    return len(words(text))\n"
    for t in range(TESTS):
        # One test file in ten reaches the change; the others import a module that does not.
        if t % 10 == 0:
            k = 1 + t % max(MODULES - 1, 1)
            body = f"from app.m{k} import f{k}\n\n\ndef test_{t}():\n    assert f{k}(\"a b\") == 2\n"
        else:
            body = f"from lone.util import one\n\n\ndef test_{t}():\n    assert one() == 1\n"
        out[f"other/t{t // 50}/test_{t}.py"] = body
    return out


def main():
    work = tempfile.mkdtemp(prefix="related-cost-")
    try:
        repo = os.path.join(work, "repo")
        for path, text in files().items():
            full = os.path.join(repo, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        git = ["git", "-C", repo, "-c", "user.name=b", "-c", "user.email=b@b"]
        subprocess.run(["git", "init", "-q", repo], check=True)
        subprocess.run(git + ["add", "-A"], check=True)
        subprocess.run(git + ["commit", "-qm", "init"], check=True)
        diff = ("--- a/app/m0.py\n+++ b/app/m0.py\n@@ -1,2 +1,2 @@\n def words(text):\n"
                "-    return text.split(\" \")\n+    return text.split()\n")
        replay = os.path.join(work, "replay.json")
        with open(replay, "w") as f:
            json.dump({"version": 1, "plan": {"hypothesis": "h", "focus_files": ["app/m0.py"]},
                       "fix": [{"output": diff, "root_cause": "r", "fix_summary": "f"}]}, f)
        artifacts = os.path.join(work, "artifacts")
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([PATH, env["PATH"]])
        started = time.monotonic()
        done = subprocess.run([EFIX, "run", "--repro", "pytest tests/test_words.py::test_repeated_spaces",
                               "--engine", "replay", "--replay", replay, "--repo", repo,
                               "--artifacts", artifacts, "--max-rounds", "1"],
                              env=env, capture_output=True, text=True)
        wall = time.monotonic() - started
        evidence = json.load(open(os.path.join(artifacts, "evidence.json")))
        ms = lambda c: (c.get("outcome") or {}).get("duration_ms", (c.get("outcome") or {}).get("duration-ms", 0))
        related = evidence["rounds"][0].get("related") or {}
        choice = evidence["reproduction"].get("suite-choice") or {}
        for a in choice.get("attempts", []):
            print(f"form `{a['command']}`: {a['verdict']}: {a['detail'][:160]}")
        ids = [i for i in [related.get("baseline"), related.get("fixed")] if i is not None]
        estimate = related.get("estimate") or {}
        if "listing" in estimate:
            ids.append(estimate["listing"])
        added = [c for c in evidence["commands"]
                 if c["id"] in ids or c["purpose"] in ("related-baseline", "related-fixed")]
        every = sum(ms(c) for c in evidence["commands"])
        print(f"exit {done.returncode}, {len(evidence['commands'])} commands, wall {wall:.1f} s, "
              f"all commands {every / 1000:.1f} s")
        print(f"selected {len(related.get('selected', []))} of {related.get('searched')} test files searched "
              f"(already run: {len(related.get('already-run', []))}, bounded: {related.get('bounded')})")
        print("| command | purpose | duration |")
        print("|---|---|---|")
        for c in added:
            command = c["command"] if len(c["command"]) < 70 else c["command"][:67] + "..."
            print(f"| `{command}` | {c['purpose']} | {ms(c) / 1000:.2f} s |")
        print(f"| total added | | {sum(ms(c) for c in added) / 1000:.2f} s |")
        print(f"related verdict: {related.get('verdict')}; {related.get('detail')}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


main()
