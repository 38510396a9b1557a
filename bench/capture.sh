#!/usr/bin/env bash
# Live-capture overhead: the fixture server's own start-up-to-exit time (stdin closed at
# once) vs. a full `snapshot` of it over stdio, median of N runs; then peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q --bins --examples
N=${N:-21}
spec=$(mktemp); out=$(mktemp -d)
echo '{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"generateTools":'"${TOOLS:-0}"'}' > "$spec"
python3 - "$N" "$spec" "$out" <<'PY'
import statistics, subprocess, sys, time
n, spec, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
fx = "target/release/examples/fixture-server"
def med(cmd, **kw):
    ts = []
    for _ in range(n):
        t = time.perf_counter(); subprocess.run(cmd, check=False, **kw); ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3
start = med([fx, spec], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
cap = med(["target/release/mcp-covenant", "snapshot", "-o", out + "/x.lock", "--", fx, spec], stderr=subprocess.DEVNULL)
print(f"server start-up to exit: {start:.1f} ms; snapshot: {cap:.1f} ms; overhead: {cap - start:.1f} ms (median of {n})")
PY
/usr/bin/time -f "peak RSS of snapshot: %M KB" target/release/mcp-covenant snapshot -o "$out/x.lock" -- target/release/examples/fixture-server "$spec" 2>&1 | grep peak
rm -rf "$spec" "$out"
