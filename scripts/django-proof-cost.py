#!/usr/bin/env python3
"""Proof cost on real Django (issue 25): a one-line bug in django/contrib/auth/password_validation.py,
its failing test in auth_tests.test_validators, and `efix run` with no suite configured.

Usage: [DJANGO_PROOF_COST_ONLY=honest|regression] [DJANGO_PROOF_COST_OPTIONS="--parallel 1"]
       scripts/django-proof-cost.py EFIX [WORK]   (EFIX an absolute path; WORK defaults to
target/tmp/django-real; the first run downloads Django's sdist with pip, which holds tests/ and
tests/runtests.py, and installs it editable in a venv there; nothing is added to the repository)

Two runs, both with the replay engine:
- honest: the one-line fix; expected exit 0;
- regression: the same fix plus a change that breaks other auth tests (hashers'
  is_password_usable, tested in auth_tests.test_hashers and others, not in test_validators);
  expected exit 1 (refused by the derived suite).

For each it prints the whole run's wall time against the time of the commands the proof
needed (the reproduction's runs, the chosen suite's runs, the runs with the change, the canaries
and the perturbed copies), the suite forms tried with their estimates, and the canary checks.
"""
import glob
import json
import os
import subprocess
import sys
import tarfile
import time

EFIX = os.path.abspath(sys.argv[1])
WORK = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join("target", "tmp", "django-real"))
VERSION = "django==5.1.*"
# DJANGO_PROOF_COST_OPTIONS: runner options put before the label (`--parallel 1`).
REPRO = " ".join(["python tests/runtests.py", os.environ.get("DJANGO_PROOF_COST_OPTIONS", ""),
                  "auth_tests.test_validators.MinimumLengthValidatorTest.test_validate"]).replace("  ", " ")
BUG = ("django/contrib/auth/password_validation.py",
       "        if len(password) < self.min_length:\n",
       "        if len(password) <= self.min_length:\n")
BREAK = ("django/contrib/auth/hashers.py",
         "    return encoded is None or not encoded.startswith(UNUSABLE_PASSWORD_PREFIX)\n",
         "    return encoded is None or encoded.startswith(UNUSABLE_PASSWORD_PREFIX)\n")
NEEDED = {"reproduction", "tests-only-reproduction", "tests-only-suite", "fixed-reproduction",
          "fixed-suite", "canary"}


def sh(*argv, **kw):
    return subprocess.run(argv, check=True, **kw)


def git(repo, *args):
    return sh("git", "-C", repo, "-c", "user.name=b", "-c", "user.email=b@b", *args)


def setup():
    """The sdist, its venv and a scratch git repository at the released source."""
    base = os.path.join(WORK, "base")
    venv = os.path.join(WORK, "venv")
    if not os.path.isdir(base):
        os.makedirs(os.path.join(WORK, "dl"), exist_ok=True)
        sh(sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
           VERSION, "-d", os.path.join(WORK, "dl"))
        sdist = sorted(glob.glob(os.path.join(WORK, "dl", "django-*.tar.gz")))[-1]
        with tarfile.open(sdist) as tar:
            tar.extractall(WORK)
        top = sdist[:-len(".tar.gz")].replace(os.path.join(WORK, "dl"), WORK)
        for root, dirs, files in os.walk(top):
            for name in dirs + files:
                os.lchown(os.path.join(root, name), os.getuid(), os.getgid())
        os.rename(top, base)
    if not os.path.isdir(venv):
        # Django's own dependencies only: each scenario's checkout is put on the venv's path
        # by a .pth file (`use`), as `pip install -e` of that checkout would.
        sh(sys.executable, "-m", "venv", venv)
        # tblib: the parallel runner sends failures' tracebacks between processes with it.
        sh(os.path.join(venv, "bin", "pip"), "install", "-q", "asgiref>=3.8.1", "sqlparse>=0.3.1",
           "tblib>=1.5.0")
    if not os.path.isdir(os.path.join(base, ".git")):
        with open(os.path.join(base, ".gitignore"), "a") as f:
            f.write("__pycache__/\n*.egg-info/\n*.pyc\nefix-artifacts/\n")
        sh("git", "init", "-q", base)
        git(base, "add", "-A")
        git(base, "commit", "-qm", "Django release")
    return base, venv


def replace(path, old, new):
    text = open(path).read()
    assert old in text, (path, old)
    with open(path, "w") as f:
        f.write(text.replace(old, new, 1))


