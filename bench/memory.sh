#!/usr/bin/env bash
# Peak memory per kind of message: the peak RSS of `snapshot` of a server that sends one
# message of about SIZE_MIB MiB (default 64) of each kind, over stdio and over
# Streamable HTTP, against the message's size. The fixture server streams each message
# from a file (`rawBefore`, `rawAnswers`, `toolsListFile`), so over stdio (where
# /usr/bin/time also counts the server, a child mcp-covenant reaps) it stays small;
# over HTTP it runs apart and only mcp-covenant is measured.
#
#   notification   one notification whose params hold SIZE of small objects, before
#                  each answer
#   notifications  SIZE of 1 KB notifications (about 65,000 for 64 MiB) before each answer
#   initialize     an initialize result whose capabilities.experimental holds SIZE of
#                  small objects
#   error          server/discover answered with a JSON-RPC error whose data holds SIZE
#                  of small objects (the era probe; the capture goes on with initialize)
#   element        one tool whose inputSchema has SIZE of small properties
#   array          one tool whose inputSchema's default is an array of SIZE/4 zeros
#                  (16M zeros in a 32 MiB message for 64; the lockfile writes each on a line of its own, about 7.5x the message)
#   elements       SIZE of tiny tools
#
# KINDS="error element" measures only some; BIN=path measures another binary (an
# earlier build, for a before/after table). Prints a markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MIB=${SIZE_MIB:-64}
KINDS=${KINDS:-notification notifications initialize error element array elements}
cargo build --release -q --bins --examples
bin=${BIN:-target/release/mcp-covenant}
fx=target/release/examples/fixture-server
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 - "$out" "$SIZE_MIB" <<'PY'
import json, sys
out, size = sys.argv[1], int(sys.argv[2]) << 20
def objects(n_bytes):
    # `{"a":N},` about 12 bytes each: the worst shape per byte for a serde_json Value.
    parts, total, i = [], 0, 0
    while total < n_bytes:
        p = '{"a":%d}' % i
        parts.append(p); total += len(p) + 1; i += 1
    return "[" + ",".join(parts) + "]"
def write(name, text):
    with open(f"{out}/{name}", "w") as f:
        f.write(text)
init = '"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"m","version":"1"}}'
tools = '"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}'
write("init.json", init)
write("tools.json", tools)
write("notification", '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%s}}\n' % objects(size))
one = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%s"}}\n'
line = one % ("x" * (1024 - len(one) + 1))
write("notifications", line * (size // len(line)))
write("initialize.json", '"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"experimental":{"x":%s}},"serverInfo":{"name":"m","version":"1"}}' % objects(size))
write("error.json", '"error":{"code":-32601,"message":"no","data":%s}' % objects(size))
props, total, i = [], 0, 0
while total < size:
    p = '"p%d":{"type":"string"}' % i
    props.append(p); total += len(p) + 1; i += 1
write("element.json", '{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{%s}}}]}' % ",".join(props))
write("array.json", '{"tools":[{"name":"t","inputSchema":{"type":"array","default":[%s]}}]}' % ",".join(["0"] * (size // 4)))
tiny, total, i = [], 0, 0
while total < size:
    t = '{"name":"t%07d","inputSchema":{"type":"object"}}' % i
    tiny.append(t); total += len(t) + 1; i += 1
write("elements.json", '{"tools":[%s]}' % ",".join(tiny))
def spec(kind):
    s = {"tools": [], "rawAnswers": {"initialize": f"{out}/init.json", "tools/list": f"{out}/tools.json"}}
    if kind in ("notification", "notifications"):
        s["rawBefore"] = f"{out}/{kind}"
    elif kind == "initialize":
        s["rawAnswers"]["initialize"] = f"{out}/initialize.json"
    elif kind == "error":
        s["rawAnswers"]["server/discover"] = f"{out}/error.json"
    else:
        del s["rawAnswers"]["tools/list"]
        s["toolsListFile"] = f"{out}/{kind}.json"
    return s
for kind in ["notification", "notifications", "initialize", "error", "element", "array", "elements"]:
    write(f"{kind}-spec.json", json.dumps(spec(kind)))
PY
size_of() {
  case $1 in
    notification | notifications) stat -c %s "$out/$1" ;;
    *) stat -c %s "$out/$1.json" ;;
  esac
}
printf '| message kind | message size | peak RSS, stdio | peak RSS, HTTP |\n|---|---|---|---|\n'
for kind in $KINDS; do
  size=$(size_of "$kind")
  rc=0
  /usr/bin/time -f "%M" -o "$out/rss" "$bin" snapshot --timeout 600 \
    -o "$out/$kind-stdio.lock" -- "$fx" "$out/$kind-spec.json" 2>"$out/err" || rc=$?
  stdio=$(tail -1 "$out/rss")
  [ "$rc" = 0 ] || stdio="$stdio (exit $rc: $(grep error: "$out/err" | head -1 | cut -c1-80))"
  "$fx" "$out/$kind-spec.json" --http 0 > "$out/port" &
  fxpid=$!
  for _ in $(seq 200); do grep -q listening "$out/port" && break; sleep 0.05; done
  port=$(awk '{print $3}' "$out/port")
  rc=0
  /usr/bin/time -f "%M" -o "$out/rss" "$bin" snapshot --timeout 600 \
    -o "$out/$kind-http.lock" --http "http://127.0.0.1:$port/mcp" 2>"$out/err" || rc=$?
  http=$(tail -1 "$out/rss")
  [ "$rc" = 0 ] || http="$http (exit $rc: $(grep error: "$out/err" | head -1 | cut -c1-80))"
  kill "$fxpid"
  wait "$fxpid" 2>/dev/null || true
  awk -v s="$size" -v a="${stdio%% *}" -v b="${http%% *}" -v n="$kind" -v ea="${stdio#* }" -v eb="${http#* }" 'BEGIN {
    if (ea == a) ea = ""; if (eb == b) eb = "";
    printf "| %s | %.1f MB | %.0f MB (%.1fx)%s | %.0f MB (%.1fx)%s |\n",
      n, s / 1e6, a * 1024 / 1e6, a * 1024 / s, ea, b * 1024 / 1e6, b * 1024 / s, eb }'
done
