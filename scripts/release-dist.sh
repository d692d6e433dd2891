#!/bin/sh
# After the release assets are published (release.yml): record their digests in
# dist/manifest.txt and the version in dist/VERSION with a commit on the tagged commit, made
# through the Git Data API (so GitHub signs it and no credential is written to disk), open a
# pull request with it, and move the major tag (v1 for v1.2.3) to it, so `uses: owner/efix@v1`
# installs the new binary.
#
# Environment: TAG, GITHUB_REPOSITORY, GH_TOKEN (for gh), ASSETS (the directory holding
# sha256.sum), and the tagged commit checked out in the current directory.
set -eu

: "${TAG:?}" "${GITHUB_REPOSITORY:?}" "${ASSETS:?}"
version=${TAG#v}
major=${TAG%%.*}
repo=$GITHUB_REPOSITORY
base=$(git rev-parse HEAD)
default_branch=$(gh api "repos/$repo" --jq .default_branch)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The manifest keeps other versions' lines and gets this version's from sha256.sum.
{
  grep -v "  efix-$version-" dist/manifest.txt || true
  cat "$ASSETS/sha256.sum"
} >"$work/manifest.txt"
printf '%s\n' "$version" >"$work/VERSION"

blob() {
  base64 <"$1" | tr -d '\n' | jq -Rs '{content: ., encoding: "base64"}' |
    gh api "repos/$repo/git/blobs" --input - --jq .sha
}
manifest_blob=$(blob "$work/manifest.txt")
version_blob=$(blob "$work/VERSION")
base_tree=$(gh api "repos/$repo/git/commits/$base" --jq .tree.sha)
tree=$(jq -n --arg base "$base_tree" --arg manifest "$manifest_blob" --arg version "$version_blob" '{
  base_tree: $base,
  tree: [
    {path: "dist/manifest.txt", mode: "100644", type: "blob", sha: $manifest},
    {path: "dist/VERSION", mode: "100644", type: "blob", sha: $version}
  ]
}' | gh api "repos/$repo/git/trees" --input - --jq .sha)
commit=$(jq -n --arg tree "$tree" --arg parent "$base" --arg message "Release $TAG: dist/VERSION and dist/manifest.txt" \
  '{message: $message, tree: $tree, parents: [$parent]}' |
  gh api "repos/$repo/git/commits" --input - --jq .sha)

branch=release/$TAG
gh api "repos/$repo/git/refs" -f "ref=refs/heads/$branch" -f "sha=$commit" >/dev/null
gh pr create --repo "$repo" --base "$default_branch" --head "$branch" \
  --title "Release $TAG: pin the binaries in dist/" \
  --body "Records the SHA-256 of every $TAG asset in dist/manifest.txt and $version in dist/VERSION. The action installs only binaries whose digest is listed here; $major already points at this commit."

if gh api "repos/$repo/git/ref/tags/$major" >/dev/null 2>&1; then
  gh api -X PATCH "repos/$repo/git/refs/tags/$major" -f "sha=$commit" -F force=true >/dev/null
else
  gh api "repos/$repo/git/refs" -f "ref=refs/tags/$major" -f "sha=$commit" >/dev/null
fi
printf 'dist commit %s on %s; %s moved to it\n' "$commit" "$branch" "$major"
