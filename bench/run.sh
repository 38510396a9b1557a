#!/usr/bin/env bash
# Benchmarks: in-process parse vs check (cargo bench), then the release binary on the
# 5,000-tool pair with wall time and peak RSS (GNU time, when installed).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --bench check -- "$@"
cargo build --release -q
bin=target/release/mcp-covenant
pair=(--baseline bench/out/before-5000.lock --against bench/out/after-5000.lock --format json)
if [ -x /usr/bin/time ]; then
  /usr/bin/time -f "binary check, 5000 tools: %e s wall, %M KB peak RSS" "$bin" check "${pair[@]}" >/dev/null || true
else
  start=$(date +%s.%N); "$bin" check "${pair[@]}" >/dev/null || true; end=$(date +%s.%N)
  echo "binary check, 5000 tools: $(echo "$end - $start" | bc) s wall (install GNU time for peak RSS)"
fi
