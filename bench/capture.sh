#!/usr/bin/env bash
# Live-capture overhead: the fixture server's own start-up-to-exit time (stdin closed at
# once) vs. a full `snapshot` of it over stdio, median of N runs, for a handshake-era
# server, one that never answers a method it does not know (the era probe must cost no
# wait: goal <= 10 ms overhead), and a stateless-era server; then peak RSS.
#
# Then memory: the peak RSS of capturing a large tools/list reply over stdio and HTTP,
# against the reply's size, for a schema-heavy reply of ~64 MB (many small objects), a
# text-heavy one (long descriptions), and 400,000 tiny tools in 20.4 MB (the worst shape
# per byte when elements were held as maps). SHAPES="tiny" measures only some; LATENCY=0
# skips the start-up overhead. The fixture streams the reply from a file, so it
# stays small, and /usr/bin/time (which counts the children it reaps) measures
# mcp-covenant.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q --bins --examples
N=${N:-21}
SHAPES=${SHAPES:-schema text tiny}
out=$(mktemp -d)
fx=target/release/examples/fixture-server
tools='"tools":[{"name":"a","inputSchema":{"type":"object"}}],"generateTools":'"${TOOLS:-0}"
echo "{$tools}" > "$out/legacy.json"
echo "{$tools,\"silentOnUnknown\":true}" > "$out/silent.json"
echo "{$tools,\"era\":\"modern\",\"silentOnUnknown\":true}" > "$out/modern.json"
[ "${LATENCY:-1}" = 0 ] || python3 - "$N" "$out" <<'PY'
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
[ "${LATENCY:-1}" = 0 ] || /usr/bin/time -f "peak RSS of snapshot: %M KB" target/release/mcp-covenant snapshot -o "$out/x.lock" -- "$fx" "$out/legacy.json" 2>&1 | grep peak

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def props(i):
    return {f"field_{p}": {"type": "string", "description": f"Field {p} of generated tool {i}",
                           "enum": ["a", "b", "c"]} for p in range(20)}
schema = [{"name": f"gen_{i:05}", "description": "generated",
           "inputSchema": {"type": "object", "properties": props(i), "required": ["field_0"]}}
          for i in range(31000)]
text = [{"name": f"doc_{i:04}", "description": "x" * 64000,
         "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "description": "y" * 1000}}}}
        for i in range(1000)]
tiny = [{"name": f"t{i:06}", "inputSchema": {"type": "object"}} for i in range(400000)]
for name, tools in [("schema", schema), ("text", text), ("tiny", tiny)]:
    with open(f"{out}/{name}.json", "w") as f:
        json.dump({"tools": tools}, f, separators=(",", ":"))
    with open(f"{out}/{name}-spec.json", "w") as f:
        json.dump({"tools": [], "toolsListFile": f"{out}/{name}.json"}, f)
PY
for shape in $SHAPES; do
  size=$(stat -c %s "$out/$shape.json")
  /usr/bin/time -f "%M" -o "$out/rss" target/release/mcp-covenant snapshot --timeout 300 \
    -o "$out/$shape-stdio.lock" -- "$fx" "$out/$shape-spec.json" 2>/dev/null
  stdio=$(tail -1 "$out/rss")
  "$fx" "$out/$shape-spec.json" --http 0 > "$out/port" &
  fxpid=$!
  for _ in $(seq 100); do grep -q listening "$out/port" && break; sleep 0.05; done
  port=$(awk '{print $3}' "$out/port")
  /usr/bin/time -f "%M" -o "$out/rss" target/release/mcp-covenant snapshot --timeout 300 \
    -o "$out/$shape-http.lock" --http "http://127.0.0.1:$port/mcp" 2>/dev/null || true
  http=$(tail -1 "$out/rss")
  kill "$fxpid"
  wait "$fxpid" 2>/dev/null || true
  awk -v s="$size" -v a="$stdio" -v b="$http" -v n="$shape" 'BEGIN {
    printf "%s-heavy reply of %.1f MB: peak RSS %.0f MB over stdio (%.1fx), %.0f MB over HTTP (%.1fx)\n",
      n, s / 1e6, a / 1024, a * 1024 / s, b / 1024, b * 1024 / s }'
done
rm -rf "$out"
