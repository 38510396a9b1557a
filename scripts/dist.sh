#!/usr/bin/env bash
# Builds every release artifact for one target into dist/ (emptied first):
#
#   dist/mcp-covenant-VERSION-TARGET.tar.gz   the release binary, LICENSE, README.md,
#                                             man/ (mcp-covenant.1 and one page per
#                                             subcommand), completions/ (bash,
#                                             zsh, fish, powershell)
#                                             (.zip holding mcp-covenant.exe on Windows)
#   dist/SHA256SUMS                           sha256sum format, every archive in dist/
#   dist/npm/mcp-covenant-VERSION.tgz         the npm package: a Node shim as `bin`
#   dist/npm/mcp-covenant-cli-PLATFORM-VERSION.tgz
#                                             this target's platform package (its binary)
#   dist/mcp_covenant-VERSION-*.whl           the PyPI wheel (maturin, bindings = "bin")
#   dist/docker/ARCH/mcp-covenant             Linux only: what the Dockerfile copies
#
#   scripts/dist.sh [--target TRIPLE]         (default: the host's target)
#   scripts/dist.sh --platform [--target T]   print T's npm platform (linux-x64, ...), exit
#
# VERSION is Cargo.toml's. On Linux the binary is fully static (glibc, crt-static, as
# scripts/static-build.sh builds it); on Windows the C runtime is linked statically too.
# The wheel is built by maturin with the same --target and RUSTFLAGS, so it reuses the
# binary cargo just built instead of compiling again. Needs cargo, npm, and maturin
# (MATURIN=/path/to/maturin, else `maturin` on PATH; tests/servers/setup.sh installs one
# in tests/servers/.venv-dist). The release workflow (.github/workflows/release.yml)
# runs this once per target and merges the results.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "dist: $*" >&2; exit 1; }

host=$(rustc -vV | sed -n 's/^host: //p')
target=$host
print_platform=0
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="${2:?--target needs a triple}"; shift 2 ;;
    --target=*) target="${1#--target=}"; shift ;;
    --platform) print_platform=1; shift ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
[[ "$target" =~ ^[a-z0-9_]+-[a-z0-9_]+-[a-z0-9_]+(-[a-z0-9_]+)?$ ]] || die "\`$target\` is not a target triple"

# The first `version = "..."` of Cargo.toml is the package's.
version=$(sed -n 's/^version = "\([^"]*\)"$/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || die "no version in Cargo.toml"

# The npm platform (process.platform-process.arch), the binary's name, the archive kind.
exe=mcp-covenant
archive=tar.gz
docker_arch=""
case "$target" in
  x86_64-unknown-linux-*) platform=linux-x64 docker_arch=amd64 ;;
  aarch64-unknown-linux-*) platform=linux-arm64 docker_arch=arm64 ;;
  x86_64-apple-darwin) platform=darwin-x64 ;;
  aarch64-apple-darwin) platform=darwin-arm64 ;;
  x86_64-pc-windows-*) platform=win32-x64 exe=mcp-covenant.exe archive=zip ;;
  *) die "no npm platform package for $target (see npm/mcp-covenant/package.json)" ;;
esac
if [ "$print_platform" = 1 ]; then echo "$platform"; exit 0; fi
grep -q "\"@mcp-covenant/cli-$platform\": \"$version\"" npm/mcp-covenant/package.json ||
  die "npm/mcp-covenant/package.json does not list @mcp-covenant/cli-$platform at $version"

maturin=${MATURIN:-$(command -v maturin || true)}
[ -n "$maturin" ] && [ -x "$maturin" ] ||
  die "maturin not found: pip install maturin, or set MATURIN (tests/servers/setup.sh installs one in tests/servers/.venv-dist)"
command -v npm >/dev/null || die "npm not found"

case "$target" in
  *-linux-gnu | *-windows-msvc) export RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" ;;
esac
# Linux: the static PIE's relative relocations packed (DT_RELR: 1 KB in place of 149 KB of
# .rela.dyn; glibc 2.36+ relocates a static PIE with them, and the binary carries its
# own glibc; an older ld ignores the option with a warning). A binary that could not
# relocate itself would fail the `--version` run below. Measured on x86_64
# (docs/performance.md): 147,256 bytes less. (`-C force-unwind-tables=no` was measured
# too and changed nothing: .eh_frame stayed 441,552 bytes.)
case "$target" in
  *-linux-gnu) export RUSTFLAGS="$RUSTFLAGS -C link-arg=-Wl,-z,pack-relative-relocs" ;;
esac

if [ "$target" != "$host" ] && command -v rustup >/dev/null &&
  ! rustup target list --installed | grep -qx "$target"; then
  rustup target add "$target"
fi

rm -rf dist
mkdir -p dist/npm

