#!/usr/bin/env bash
# The release workflow's merge step: the dist/ directories that scripts/dist.sh wrote on
# each target (one directory each under IN, as the workflow downloads them) become
#
#   OUT/release/   every archive, and one SHA256SUMS covering them all (what the GitHub
#                  release holds; action/install.sh downloads from there)
#   OUT/npm/       every platform package, and the main package once
#   OUT/wheels/    every wheel (for PyPI)
#   OUT/docker/ARCH/mcp-covenant   the Linux binaries, for the Dockerfile (as dist/docker/)
#
#   scripts/release-merge.sh IN OUT
#
# Each archive is checked against the SHA256SUMS of the job that built it, and no file
# may come from two jobs.
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
in=$1 out=$2
die() { echo "release-merge: $*" >&2; exit 1; }
if command -v sha256sum >/dev/null; then
  sha() { sha256sum "$@"; }
else
  sha() { shasum -a 256 "$@"; }
fi

[ -d "$in" ] || die "$in is not a directory"
rm -rf "$out"
mkdir -p "$out/release" "$out/npm" "$out/wheels" "$out/docker"
shopt -s nullglob
jobs=0
for d in "$in"/*/; do
  d=${d%/}
  [ -f "$d/SHA256SUMS" ] || die "$d has no SHA256SUMS (not a dist/ directory)"
  jobs=$((jobs + 1))
  (cd "$d" && sha -c --quiet SHA256SUMS) || die "$d: an archive does not match its SHA256SUMS"
  for f in "$d"/mcp-covenant-*.tar.gz "$d"/mcp-covenant-*.zip; do
    [ ! -e "$out/release/${f##*/}" ] || die "${f##*/} comes from two jobs"
    cp "$f" "$out/release/"
  done
  for f in "$d"/npm/mcp-covenant-cli-*.tgz; do
    [ ! -e "$out/npm/${f##*/}" ] || die "${f##*/} comes from two jobs"
    cp "$f" "$out/npm/"
    # Every job packs the main package too: the one from the Linux x64 job is published
    # (a Windows checkout may turn the README's line ends into CRLF).
    case "$f" in */mcp-covenant-cli-linux-x64-*) cp "$d"/npm/mcp-covenant-[0-9]*.tgz "$out/npm/" ;; esac
  done
  for f in "$d"/*.whl; do
    [ ! -e "$out/wheels/${f##*/}" ] || die "${f##*/} comes from two jobs"
    cp "$f" "$out/wheels/"
  done
  for f in "$d"/docker/*/mcp-covenant; do
    arch=$(basename "$(dirname "$f")")
    [ ! -e "$out/docker/$arch" ] || die "docker/$arch comes from two jobs"
    mkdir -p "$out/docker/$arch"
    cp -p "$f" "$out/docker/$arch/"
  done
done
[ "$jobs" -gt 0 ] || die "no dist/ directories in $in"
main=("$out"/npm/mcp-covenant-[0-9]*.tgz)
[ ${#main[@]} -eq 1 ] || die "no main npm package (it is taken from the linux-x64 job)"
(cd "$out/release" && archives=(mcp-covenant-*) && [ ${#archives[@]} -gt 0 ] && sha "${archives[@]}" >SHA256SUMS) ||
  die "no archives"
echo "release-merge: $jobs job(s):"
(cd "$out" && find . -type f | sort | sed 's/^\.\//   /')
