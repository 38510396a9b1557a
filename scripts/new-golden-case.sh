#!/usr/bin/env bash
# Scaffolds a golden case from a keyword and two schemas:
#
#   scripts/new-golden-case.sh [--name CASE] [--comparator C] KEYWORD BEFORE AFTER
#
# BEFORE and AFTER are a tool's inputSchema before and after the change, as JSON text or a
# file name. The case mirrors them: tool `t` has the schema as its inputSchema *and* its
# outputSchema, so the change is classified in both directions, as every schema row
# must be. The script
#   1. writes golden/CASE/before.lock and after.lock (captured by mcp-covenant itself from
#      the fixture server, so they are canonical lockfiles) and a `proves` placeholder;
#   2. when no row in rules/*.toml watches KEYWORD and --comparator is given, appends one
#      row per event of that comparator to rules/schema.toml, each conservatively breaking
#      in both directions, for you to decide (ids, severities, messages);
#   3. writes the expectations (UPDATE_GOLDEN=1 cargo test --test golden -- --exact CASE)
#      and prints the human report.
# Then: write the one line in golden/CASE/proves, review the rows and the expectations,
# commit. CASE defaults to KEYWORD in kebab case (contentMediaType -> content-media-type).
#
# Example:
#   scripts/new-golden-case.sh --comparator text contentMediaType \
#     '{"type":"object","properties":{"doc":{"type":"string","contentMediaType":"text/html"}}}' \
#     '{"type":"object","properties":{"doc":{"type":"string","contentMediaType":"application/json"}}}'
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
die() { echo "new-golden-case: $*" >&2; exit 2; }

name="" comparator=""
while [ $# -gt 0 ]; do
  case "$1" in
    --name) name="${2:?--name needs a value}"; shift 2 ;;
    --comparator) comparator="${2:?--comparator needs a value}"; shift 2 ;;
    -h|--help) usage ;;
    --) shift; break ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) break ;;
  esac
done
[ $# -eq 3 ] || usage
keyword="$1" before="$2" after="$3"
[[ "$keyword" =~ ^[A-Za-z$][A-Za-z0-9_]*$ ]] || die "\`$keyword\` is not a JSON Schema keyword"
[ -n "$name" ] || name=$(sed -E 's/\$//g; s/([a-z0-9])([A-Z])/\1-\2/g' <<<"$keyword" | tr 'A-Z' 'a-z')
[[ "$name" =~ ^[a-z0-9][a-z0-9-]*$ ]] || die "case name \`$name\` must be lower-case words joined by -"
dir="golden/$name"
[ ! -e "$dir" ] || die "$dir already exists"


schema() { if [ -f "$1" ]; then cat "$1"; else printf '%s' "$1"; fi; }

cargo build -q --bin mcp-covenant --example fixture-server
# The events of the comparator, as the binary's rule tables know them (the rule loader
# rejects a comparator that cannot watch the keyword).
events=()
if [ -n "$comparator" ]; then
  line=$(target/debug/mcp-covenant rules --comparators | grep -m1 "^$comparator: ") ||
    die "comparator \`$comparator\`: use one of $(target/debug/mcp-covenant rules --comparators | cut -d: -f1 | paste -sd' ')"
  read -r -a events <<<"${line#*: }"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$dir"
for side in before after; do
  s=$(schema "${!side}")
  printf '{"serverInfo":{"name":"golden","version":"1.0.0"},"protocolVersion":"2025-11-25","tools":[{"name":"t","inputSchema":%s,"outputSchema":%s}]}\n' \
    "$s" "$s" >"$tmp/$side.json"
  if ! target/debug/mcp-covenant snapshot --protocol 2025-11-25 -o "$tmp/$side.lock" \
      -- target/debug/examples/fixture-server "$tmp/$side.json" 2>"$tmp/err"; then
    rm -rf "$dir"
    die "the $side schema did not capture (is it valid JSON?): $(grep -m1 "spec is JSON" "$tmp/err" || tail -n1 "$tmp/err")"
  fi
  # A fixed capture time, as in every golden lockfile.
  sed -E 's/"captured_at_unix": [0-9]+/"captured_at_unix": 1750000000/' "$tmp/$side.lock" >"$dir/$side.lock"
done
echo "TODO: one line saying what this case proves" >"$dir/proves"

# (single quotes: in double quotes `$?` would expand to the last exit status)
if grep -qE '^keyword = "\$?'"${keyword#\$}"'"' rules/*.toml; then
  echo "rows: rules/ already has rows for \`$keyword\`; the case exercises them"
elif [ ${#events[@]} -gt 0 ]; then
  {
    echo
    echo "# --- $keyword (scaffolded by scripts/new-golden-case.sh: decide ids, severities, messages)"
    for e in "${events[@]}"; do
      printf '\n[[rule]]\nid = "schema.%s.%s"\nkeyword = "%s"\ncomparator = "%s"\nevent = "%s"\ninput = "breaking"\noutput = "breaking"\nmessage = "%s %s: {before} → {after}"\n' \
        "$keyword" "$e" "$keyword" "$comparator" "$e" "$keyword" "$e"
    done
  } >>rules/schema.toml
  echo "rows: appended ${#events[@]} row(s) for \`$keyword\` to rules/schema.toml (breaking both ways until you decide)"
else
  echo "rows: no row watches \`$keyword\`, so the case shows schema.keyword.unhandled; rerun with --comparator to scaffold rows"
fi

UPDATE_GOLDEN=1 cargo test -q --test golden -- --exact "$name" >/dev/null 2>&1 || true
echo "== $dir/expected.txt"
cat "$dir/expected.txt"
echo "== next: write $dir/proves, review the rows and the expectations, then cargo test --test golden"