def scenario(base, name, edits):
    """A fresh clone of the release with the bug committed, and a replay file with `edits`."""
    repo = os.path.join(WORK, name, "repo")
    if os.path.isdir(os.path.join(WORK, name)):
        sh("rm", "-rf", os.path.join(WORK, name))
    os.makedirs(os.path.join(WORK, name))
    sh("git", "clone", "-q", base, repo)
    replace(os.path.join(repo, BUG[0]), BUG[1], BUG[2])
    git(repo, "commit", "-qam", "a one-line bug")
    replay = os.path.join(WORK, name, "replay.json")
    with open(replay, "w") as f:
        json.dump({"version": 1, "plan": {"hypothesis": "h", "focus_files": [BUG[0]]},
                   "fix": [{"edits": [{"path": p, "old_text": o, "new_text": n} for p, o, n in edits],
                            "root_cause": "r", "fix_summary": "f", "tests_summary": "t",
                            "risk_rollback": "x",
                            "file_justifications": [{"file": p, "reason": "r"} for p, _, _ in edits]}]}, f)
    return repo, replay


def use(venv, repo):
    """Make `repo` the venv's Django."""
    (site,) = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))
    with open(os.path.join(site, "django-checkout.pth"), "w") as f:
        f.write(repo + "\n")


def run(base, venv, name, edits):
    repo, replay = scenario(base, name, edits)
    use(venv, repo)
    artifacts = os.path.join(WORK, name, "artifacts")
    env = dict(os.environ)
    env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env["PATH"]
    started = time.monotonic()
    done = subprocess.run([EFIX, "run", "--repro", REPRO, "--engine", "replay", "--replay", replay,
                           "--repo", repo, "--artifacts", artifacts, "--max-rounds", "1"],
                          env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    evidence = json.load(open(os.path.join(artifacts, "evidence.json")))
    ms = lambda c: (c.get("outcome") or {}).get("duration_ms", 0)
    chosen = set((evidence.get("reproduction") or {}).get("suite-baselines") or [])
    needed = sum(ms(c) for c in evidence["commands"] if c["purpose"] in NEEDED or c["id"] in chosen) / 1000
    every = sum(ms(c) for c in evidence["commands"]) / 1000
    choice = evidence["reproduction"].get("suite-choice") or {}
    print(f"### {name}: exit {done.returncode}, status {evidence['result']['status']}")
    print()
    print("| wall | all commands | needed | wall / needed | commands | suite chosen |")
    print("|---|---|---|---|---|---|")
    print(f"| {wall:.1f} s | {every:.1f} s | {needed:.1f} s | {wall / max(needed, 0.001):.2f} "
          f"| {len(evidence['commands'])} | `{choice.get('chosen')}` |")
    print()
    print("| form | verdict | estimate | detail |")
    print("|---|---|---|---|")
    for attempt in choice.get("attempts", []):
        est = attempt.get("estimate")
        est_text = (f"{est['count']} tests ({est['source']}), {est['estimate-ms'] / 1000:.1f} s" if est else "")
        print(f"| `{attempt['command']}` | {attempt['verdict']} | {est_text} | {attempt['detail'][:160]} |")
    print()
    print("| command | purpose | seconds |")
    print("|---|---|---|")
    for c in evidence["commands"]:
        print(f"| `{c['command'][:110]}` | {c['purpose']} | {ms(c) / 1000:.1f} |")
    print()
    for rnd in evidence.get("rounds", []):
        for check in rnd.get("checks") or []:
            if check["id"].startswith("prove."):
                status = "passed" if check["passed"] else "failed"
                if check.get("weakens"):
                    status += f" (weakens: {check['weakens']})"
                print(f"- `{check['id']}`: {status}: {check['detail'][:200]}")
        newly = ((rnd.get("prove") or {}).get("table") or {}).get("newly-failing") or []
        print(f"- round verdict: {rnd.get('verdict')}; newly failing: {len(newly)} "
              f"({', '.join(newly[:3])}{', …' if len(newly) > 3 else ''})")
    print(flush=True)


def main():
    base, venv = setup()
    fix = [(BUG[0], BUG[2], BUG[1])]
    only = os.environ.get("DJANGO_PROOF_COST_ONLY", "honest,regression").split(",")
    if "honest" in only:
        run(base, venv, "honest", fix)
    if "regression" in only:
        run(base, venv, "regression", fix + [BREAK])


main()
