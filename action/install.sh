#!/usr/bin/env bash
# The GitHub Action's install step: downloads the release archive of mcp-covenant for this
# runner, verifies it against the release's SHA256SUMS, and installs the binary. It never
# compiles, unless the release has no archive and compiling was asked for.
#
#   INPUT_VERSION            the release (action.yml's default: the action's own version)
#   INPUT_BUILD_FROM_SOURCE  true: when the release is missing, build it with cargo (the
#                            action's source for its own version, else crates.io)
#   MCP_COVENANT_RELEASE_URL the address holding mcp-covenant-VERSION-TARGET.tar.gz (.zip
#                            on Windows) and SHA256SUMS; default: the GitHub release vVERSION
#   MCP_COVENANT_INSTALL_DIR where the binary goes; default:
#                            $RUNNER_TOOL_CACHE/mcp-covenant/VERSION/ARCH
#   RUNNER_OS, RUNNER_ARCH, RUNNER_TOOL_CACHE, RUNNER_TEMP, GITHUB_PATH: set by the runner
#
# A binary already installed there at that version is reused. The install directory is
# appended to $GITHUB_PATH. Nothing from the archive runs, or is installed, before its
# checksum matches; a mismatch installs nothing and names both digests.
set -euo pipefail

die() { echo "error: $*" >&2; exit 1; }
on() { case "${1:-}" in true | True | TRUE | yes | on | 1) return 0 ;; *) return 1 ;; esac; }

version=${INPUT_VERSION:-}
version=${version#v}
[ -n "$version" ] || die "no mcp-covenant version to install: give the action's \`version\` input (e.g. 0.2.0)"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  die "version \`$version\` is not a release version such as 0.2.0"

# The runner's platform: the archive's target triple and the tool cache's arch name.
os=${RUNNER_OS:-$(uname -s)}
arch=${RUNNER_ARCH:-$(uname -m)}
case "$arch" in
  X64 | x64 | x86_64 | amd64) arch=x64 cpu=x86_64 ;;
  ARM64 | arm64 | aarch64) arch=arm64 cpu=aarch64 ;;
  *) die "no mcp-covenant release for the $arch architecture (there are x64 and arm64)" ;;
esac
exe=mcp-covenant
kind=tar.gz
case "$os" in
  Linux) target=$cpu-unknown-linux-gnu ;;
  macOS | Darwin) target=$cpu-apple-darwin ;;
  Windows | MINGW* | MSYS* | CYGWIN*)
    [ "$arch" = x64 ] || die "no mcp-covenant release for Windows on $arch (there is x64)"
    target=$cpu-pc-windows-msvc exe=mcp-covenant.exe kind=zip
    ;;
  *) die "no mcp-covenant release for the $os runner (there are Linux, macOS and Windows)" ;;
esac
name=mcp-covenant-$version-$target
file=$name.$kind

if [ -n "${MCP_COVENANT_INSTALL_DIR:-}" ]; then
  dir=$MCP_COVENANT_INSTALL_DIR
else
  [ -n "${RUNNER_TOOL_CACHE:-}" ] || die "RUNNER_TOOL_CACHE is not set (not on a GitHub runner?): set MCP_COVENANT_INSTALL_DIR"
  dir=$RUNNER_TOOL_CACHE/mcp-covenant/$version/$arch
