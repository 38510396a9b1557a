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
#                            (https only; an http:// address given here is taken as given)
#   MCP_COVENANT_INSTALL_DIR where the binary goes; default:
#                            $RUNNER_TOOL_CACHE/mcp-covenant/VERSION/ARCH
#   RUNNER_OS, RUNNER_ARCH, RUNNER_TOOL_CACHE, RUNNER_TEMP, GITHUB_PATH, GITHUB_OUTPUT:
#                            set by the runner
#
# Nothing found on the runner is trusted: the tool cache is writable by every step of
# every job (a pull request's `preinstall` script, a server), so SHA256SUMS is downloaded
# on every run, the archive kept in the cache is reused only when it matches it (else it
# is downloaded again), and the binary is always installed afresh from the verified
# archive (under a fresh temporary name, then renamed over whatever was there). Nothing
# found in the cache is ever run, not even to ask its version. Nothing from the archive
# runs, or is installed, before its checksum matches; a mismatch installs nothing and
# names both digests.
#
# The binary's absolute path is the step's output `bin`: the check steps run that path,
# never a `mcp-covenant` found on PATH. The install directory is also appended to
# $GITHUB_PATH, for the workflow's own later steps.
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

# The binary's path for the check steps (the step output `bin`), and its directory on
# PATH for the workflow's later steps.
announce() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then printf 'bin=%s\n' "$dir/$exe" >>"$GITHUB_OUTPUT"; fi
  if [ -n "${GITHUB_PATH:-}" ]; then printf '%s\n' "$dir" >>"$GITHUB_PATH"; fi
}

# The binary just installed from a verified archive (or built) says `mcp-covenant VERSION (...)`.
is_version() { "$1" --version 2>/dev/null | grep -q "^mcp-covenant $(sed 's/\./\\./g' <<<"$version") "; }

tmp=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/mcp-covenant-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Puts file $1 at $dir/$2 (mode $3): copied under a fresh unpredictable name next to it,
# then renamed over whatever is there, so a reader never sees half a file and nothing
# planted at a predictable name is written through.
put() {
  local part
  mkdir -p "$dir"
  # A directory (or anything but a file or a link) there would take the file inside it.
  if [ -e "$dir/$2" ] && [ ! -L "$dir/$2" ] && [ ! -f "$dir/$2" ]; then rm -rf -- "${dir:?}/$2"; fi
  part=$(mktemp "$dir/.$2.XXXXXXXX")
  cp "$1" "$part"
  chmod "$3" "$part"
  mv -f "$part" "$dir/$2"
}

# Installs $1 (a file in $tmp) as $dir/$exe.
install_binary() {
  put "$1" "$exe" 755
  if ! is_version "$dir/$exe"; then
    rm -f "$dir/$exe"
    die "the installed binary does not say it is mcp-covenant $version"
  fi
  echo "mcp-covenant $version: installed in $dir"
  announce
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

# https only, also across redirects; a plain http:// address counts only when it was
# given as MCP_COVENANT_RELEASE_URL (a local mirror), and never on a redirect.
proto='=https'
case "$base" in http://*) proto='=http,https' ;; esac

# Prints the HTTP status; the body goes to $2.
fetch() {
  curl --silent --show-error --location --proto "$proto" --proto-redir '=https' \
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

digest() {
  if command -v sha256sum >/dev/null; then
    sha256sum "$1" | awk '{ print tolower($1) }'
  else
    shasum -a 256 "$1" | awk '{ print tolower($1) }'
  fi
}

# The archive an earlier job kept in the cache, when it matches SHA256SUMS (copied out
# first, so that what is checked is what is unpacked); else a download.
cached=0
if [ -f "$dir/$file" ] && [ ! -L "$dir/$file" ] && cp "$dir/$file" "$tmp/$file" 2>/dev/null &&
  [ "$(digest "$tmp/$file")" = "$expected" ]; then
  cached=1
  echo "mcp-covenant $version: the archive in $dir matches SHA256SUMS; no download"
else
  rm -f "$tmp/$file"
  status=$(fetch "$base/$file" "$tmp/$file")
  case "$status" in
    200) ;;
    404) missing "release $version has no $file at $base (HTTP 404)" ;;
    *) die "cannot download $base/$file (HTTP status ${status:-none})" ;;
  esac
  actual=$(digest "$tmp/$file")
  if [ "$actual" != "$expected" ]; then
    die "checksum mismatch for $file: SHA256SUMS says $expected, the download is $actual; nothing was installed"
  fi
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
# Kept for the next job on this runner, which checks it again before using it.
if [ "$cached" = 0 ]; then put "$tmp/$file" "$file" 644 || true; fi
