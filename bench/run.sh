#!/usr/bin/env bash
# Benchmarks: in-process parse vs check (cargo bench), then the release binaries on the
# 5,000-tool pair: wall time and peak RSS of `check --against` next to merely parsing
# both files into serde_json::Value (held together, as a diff needs them), every
# report format, and the binary sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --bench check -- "$@"
cargo build --release -q
bench=$(ls -t target/release/deps/check-* | grep -v '\.d$' | head -1)
bin=target/release/mcp-covenant
a=bench/out/before-5000.lock; b=bench/out/after-5000.lock
t() { /usr/bin/time -f "%e s wall, %M KB peak RSS" "$@" 2>&1 >/dev/null | tail -1; }
echo "parse both into Value (5000 tools): $(t "$bench" --parse-only "$a" "$b")"
# Every format reads both files the same way (SARIF and GitHub add line maps); so does
# a file that is not byte-for-byte canonical (here: a trailing space).
for f in json sarif github markdown junit human; do
  printf 'check --format %-8s (5000 tools): %s\n' "$f" "$(t "$bin" check --baseline "$a" --against "$b" --format "$f")"
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
{ cat "$a"; echo " "; } > "$tmp/a.lock"; { cat "$b"; echo " "; } > "$tmp/b.lock"
echo "check --format sarif, not canonical: $(t "$bin" check --baseline "$tmp/a.lock" --against "$tmp/b.lock" --format sarif)"
echo "release binary: $(stat -c %s "$bin") bytes"
cargo build --release -q --no-default-features --target-dir target/stdio-only
echo "stdio-only binary: $(stat -c %s target/stdio-only/release/mcp-covenant) bytes"
