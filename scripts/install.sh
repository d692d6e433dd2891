#!/bin/sh
# Install the efix binary for this runner, for the composite action (action.yml).
#
# The binary is the release asset efix-<version>-<target> of the action's own repository,
# downloaded from $GITHUB_SERVER_URL (or $EFIX_DOWNLOAD_URL, for mirrors) and checked against
# the SHA-256 committed in dist/manifest.txt, so pinning the action by commit pins the binary.
# A mismatch fails closed: nothing is installed. The binary goes to
# $RUNNER_TOOL_CACHE/efix/<version>/<arch>/ and onto $GITHUB_PATH; a later run on the same
# runner finds it there. With EFIX_FALLBACK=build, or when dist/VERSION has no release yet,
# efix is built from the action's own source with cargo instead.
#
# Inputs (environment): EFIX_VERSION (default: dist/VERSION), EFIX_FALLBACK (none | build),
# EFIX_DOWNLOAD_URL, EFIX_ACTION_REPOSITORY (default: from $GITHUB_ACTION_PATH), RUNNER_OS,
# RUNNER_ARCH, RUNNER_TOOL_CACHE, GITHUB_SERVER_URL, GITHUB_PATH.
set -eu

say() {
  printf 'efix install: %s\n' "$*" >&2
}

fail() {
  printf '::error title=efix install::%s\n' "$*" >&2
  exit 1
}

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
action_path=${GITHUB_ACTION_PATH:-$(dirname -- "$here")}
dist_version=$(tr -d ' \r\n' <"$action_path/dist/VERSION")
version=${EFIX_VERSION:-$dist_version}
version=${version#v}
fallback=${EFIX_FALLBACK:-none}
case $fallback in
  none | build) ;;
  *) fail "fallback must be none or build, not '$fallback'" ;;
esac

case ${RUNNER_OS:-$(uname -s)} in
  Linux) os=unknown-linux-musl ;;
  macOS | Darwin) os=apple-darwin ;;
  *) os='' ;;
esac
case ${RUNNER_ARCH:-$(uname -m)} in
  X64 | x86_64 | amd64) arch=x86_64 ;;
  ARM64 | aarch64 | arm64) arch=aarch64 ;;
  *) arch='' ;;
esac
cache_root=${RUNNER_TOOL_CACHE:-${HOME:-/tmp}/.cache}/efix

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  else
    shasum -a 256 "$1" | cut -d ' ' -f 1
  fi
}

# Put a directory holding `efix` on the PATH of the following steps.
activate() {
  if [ -n "${GITHUB_PATH:-}" ]; then
    printf '%s\n' "$1" >>"$GITHUB_PATH"
  fi
  say "efix is $1/efix ($("$1/efix" --version 2>/dev/null || echo 'version unknown'))"
}

# Build from the action's source, cached by a digest of that source.
build() {
  say "$1; building efix from the action's source with cargo"
  command -v cargo >/dev/null 2>&1 || fail "$1, and cargo is not installed to build it; install a Rust toolchain before this step, or use a released version"
  list=$(mktemp)
  (
    cd "$action_path"
    find Cargo.toml Cargo.lock src prompts -type f 2>/dev/null | LC_ALL=C sort | while IFS= read -r file; do
      printf '%s %s\n' "$(sha256 "$file")" "$file"
    done
  ) >"$list"
  source_id=$(sha256 "$list" | cut -c 1-16)
  rm -f "$list"
  dir=$cache_root/source-$source_id/${arch:-$(uname -m)}
  if [ -x "$dir/efix" ]; then
    say "found a build of this source in the tool cache"
    activate "$dir"
    exit 0
  fi
  target_dir=$(mktemp -d)
  cargo build --release --locked --manifest-path "$action_path/Cargo.toml" --target-dir "$target_dir" >&2 || {
    rm -rf "$target_dir"
    fail "cargo build --release --locked failed"
  }
  mkdir -p "$dir"
  cp "$target_dir/release/efix" "$dir/efix.partial"
  chmod 755 "$dir/efix.partial"
  mv "$dir/efix.partial" "$dir/efix"
  rm -rf "$target_dir"
  activate "$dir"
  exit 0
}

if [ -z "$os" ] || [ -z "$arch" ]; then
  platform="${RUNNER_OS:-$(uname -s)}/${RUNNER_ARCH:-$(uname -m)}"
  [ "$fallback" = build ] && build "no efix release is built for $platform"
  fail "no efix release is built for $platform (efix ships x86_64 and aarch64 binaries for Linux and macOS); set fallback: build to compile it on this runner"
fi

target=$arch-$os
asset=efix-$version-$target
expected=$(awk -v name="$asset" '$2 == name || $2 == "*" name { print $1; exit }' "$action_path/dist/manifest.txt")
dir=$cache_root/$version/$arch

if [ -z "$expected" ]; then
  if [ "$fallback" = build ] || [ "$version" = "$dist_version" ]; then
    build "dist/manifest.txt lists no $asset (version $version has no release yet)"
  fi
  fail "dist/manifest.txt lists no $asset: use the action at the commit of the v$version release, or set fallback: build"
fi

if [ -x "$dir/efix" ] && [ "$(sha256 "$dir/efix")" = "$expected" ]; then
  say "found efix $version in the tool cache"
  activate "$dir"
  exit 0
fi

if [ -n "${EFIX_DOWNLOAD_URL:-}" ]; then
  base=${EFIX_DOWNLOAD_URL%/}
else
  repository=${EFIX_ACTION_REPOSITORY:-}
  if [ -z "$repository" ]; then
    # Composite steps do not see github.action_repository; the runner checks actions out
    # under .../_actions/<owner>/<repo>/<ref>.
    case $action_path in
      */_actions/*/*/*)
        rest=${action_path#*/_actions/}
        owner=${rest%%/*}
        rest=${rest#*/}
        repository=$owner/${rest%%/*}
        ;;
    esac
  fi
  [ -n "$repository" ] || fail "cannot tell which repository the action comes from; set EFIX_DOWNLOAD_URL to where the release assets are"
  base=${GITHUB_SERVER_URL:-https://github.com}/$repository/releases/download/v$version
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say "downloading $base/$asset"
if command -v curl >/dev/null 2>&1; then
  fetched=$(curl -fsSL --retry 3 --retry-delay 2 -o "$work/efix" "$base/$asset" && echo yes || echo no)
else
  fetched=$(wget -q -O "$work/efix" "$base/$asset" && echo yes || echo no)
fi
if [ "$fetched" != yes ]; then
  [ "$fallback" = build ] && build "could not download $asset"
  fail "could not download $base/$asset (is there a v$version release with this asset?); set fallback: build to compile efix instead"
fi
actual=$(sha256 "$work/efix")
if [ "$actual" != "$expected" ]; then
  fail "checksum mismatch for $asset: dist/manifest.txt says $expected, the download is $actual; nothing was installed"
fi
mkdir -p "$dir"
mv "$work/efix" "$dir/efix.partial"
chmod 755 "$dir/efix.partial"
mv "$dir/efix.partial" "$dir/efix"
activate "$dir"
