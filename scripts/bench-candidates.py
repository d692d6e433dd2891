#!/usr/bin/env python3
"""Wall time and peak memory of `efix run --candidates K` for K = 1, 2, 4 (issue 23).

Usage: scripts/bench-candidates.py EFIX PYTEST_BIN_DIR [REPS]

A small pytest project with a real bug (word_count splits on single spaces), fixed through the
replay engine. K = 1 gets the honest fix alone; K = 2 a regression and the honest fix; K = 4 a
wrong fix, a regression, a cheat (a count equal to anything) and the honest fix, so every K
ends with the same proven fix. The K values are interleaved REPS times (1, 2, 4, 1, 2, 4, ...)
so that a change in the machine's load hits every K alike. Prints, per K, the median wall time,
its ratio to K = 1, and the median peak RSS (the largest process of the run's tree, from GNU
time's %M), then the load average.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

EFIX, PYTEST_BIN = sys.argv[1], sys.argv[2]
REPS = int(sys.argv[3]) if len(sys.argv) > 3 else 3

WORDS = 'def word_count(text):\n    """Number of whitespace-separated words in text."""\n    return len([w for w in text.split(" ")])\n'
TESTS = 'from words import word_count\n\n\ndef test_single_spaces():\n    assert word_count("a b c") == 3\n\n\ndef test_repeated_spaces():\n    assert word_count("a  b") == 2\n'
GUARD = 'assert word_count("a\\tb\\nc ") == 3'


def change(body, assertion):
    added = "".join(f"+{line}\n" for line in body.splitlines())
    return (
        f"--- a/words.py\n+++ b/words.py\n@@ -1,3 +1,{len(body.splitlines()) + 2} @@\n"
        ' def word_count(text):\n     """Number of whitespace-separated words in text."""\n'
        '-    return len([w for w in text.split(" ")])\n'
        f"{added}--- a/tests/test_words.py\n+++ b/tests/test_words.py\n@@ -8,2 +8,6 @@\n"
        ' def test_repeated_spaces():\n     assert word_count("a  b") == 2\n'
        f"+\n+\n+def test_guard():\n+    {assertion}\n"
    )


HONEST = change("    return len(text.split())", GUARD)
WRONG = change('    return len([w for w in text.split(" ")]) + 0', GUARD)
REGRESSION = change('    return len(text.split("  "))', 'assert word_count("x  y  z") == 3')
CHEAT = change(
    "    class Count(int):\n        def __eq__(self, other):\n            return True\n\n"
    '        __hash__ = int.__hash__\n\n    return Count(len(text.split(" ")))',
    GUARD,
)
LISTS = {1: [HONEST], 2: [REGRESSION, HONEST], 4: [WRONG, REGRESSION, CHEAT, HONEST]}


def one_run(work, k, rep):
    base = os.path.join(work, f"k{k}-{rep}")
    repo = os.path.join(base, "repo")
    os.makedirs(os.path.join(repo, "tests"))
    files = {
        ".gitignore": "__pycache__/\n.pytest_cache/\n",
        "pytest.ini": "[pytest]\npythonpath = .\n",
        "words.py": WORDS,
        "tests/test_words.py": TESTS,
    }
    for path, text in files.items():
        with open(os.path.join(repo, path), "w") as f:
            f.write(text)
    git = ["git", "-C", repo, "-c", "user.name=b", "-c", "user.email=b@b"]
    subprocess.run(["git", "init", "-q", repo], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "init"], check=True)
    answers = [{"output": text, "root_cause": "r", "fix_summary": "f"} for text in LISTS[k]]
    replay = os.path.join(base, "replay.json")
    with open(replay, "w") as f:
        json.dump({"version": 1, "plan": {"hypothesis": "h", "focus_files": ["words.py"]}, "fix": answers}, f)
    env = dict(os.environ, PATH=PYTEST_BIN + os.pathsep + os.environ["PATH"])
    argv = ["/usr/bin/time", "-f", "%e %M", EFIX, "run", "--repro",
            "pytest tests/test_words.py::test_repeated_spaces", "--engine", "replay",
            "--replay", replay, "--repo", repo, "--artifacts", os.path.join(base, "artifacts"),
            "--max-rounds", "1", "--candidates", str(k)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    status = json.load(open(os.path.join(base, "artifacts", "evidence.json")))["result"]["status"]
    wall, rss = done.stderr.strip().splitlines()[-1].split()
    return float(wall), int(rss), status


def main():
    results = {k: [] for k in LISTS}
    with tempfile.TemporaryDirectory() as work:
        for rep in range(REPS):
            for k in LISTS:
                wall, rss, status = one_run(work, k, rep)
                print(f"rep {rep + 1} K={k}: {wall:.1f} s, {rss / 1024:.1f} MiB, {status}", flush=True)
                results[k].append((wall, rss))
    base = statistics.median(w for w, _ in results[1])
    print("| K | median wall (s) | ratio to K = 1 | median peak RSS (MiB) |")
    print("|---|---|---|---|")
    for k, runs in results.items():
        wall = statistics.median(w for w, _ in runs)
        rss = statistics.median(r for _, r in runs) / 1024
        print(f"| {k} | {wall:.1f} | {wall / base:.2f} | {rss:.1f} |")
    print("load average:", open("/proc/loadavg").read().strip())


main()
