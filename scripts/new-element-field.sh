#!/usr/bin/env bash
# Scaffolds an element field: its row in the tables and a golden case, as
# scripts/new-golden-case.sh does for a schema keyword.
#
#   scripts/new-element-field.sh [--name CASE] [--comparator C | --schema DIRECTION] \
#     KIND FIELD BEFORE AFTER
#
# KIND is tool, resource, template or prompt; FIELD a field of its elements (a name, not
# a dotted path); BEFORE and AFTER its value before and after the change, as JSON text or
# a file name. A field is an element-table row (rules/elements.toml), so the script
#   1. appends the rows: with --schema input|output, an [[element.schema]] row for KIND
#      in rules/elements.toml (the walker, witnesses, reader checks and lint's parameter
#      rules pick it up); otherwise, when no row in rules/surface.toml watches
#      KIND.FIELD, one row per event of the comparator (--comparator: text, value,
#      number, bool, values or presence; default value), each breaking until you
#      decide, with messages that never show an absent side;
#   2. writes golden/CASE/before.lock and after.lock (captured by mcp-covenant itself
#      from the fixture server): a field compared as a value is added to element `a`
#      (BEFORE absent, AFTER), removed from `r` (BEFORE, absent) and changed on `c`
#      (BEFORE, AFTER), so that every side of it shows; a schema field changes on `c`;
#   3. writes a `proves` placeholder and the expectations
#      (UPDATE_GOLDEN=1 cargo test --test golden -- --exact CASE), and prints the human
#      report.
# Then: place FIELD in [fields] order of rules/elements.toml if it should not sort after
# the listed keys, write the one line in golden/CASE/proves, review the rows and the
# expectations, commit. CASE defaults to KIND-FIELD in kebab case.
#
# Example:
#   scripts/new-element-field.sh --comparator text tool category '"search"' '"files"'
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
die() { echo "new-element-field: $*" >&2; exit 2; }

name="" comparator="" direction=""
while [ $# -gt 0 ]; do
  case "$1" in
    --name) name="${2:?--name needs a value}"; shift 2 ;;
    --comparator) comparator="${2:?--comparator needs a value}"; shift 2 ;;
    --schema) direction="${2:?--schema needs input or output}"; shift 2 ;;
    -h|--help) usage ;;
    --) shift; break ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) break ;;
  esac
done
[ $# -eq 4 ] || usage
kind="$1" field="$2" before="$3" after="$4"
case "$kind" in
  tool) list=tools base='"name":"NAME"' ;;
  resource) list=resources base='"uri":"file:///NAME","name":"NAME"' ;;
  template) list=resourceTemplates base='"uriTemplate":"file:///NAME/{x}","name":"NAME"' ;;
  prompt) list=prompts base='"name":"NAME"' ;;
  *) die "kind \`$kind\`: use tool, resource, template or prompt" ;;
esac
[[ "$field" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "\`$field\` is not a field name (a dotted path inside a field is a row in rules/surface.toml)"
[ -z "$direction" ] || [ -z "$comparator" ] || die "--schema and --comparator exclude each other"
[ -z "$direction" ] || [[ "$direction" =~ ^(input|output)$ ]] || die "--schema takes input or output"
[ -n "$direction" ] || comparator="${comparator:-value}"
snake=$(sed -E 's/([a-z0-9])([A-Z])/\1_\2/g' <<<"$field" | tr 'A-Z' 'a-z')
[ -n "$name" ] || name="$kind-$(tr '_' '-' <<<"$snake")"
[[ "$name" =~ ^[a-z0-9][a-z0-9-]*$ ]] || die "case name \`$name\` must be lower-case words joined by -"
dir="golden/$name"
[ ! -e "$dir" ] || die "$dir already exists"

# The message of an event: the field and what it is now, what it was, or both when the
# event has both sides (an absent side is `added` or `removed`, never an arrow's end).
message() {
  case "$1" in
    added) [ "$comparator" = presence ] && echo "$field added" || echo "$field {after} added" ;;
    removed) [ "$comparator" = presence ] && echo "$field removed" || echo "$field {before} removed" ;;
    changed) echo "$field changed from {before} to {after}" ;;
    increased|decreased) echo "$field $1 from {before} to {after}" ;;
    to_true) echo "$field is now true" ;;
    to_false) echo "$field is now false" ;;
    value_added) echo "$field now lists {value}" ;;
    value_removed) echo "$field no longer lists {value}" ;;
    *) die "event \`$1\` has no default message" ;;
  esac
}

