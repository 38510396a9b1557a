#!/usr/bin/env bash
# Scaling table: for each size N (default 100 1000 5000 10000 tools), wall time and peak
# RSS of the release binary for an offline check (json, sarif) on the bench/out pair
# (`cargo bench --bench check -- N` writes it), a snapshot of the fixture server
# generating N tools, and a live check of that server against the snapshot. One run each
# (the machine may be shared: run it twice and compare).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${*:-100 1000 5000 10000}
cargo build --release -q --bins --examples
bin=target/release/mcp-covenant
fx=target/release/examples/fixture-server
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
t() { { /usr/bin/time -f "%e s, %M KB" "$@" 2>&1 >/dev/null || true; } | tail -1; }
printf '| tools | check json | check sarif | snapshot | live check |\n|---|---|---|---|---|\n'
for n in $sizes; do
  a=bench/out/before-$n.lock; b=bench/out/after-$n.lock
  if [ ! -f "$a" ]; then cargo bench -q --bench check -- "$n" >/dev/null; fi
  json=$(t "$bin" check --baseline "$a" --against "$b" --format json)
  sarif=$(t "$bin" check --baseline "$a" --against "$b" --format sarif)
  echo "{\"tools\":[{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\"}}],\"generateTools\":$n}" > "$tmp/spec.json"
  snap=$(t "$bin" snapshot --timeout 300 -o "$tmp/live.lock" -- "$fx" "$tmp/spec.json")
  live=$(t "$bin" check --timeout 300 --baseline "$tmp/live.lock" --format json -- "$fx" "$tmp/spec.json")
  printf '| %s | %s | %s | %s | %s |\n' "$n" "$json" "$sarif" "$snap" "$live"
done