fi
case "$dir" in *$'\n'* | *$'\r'*) die "the install directory's name has a line break" ;; esac
case "$dir" in /*) ;; [A-Za-z]:[/\\]*) ;; *) dir=$PWD/$dir ;; esac

add_to_path() {
  if [ -n "${GITHUB_PATH:-}" ]; then printf '%s\n' "$dir" >>"$GITHUB_PATH"; fi
}

# The installed binary says `mcp-covenant VERSION (...)`.
is_version() { "$1" --version 2>/dev/null | grep -q "^mcp-covenant $(sed 's/\./\\./g' <<<"$version") "; }

if [ -f "$dir/$exe" ] && [ ! -L "$dir/$exe" ] && is_version "$dir/$exe"; then
  echo "mcp-covenant $version: already installed in $dir"
  add_to_path
  exit 0
fi

tmp=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/mcp-covenant-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Installs $1 (a file in $tmp) as $dir/$exe: copied next to it, then renamed, so a
# reader never sees half a binary.
install_binary() {
  mkdir -p "$dir"
  local part="$dir/.$exe.part.$$"
  cp "$1" "$part"
  chmod 755 "$part"
  mv -f "$part" "$dir/$exe"
  if ! is_version "$dir/$exe"; then
    rm -f "$dir/$exe"
    die "the installed binary does not say it is mcp-covenant $version"
  fi
  echo "mcp-covenant $version: installed in $dir"
  add_to_path
}

build_from_source() {
  command -v cargo >/dev/null || die "build-from-source needs cargo (a Rust toolchain) on the runner"
  local own=""
  if [ -n "${ACTION_PATH:-}" ] && [ -f "$ACTION_PATH/Cargo.toml" ]; then
    own=$(sed -n 's/^version = "\([^"]*\)"$/\1/p' "$ACTION_PATH/Cargo.toml" | head -n 1)
  fi
  if [ "$own" = "$version" ]; then
    echo "mcp-covenant $version: building the action's source with cargo"
    cargo install --locked --root "$tmp/root" --path "$ACTION_PATH"
  else
    echo "mcp-covenant $version: building it from crates.io with cargo"
    cargo install --locked --root "$tmp/root" --version "=$version" mcp-covenant
  fi
  install_binary "$tmp/root/bin/$exe"
}

base=${MCP_COVENANT_RELEASE_URL:-https://github.com/mcp-covenant/mcp-covenant/releases/download/v$version}
base=${base%/}
command -v curl >/dev/null || die "curl is needed to download the release"

# Prints the HTTP status; the body goes to $2. Only http(s), also across redirects.
fetch() {
  curl --silent --show-error --location --proto '=http,https' --proto-redir '=http,https' \
    --retry 3 --connect-timeout 20 --max-time 300 \
    --output "$2" --write-out '%{http_code}' "$1" || true
}

missing() {
  if on "${INPUT_BUILD_FROM_SOURCE:-}"; then
    echo "mcp-covenant $version: $1; building from source (build-from-source: true)" >&2
    build_from_source
    exit 0
  fi
  die "$1. Choose a released \`version\`, or set \`build-from-source: true\` to compile it with cargo"
}

status=$(fetch "$base/SHA256SUMS" "$tmp/SHA256SUMS")
case "$status" in
  200) ;;
  404) missing "no release $version at $base (SHA256SUMS: HTTP 404)" ;;
  *) die "cannot download $base/SHA256SUMS (HTTP status ${status:-none})" ;;
esac
# The line for our file: `DIGEST  NAME` or `DIGEST *NAME`, the name compared exactly.
expected=$(awk -v f="$file" '{ n = $2; sub(/^\*/, "", n); if (n == f) { print tolower($1); exit } }' "$tmp/SHA256SUMS")
[ -n "$expected" ] || missing "release $version has no $file for this runner ($os $arch) in $base/SHA256SUMS"
[[ "$expected" =~ ^[0-9a-f]{64}$ ]] || die "$base/SHA256SUMS: \`$expected\` is not a SHA-256 digest for $file"

status=$(fetch "$base/$file" "$tmp/$file")
case "$status" in
  200) ;;
  404) missing "release $version has no $file at $base (HTTP 404)" ;;
  *) die "cannot download $base/$file (HTTP status ${status:-none})" ;;
esac

if command -v sha256sum >/dev/null; then
  actual=$(sha256sum "$tmp/$file" | awk '{ print tolower($1) }')
else
  actual=$(shasum -a 256 "$tmp/$file" | awk '{ print tolower($1) }')
fi
if [ "$actual" != "$expected" ]; then
  die "checksum mismatch for $file: SHA256SUMS says $expected, the download is $actual; nothing was installed"
fi

# Verified: take the one member we need, and only a regular file.
mkdir "$tmp/x"
if [ "$kind" = zip ]; then
  if command -v unzip >/dev/null; then
    unzip -q "$tmp/$file" "$name/$exe" -d "$tmp/x"
  else
    7z x -bd -bso0 "-o$tmp/x" "$tmp/$file" "$name/$exe" >/dev/null
  fi
else
  tar -xzf "$tmp/$file" -C "$tmp/x" --no-same-owner -- "$name/$exe"
fi
got=$tmp/x/$name/$exe
[ -f "$got" ] && [ ! -L "$got" ] || die "$file holds no regular file $name/$exe"
install_binary "$got"