schema() { if [ -f "$1" ]; then cat "$1"; else printf '%s' "$1"; fi; }
before=$(schema "$before") after=$(schema "$after")

cargo build -q --bin mcp-covenant --example fixture-server
events=()
if [ -n "$comparator" ]; then
  [[ "$comparator" =~ ^(text|value|number|bool|values|presence)$ ]] ||
    die "comparator \`$comparator\`: use text, value, number, bool, values or presence"
  line=$(target/debug/mcp-covenant rules --comparators | grep -m1 "^$comparator: ")
  read -r -a events <<<"${line#*: }"
fi

# 1. the rows
if [ -n "$direction" ]; then
  grep -qE "^field = \"$field\"$" rules/elements.toml && die "rules/elements.toml already names \`$field\`"
  row=$(printf '[[element.schema]]\nfield = "%s"\ndirection = "%s"' "$field" "$direction")
  # After KIND's [[element]] table and its schema rows: before the next table header
  # that is not one of them.
  ROW="$row" awk -v kind="$kind" '
    /^\[\[element\]\]$/ || /^\[\[server\]\]$/ || /^\[fields\]$/ { if (inside) { print ENVIRON["ROW"]; print ""; inside = 0 } }
    /^kind = / { inside = ($0 == "kind = \"" kind "\"") }
    { print }
    END { if (inside) { print ""; print ENVIRON["ROW"] } }
  ' rules/elements.toml >rules/elements.toml.new
  mv rules/elements.toml.new rules/elements.toml
  echo "rows: appended an [[element.schema]] row ($field, $direction) to $kind in rules/elements.toml"
elif grep -A1 -E "^element = \"$kind\"$" rules/surface.toml | grep -qE "^field = \"$field\"$"; then
  echo "rows: rules/surface.toml already has rows for $kind.$field; the case exercises them"
else
  {
    echo
    echo "# --- $kind $field (scaffolded by scripts/new-element-field.sh: decide ids, severities, messages)"
    for e in "${events[@]}"; do
      printf '\n[[rule]]\nid = "%s.%s.%s"\nelement = "%s"\nfield = "%s"\ncomparator = "%s"\nevent = "%s"\nseverity = "breaking"\nmessage = "%s"\n' \
        "$kind" "$snake" "$e" "$kind" "$field" "$comparator" "$e" "$(message "$e")"
    done
  } >>rules/surface.toml
  echo "rows: appended ${#events[@]} row(s) for $kind.$field to rules/surface.toml (breaking until you decide)"
fi

# 2. the case, captured by a binary that embeds the rows
cargo build -q --bin mcp-covenant
element() { # NAME [VALUE]
  local e="{${base//NAME/$1}"
  [ $# -lt 2 ] || e="$e,\"$field\":$2"
  printf '%s}' "$e"
}
if [ -n "$direction" ]; then
  sides=(before "$(element c "$before")" after "$(element c "$after")")
else
  sides=(before "$(element a),$(element r "$before"),$(element c "$before")"
         after "$(element a "$after"),$(element r),$(element c "$after")")
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$dir"
for i in 0 2; do
  side=${sides[$i]} elements=${sides[$((i + 1))]}
  printf '{"serverInfo":{"name":"golden","version":"1.0.0"},"protocolVersion":"2025-11-25","%s":[%s]}\n' \
    "$list" "$elements" >"$tmp/$side.json"
  if ! target/debug/mcp-covenant snapshot --protocol 2025-11-25 -o "$tmp/$side.lock" \
      -- target/debug/examples/fixture-server "$tmp/$side.json" 2>"$tmp/err"; then
    rm -rf "$dir"
    die "the $side value did not capture (is it valid JSON?): $(tail -n1 "$tmp/err")"
  fi
  # A fixed capture time, as in every golden lockfile.
  sed -E 's/"captured_at_unix": [0-9]+/"captured_at_unix": 1750000000/' "$tmp/$side.lock" >"$dir/$side.lock"
done
echo "TODO: one line saying what this case proves" >"$dir/proves"

# 3. the expectations
UPDATE_GOLDEN=1 cargo test -q --test golden -- --exact "$name" >/dev/null 2>&1 || true
echo "== $dir/expected.txt"
cat "$dir/expected.txt"
echo "== next: place $field in [fields] order if it should not sort last, write $dir/proves, review the rows and the expectations, then cargo test --test golden"
