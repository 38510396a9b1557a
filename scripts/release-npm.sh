#!/usr/bin/env bash
# The release workflow's npm step: publishes the packages scripts/release-merge.sh
# collected (DIR: the platform packages first, so the main package never names a version
# that is missing, then the main package), with provenance.
#
#   scripts/release-npm.sh DIR [--dry-run]
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
dir=$1
shift
shopt -s nullglob
platforms=("$dir"/mcp-covenant-cli-*.tgz)
main=("$dir"/mcp-covenant-[0-9]*.tgz)
[ ${#main[@]} -eq 1 ] || { echo "release-npm: expected one main package in $dir, found ${#main[@]}" >&2; exit 1; }
[ ${#platforms[@]} -gt 0 ] || { echo "release-npm: no platform packages in $dir" >&2; exit 1; }
for p in "${platforms[@]}" "${main[@]}"; do
  npm publish "$p" --access public --provenance "$@"
done
