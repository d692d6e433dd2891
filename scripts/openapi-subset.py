#!/usr/bin/env python3
"""Trim GitHub's REST OpenAPI description to the operations efix calls.

The description comes from the npm package @octokit/openapi (generated/api.github.com.json),
fetched with `npm pack` into a temporary directory. The subset keeps each operation whole
(parameters, request body, responses) and every component it references, directly or not;
response examples are dropped, since only the schemas are used. The stand-in GitHub server of
the integration tests validates every request efix sends against this subset.

Usage: scripts/openapi-subset.py [--version VERSION] [--out FILE]
The operation list must match `Op` in src/publish/api.rs; a unit test there checks it.
"""

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGE = "@octokit/openapi"
DEFAULT_VERSION = "23.0.2"
DESCRIPTION = "package/generated/api.github.com.json"

# (method, path) of every operation efix calls.
OPERATIONS = [
    ("get", "/repos/{owner}/{repo}/git/commits/{commit_sha}"),
    ("post", "/repos/{owner}/{repo}/git/blobs"),
    ("post", "/repos/{owner}/{repo}/git/trees"),
    ("post", "/repos/{owner}/{repo}/git/commits"),
    ("get", "/repos/{owner}/{repo}/git/ref/{ref}"),
    ("post", "/repos/{owner}/{repo}/git/refs"),
    ("patch", "/repos/{owner}/{repo}/git/refs/{ref}"),
    ("get", "/repos/{owner}/{repo}/pulls"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("post", "/repos/{owner}/{repo}/pulls"),
    ("patch", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/labels"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("post", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"),
    ("get", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    ("get", "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs"),
    ("get", "/repos/{owner}/{repo}/actions/jobs/{job_id}/logs"),
]


def fetch(version: str) -> dict:
    """npm pack the package into a temporary directory and load the description."""
    with tempfile.TemporaryDirectory(prefix="efix-openapi-") as tmp:
        subprocess.run(
            ["npm", "pack", "--silent", f"{PACKAGE}@{version}"],
            cwd=tmp,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        tarball = next(Path(tmp).glob("*.tgz"))
        with tarfile.open(tarball) as archive:
            member = archive.extractfile(DESCRIPTION)
            if member is None:
                sys.exit(f"{DESCRIPTION} is not in {tarball.name}")
            return json.load(member)


def drop_examples(node, in_properties=False):
    """Examples are documentation; keep schemas only. A property that happens to be named
    `example` (inside a `properties` map) is a field, not an example, and stays."""
    if isinstance(node, dict):
        return {
            key: drop_examples(value, key == "properties" and not in_properties)
            for key, value in node.items()
            if in_properties or key not in ("examples", "example")
        }
    if isinstance(node, list):
        return [drop_examples(item) for item in node]
    return node


def refs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from refs(item)


def subset(description: dict, version: str) -> dict:
    paths = {}
    for method, path in OPERATIONS:
        item = description["paths"].get(path, {})
        if method not in item:
            sys.exit(f"{method.upper()} {path} is not in the description")
        kept = paths.setdefault(path, {})
        if "parameters" in item:
            kept["parameters"] = item["parameters"]
        kept[method] = drop_examples(item[method])
    components = {}
    pending = list(refs(paths))
    seen = set()
    while pending:
        ref = pending.pop()
        if ref in seen:
            continue
        seen.add(ref)
        if not ref.startswith("#/components/"):
            sys.exit(f"unexpected reference {ref}")
        _, _, kind, name = ref.split("/", 3)
        node = drop_examples(description["components"][kind][name])
        components.setdefault(kind, {})[name] = node
        pending.extend(refs(node))
    for kind in components:
        components[kind] = dict(sorted(components[kind].items()))
    return {
        "openapi": description["openapi"],
        "info": {
            "title": description["info"]["title"],
            "version": description["info"]["version"],
            "x-efix-source": f"{PACKAGE}@{version} {DESCRIPTION.removeprefix('package/')}, "
            "trimmed by scripts/openapi-subset.py",
        },
        "paths": dict(sorted(paths.items())),
        "components": dict(sorted(components.items())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=DEFAULT_VERSION)
    parser.add_argument(
        "--out",
        default=str(
            Path(__file__).resolve().parent.parent
            / "tests/fixtures/github/openapi-subset.json"
        ),
    )
    args = parser.parse_args()
    result = subset(fetch(args.version), args.version)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, sort_keys=False) + "\n")
    print(f"wrote {out} ({len(OPERATIONS)} operations)")


if __name__ == "__main__":
    main()
