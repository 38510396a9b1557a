#!/usr/bin/env bash
# Live-capture overhead: the fixture server's own start-up-to-exit time (stdin closed at
# once) vs. a full `snapshot` of it over stdio, median of N runs, for a handshake-era
# server, one that never answers a method it does not know (the era probe must cost no
# wait: goal <= 10 ms overhead), and a stateless-era server; then peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q --bins --examples
N=${N:-21}
out=$(mktemp -d)
tools='"tools":[{"name":"a","inputSchema":{"type":"object"}}],"generateTools":'"${TOOLS:-0}"
echo "{$tools}" > "$out/legacy.json"
echo "{$tools,\"silentOnUnknown\":true}" > "$out/silent.json"
echo "{$tools,\"era\":\"modern\",\"silentOnUnknown\":true}" > "$out/modern.json"
python3 - "$N" "$out" <<'PY'
import statistics, subprocess, sys, time
n, out = int(sys.argv[1]), sys.argv[2]
fx = "target/release/examples/fixture-server"
def med(cmd, **kw):
    ts = []
    for _ in range(n):
        t = time.perf_counter(); r = subprocess.run(cmd, check=False, **kw); ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3, r.returncode
for case, what in [("legacy", "handshake era"), ("silent", "handshake era, silent on unknown methods"),
                   ("modern", "stateless era, silent on unknown methods")]:
    spec = f"{out}/{case}.json"
    start, _ = med([fx, spec], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    cap, rc = med(["target/release/mcp-covenant", "snapshot", "--timeout", "30", "-o", f"{out}/{case}.lock", "--", fx, spec],
                  stderr=subprocess.DEVNULL)
    status = "" if rc == 0 else f" (snapshot FAILED, exit {rc})"
    print(f"{what}: server start-up to exit {start:.1f} ms; snapshot {cap:.1f} ms; overhead {cap - start:.1f} ms (median of {n}){status}")
PY
/usr/bin/time -f "peak RSS of snapshot: %M KB" target/release/mcp-covenant snapshot -o "$out/x.lock" -- target/release/examples/fixture-server "$out/legacy.json" 2>&1 | grep peak
rm -rf "$out"