echo "== dist: mcp-covenant $version for $target"
# --target given explicitly: RUSTFLAGS then applies to the binary only, not to build
# scripts (which must stay dynamic), and maturin below finds the same target directory.
cargo build --release --locked --target "$target" --bin mcp-covenant
bin="target/$target/release/$exe"
[ -f "$bin" ] || die "cargo did not produce $bin"
if [ "$target" = "$host" ]; then
  said=$("$bin" --version)
  case "$said" in
    "mcp-covenant $version ("*) echo "   $said" ;;
    *) die "$bin --version says \`$said\`, not mcp-covenant $version" ;;
  esac
fi

# --- the release archive ---------------------------------------------------------------
name="mcp-covenant-$version-$target"
stage="dist/$name"
mkdir -p "$stage"
cp "$bin" "$stage/$exe"
cp LICENSE README.md "$stage/"
# The shell completions, generated by the binary from its own arguments (a host build
# runs when the target's binary cannot run here), and the man page (examples/man.rs, a
# host build: clap_mangen stays out of the binary). Host builds run without the
# release's RUSTFLAGS: crt-static cannot build the proc-macros they need, and without it
# they reuse the debug build the tests make.
if [ "$target" = "$host" ]; then
  gen() { "$bin" "$@"; }
else
  gen() { env -u RUSTFLAGS cargo run --quiet --locked --bin mcp-covenant -- "$@"; }
fi
mkdir -p "$stage/man" "$stage/completions"
env -u RUSTFLAGS cargo run --quiet --locked --example man -- "$stage/man"
gen completions bash >"$stage/completions/mcp-covenant.bash"
gen completions zsh >"$stage/completions/_mcp-covenant"
gen completions fish >"$stage/completions/mcp-covenant.fish"
gen completions powershell >"$stage/completions/_mcp-covenant.ps1"
if [ "$archive" = zip ]; then
  if command -v 7z >/dev/null; then
    (cd dist && 7z a -tzip -bd -bso0 "$name.zip" "$name" >/dev/null)
  elif command -v zip >/dev/null; then
    (cd dist && zip -qrX "$name.zip" "$name")
  else
    die "neither 7z nor zip is available to write $name.zip"
  fi
else
  # Reproducible where tar is GNU tar: fixed order, owner and time (the commit's).
  mtime=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
  if tar --version 2>/dev/null | grep -q 'GNU tar'; then
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" \
      -C dist -cf - "$name" | gzip -n -9 >"dist/$name.tar.gz"
  else
    tar -C dist -cf - "$name" | gzip -n -9 >"dist/$name.tar.gz"
  fi
fi
rm -rf "$stage"

if command -v sha256sum >/dev/null; then
  sha() { sha256sum "$@"; }
else
  sha() { shasum -a 256 "$@"; }
fi
(
  cd dist
  shopt -s nullglob
  archives=(mcp-covenant-*.tar.gz mcp-covenant-*.zip)
  sha "${archives[@]}" >SHA256SUMS
)
grep -q " \*\{0,1\}$name.$archive\$" dist/SHA256SUMS || die "SHA256SUMS does not cover $name.$archive"

# --- npm: the main package and this target's platform package ---------------------------
npm_stage=$(mktemp -d)
trap 'rm -rf "$npm_stage"' EXIT
mkdir -p "$npm_stage/main" "$npm_stage/platform/bin"
cp -R npm/mcp-covenant/. "$npm_stage/main/"
cp LICENSE README.md "$npm_stage/main/"
os=${platform%-*} cpu=${platform#*-}
for f in package.json README.md; do
  sed -e "s/@PLATFORM@/$platform/g" -e "s/@VERSION@/$version/g" -e "s/@TARGET@/$target/g" \
    -e "s/@OS@/$os/g" -e "s/@CPU@/$cpu/g" -e "s/@BINARY@/$exe/g" \
    "npm/platform/$f" >"$npm_stage/platform/$f"
done
cp LICENSE "$npm_stage/platform/"
cp "$bin" "$npm_stage/platform/bin/$exe"
chmod 755 "$npm_stage/platform/bin/$exe" "$npm_stage/main/bin/mcp-covenant.js"
out=$(cd dist/npm && pwd)
for p in main platform; do
  (cd "$npm_stage/$p" && npm pack --silent --pack-destination "$out" >/dev/null)
done

# --- PyPI: the wheel (maturin reuses cargo's build above) --------------------------------
"$maturin" build --release --locked --target "$target" --out dist
ls dist/*.whl >/dev/null 2>&1 || die "maturin wrote no wheel"

# --- the container's binary (Linux) -----------------------------------------------------
if [ -n "$docker_arch" ]; then
  mkdir -p "dist/docker/$docker_arch"
  cp "$bin" "dist/docker/$docker_arch/mcp-covenant"
fi

echo "== dist/"
(cd dist && find . -type f ! -name SHA256SUMS | sort | while read -r f; do
  printf '   %10s  %s\n' "$(wc -c <"$f" | tr -d ' ')" "${f#./}"
done)
