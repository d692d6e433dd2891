#!/bin/sh
# Build the release binary of efix for $TARGET (one job of release.yml) and write it, with its
# `.sha256` (sha256sum format), to out/. The tag ($TAG, e.g. v1.2.3) must match the version in
# Cargo.toml. Linux targets are musl and must come out statically linked: reqwest uses rustls
# (ring) and git2 has no default features, so no OpenSSL is involved; C code (libgit2, zlib,
# ring, tree-sitter grammars) is compiled with musl-gcc.
set -eu

: "${TARGET:?set TARGET to the Rust target triple}"
: "${TAG:?set TAG to the release tag, e.g. v1.2.3}"
version=${TAG#v}
crate_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
if [ "$version" != "$crate_version" ]; then
  printf '::error::tag %s does not match version %s in Cargo.toml\n' "$TAG" "$crate_version" >&2
  exit 1
fi

case $TARGET in
  *-linux-musl)
    # cc looks for <arch>-linux-musl-gcc; musl-tools installs musl-gcc for the runner's own
    # architecture, which is the target's (each Linux target builds on a runner of its arch).
    cc_var=CC_$(printf '%s' "$TARGET" | tr '-' '_')
    export "$cc_var=musl-gcc"
    ;;
esac

cargo build --release --locked --target "$TARGET"

asset=efix-$version-$TARGET
mkdir -p out
cp "target/$TARGET/release/efix" "out/$asset"
chmod 755 "out/$asset"

case $TARGET in
  *-linux-musl)
    if file "out/$asset" | grep -q 'dynamically linked'; then
      printf '::error::%s is dynamically linked\n' "$asset" >&2
      file "out/$asset" >&2
      exit 1
    fi
    ;;
esac
case $TARGET in
  x86_64-unknown-linux-musl | aarch64-apple-darwin)
    # The runner can execute these; a binary that cannot print its version is not released.
    "out/$asset" --version
    ;;
esac

(
  cd out
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$asset" >"$asset.sha256"
  else
    shasum -a 256 "$asset" >"$asset.sha256"
  fi
  cat "$asset.sha256"
)
