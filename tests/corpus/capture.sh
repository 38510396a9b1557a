#!/usr/bin/env bash
# Installs published MCP servers (npm, PyPI, crates.io) at pinned versions and captures
# each one's lockfile into tests/corpus/<package>/<version>.lock with this checkout's
# release binary. A developer tool, never run in CI: it needs the registries and takes a
# while (the crates.io server compiles). The lockfiles it writes are committed, so the
# corpus test (tests/it/corpus.rs) needs no network.
#
#   tests/corpus/capture.sh                 # every server below
#   tests/corpus/capture.sh server-memory   # only lines whose package name contains this
#   CORPUS_REGISTRY=pypi tests/corpus/capture.sh   # only one registry (npm, pypi, crate)
#   CORPUS_INSTALL_ONLY=1 tests/corpus/capture.sh  # install, capture nothing (no binary needed)
#
# Installs go to $CORPUS_INSTALL (default /tmp/mcp-covenant-corpus), never into the
# repository. An existing lockfile is captured over in place: an unchanged interface
# rewrites the same bytes (its captured_at_unix is kept).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
inst="${CORPUS_INSTALL:-/tmp/mcp-covenant-corpus}"
filter="${1:-}"
bin="$root/target/release/mcp-covenant"
[ -n "${CORPUS_INSTALL_ONLY:-}" ] || [ -x "$bin" ] || (cd "$root" && cargo build --release)
mkdir -p "$inst/fs-root"
# desktop-commander reports usage to Google Analytics unless its config (under $HOME, which
# is $inst/home for every server) says otherwise; its tool list does not read the config.
mkdir -p "$inst/home/.claude-server-commander"
[ -e "$inst/home/.claude-server-commander/config.json" ] ||
  echo '{"telemetryEnabled": false}' >"$inst/home/.claude-server-commander/config.json"
cat >"$inst/kubeconfig" <<'KUBE'
apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
users: [{name: none, user: {token: none}}]
current-context: none
KUBE

# registry  package  version  [with=REQ,REQ] [env=K=V,K=V] [proto=V]  command to start it over stdio.
# with= installs more packages next to it, pinning what an old release resolves wrongly today:
# - PyPI releases that declare `mcp>=1.x` with no upper bound get mcp 2.x, which no longer
#   has `mcp.shared.exceptions.McpError` (ImportError at start): `with=mcp<2`;
# - npm releases that convert zod with zod-to-json-schema get zod 4 hoisted by today's SDK,
#   which zod-to-json-schema 3 cannot read: every inputSchema comes out `{}`: `with=zod@3`.
# env=K=V,K=V sets variables for the server: dummy credentials that servers demand at
# start although listing tools needs none (nothing is sent anywhere: the capture only
# lists).
# proto=V pins the protocol revision (`--protocol V`; default auto). The rmcp 0.6 server
# exits when its first message is not `initialize` ("ConnectionClosed(\"initialized
# request\")"), so auto's `server/discover` probe kills it: it is captured with
# proto=2025-11-25.
# The options come in this order: with=, env=, proto=.
# $D is the install directory, $R the fixed directory the filesystem server may read, $K a
# kubeconfig naming an unreachable cluster (kubernetes-mcp-server exits without one; listing
# its tools does not connect).
# A line starting with # is skipped.
servers() {
  cat <<'EOF'
npm  @modelcontextprotocol/server-filesystem      2025.7.1    with=zod@3 node $D/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js $R
npm  @modelcontextprotocol/server-filesystem      2025.8.21   with=zod@3 node $D/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js $R
npm  @modelcontextprotocol/server-filesystem      2025.11.25  node $D/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js $R
npm  @modelcontextprotocol/server-filesystem      2026.8.31   node $D/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js $R
npm  @modelcontextprotocol/server-memory          0.6.2       node $D/node_modules/@modelcontextprotocol/server-memory/dist/index.js
npm  @modelcontextprotocol/server-memory          2025.9.25   node $D/node_modules/@modelcontextprotocol/server-memory/dist/index.js
npm  @modelcontextprotocol/server-memory          2025.11.25  node $D/node_modules/@modelcontextprotocol/server-memory/dist/index.js
npm  @modelcontextprotocol/server-memory          2026.8.31   node $D/node_modules/@modelcontextprotocol/server-memory/dist/index.js
npm  @modelcontextprotocol/server-everything      2025.9.25   node $D/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio
npm  @modelcontextprotocol/server-everything      2025.11.25  node $D/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio
npm  @modelcontextprotocol/server-everything      2026.1.26   node $D/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio
npm  @modelcontextprotocol/server-everything      2026.8.31   node $D/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio
npm  @modelcontextprotocol/server-sequential-thinking 0.6.2   node $D/node_modules/@modelcontextprotocol/server-sequential-thinking/dist/index.js
npm  @modelcontextprotocol/server-sequential-thinking 2025.12.18 node $D/node_modules/@modelcontextprotocol/server-sequential-thinking/dist/index.js
npm  @modelcontextprotocol/server-sequential-thinking 2026.8.31 node $D/node_modules/@modelcontextprotocol/server-sequential-thinking/dist/index.js
npm  @playwright/mcp                              0.0.40      node $D/node_modules/@playwright/mcp/cli.js
npm  @playwright/mcp                              0.0.55      node $D/node_modules/@playwright/mcp/cli.js
npm  @playwright/mcp                              0.0.64      node $D/node_modules/@playwright/mcp/cli.js
npm  @playwright/mcp                              0.0.82      node $D/node_modules/@playwright/mcp/cli.js
npm  @playwright/mcp                              0.0.83      node $D/node_modules/@playwright/mcp/cli.js
npm  @upstash/context7-mcp                        1.0.31      node $D/node_modules/@upstash/context7-mcp/dist/index.js
npm  @upstash/context7-mcp                        2.1.8       node $D/node_modules/@upstash/context7-mcp/dist/index.js
npm  @upstash/context7-mcp                        2.2.0       node $D/node_modules/@upstash/context7-mcp/dist/index.js
npm  @upstash/context7-mcp                        3.2.0       node $D/node_modules/@upstash/context7-mcp/dist/index.js
npm  @upstash/context7-mcp                        4.0.7       node $D/node_modules/@upstash/context7-mcp/dist/index.js
npm  @upstash/context7-mcp                        4.1.1       node $D/node_modules/@upstash/context7-mcp/dist/index.js
pypi mcp-server-time                              0.6.2       with=mcp<2 $D/bin/mcp-server-time --local-timezone UTC
pypi mcp-server-time                              2026.1.26   with=mcp<2 $D/bin/mcp-server-time --local-timezone UTC
pypi mcp-server-time                              2026.10.19  $D/bin/mcp-server-time --local-timezone UTC
pypi mcp-server-fetch                             0.6.2       with=mcp<2 $D/bin/mcp-server-fetch
pypi mcp-server-fetch                             2025.4.7    with=mcp<2 $D/bin/mcp-server-fetch
pypi mcp-server-fetch                             2026.10.24  $D/bin/mcp-server-fetch
pypi mcp-server-git                               0.6.2       with=mcp<2 $D/bin/mcp-server-git
pypi mcp-server-git                               2025.7.1    with=mcp<2 $D/bin/mcp-server-git
pypi mcp-server-git                               2025.12.18  with=mcp<2 $D/bin/mcp-server-git
pypi mcp-server-git                               2026.6.16   with=mcp<2 $D/bin/mcp-server-git
pypi mcp-server-git                               2026.10.19  $D/bin/mcp-server-git
pypi awslabs.aws-documentation-mcp-server         1.1.20      with=mcp<2 $D/bin/awslabs.aws-documentation-mcp-server
pypi awslabs.aws-documentation-mcp-server         1.2.3       $D/bin/awslabs.aws-documentation-mcp-server
npm  @azure/mcp                                   2.0.0-beta.8 node $D/node_modules/@azure/mcp/index.js server start --mode all
npm  @azure/mcp                                   2.0.5       node $D/node_modules/@azure/mcp/index.js server start --mode all
npm  @notionhq/notion-mcp-server                 1.8.1       env=NOTION_TOKEN=ntn_dummy node $D/node_modules/@notionhq/notion-mcp-server/bin/cli.mjs
npm  @notionhq/notion-mcp-server                 1.9.1       env=NOTION_TOKEN=ntn_dummy node $D/node_modules/@notionhq/notion-mcp-server/bin/cli.mjs
npm  @notionhq/notion-mcp-server                 2.0.0       env=NOTION_TOKEN=ntn_dummy node $D/node_modules/@notionhq/notion-mcp-server/bin/cli.mjs
npm  @notionhq/notion-mcp-server                 2.1.0       env=NOTION_TOKEN=ntn_dummy node $D/node_modules/@notionhq/notion-mcp-server/bin/cli.mjs
npm  @notionhq/notion-mcp-server                 2.2.1       env=NOTION_TOKEN=ntn_dummy node $D/node_modules/@notionhq/notion-mcp-server/bin/cli.mjs
npm  @notionhq/notion-mcp-server                 2.4.1       env=NOTION_TOKEN=ntn_dummy node $D/node_modules/@notionhq/notion-mcp-server/bin/cli.mjs
npm  @modelcontextprotocol/server-github          0.6.2       with=zod@3 env=GITHUB_PERSONAL_ACCESS_TOKEN=ghp_dummy node $D/node_modules/@modelcontextprotocol/server-github/dist/index.js
npm  @modelcontextprotocol/server-github          2025.1.23   env=GITHUB_PERSONAL_ACCESS_TOKEN=ghp_dummy node $D/node_modules/@modelcontextprotocol/server-github/dist/index.js
npm  @modelcontextprotocol/server-github          2025.3.28   env=GITHUB_PERSONAL_ACCESS_TOKEN=ghp_dummy node $D/node_modules/@modelcontextprotocol/server-github/dist/index.js
npm  @modelcontextprotocol/server-github          2025.4.8    env=GITHUB_PERSONAL_ACCESS_TOKEN=ghp_dummy node $D/node_modules/@modelcontextprotocol/server-github/dist/index.js
npm  firecrawl-mcp                                1.12.0      env=FIRECRAWL_API_KEY=fc-dummy node $D/node_modules/firecrawl-mcp/dist/index.js
npm  firecrawl-mcp                                2.0.2       env=FIRECRAWL_API_KEY=fc-dummy node $D/node_modules/firecrawl-mcp/dist/index.js
npm  firecrawl-mcp                                3.1.13      env=FIRECRAWL_API_KEY=fc-dummy node $D/node_modules/firecrawl-mcp/dist/index.js
npm  firecrawl-mcp                                3.11.0      env=FIRECRAWL_API_KEY=fc-dummy node $D/node_modules/firecrawl-mcp/dist/index.js
npm  firecrawl-mcp                                3.20.4      env=FIRECRAWL_API_KEY=fc-dummy node $D/node_modules/firecrawl-mcp/dist/index.js
npm  firecrawl-mcp                                3.26.0      env=FIRECRAWL_API_KEY=fc-dummy node $D/node_modules/firecrawl-mcp/dist/index.js
pypi awslabs.dynamodb-mcp-server                  1.0.9       env=AWS_REGION=us-east-1 $D/bin/awslabs.dynamodb-mcp-server
pypi awslabs.dynamodb-mcp-server                  2.0.1       env=AWS_REGION=us-east-1 $D/bin/awslabs.dynamodb-mcp-server
pypi awslabs.dynamodb-mcp-server                  2.0.24      env=AWS_REGION=us-east-1 $D/bin/awslabs.dynamodb-mcp-server
pypi arxiv-mcp-server                             0.4.12      with=mcp<2 $D/bin/arxiv-mcp-server --storage-path $D/papers
pypi arxiv-mcp-server                             0.6.3       $D/bin/arxiv-mcp-server --storage-path $D/papers
pypi arxiv-mcp-server                             0.8.2       $D/bin/arxiv-mcp-server --storage-path $D/papers
pypi awslabs.aws-pricing-mcp-server                1.0.5       with=mcp<2 env=AWS_REGION=us-east-1 $D/bin/awslabs.aws-pricing-mcp-server
pypi awslabs.aws-pricing-mcp-server                1.0.14      with=mcp<2 env=AWS_REGION=us-east-1 $D/bin/awslabs.aws-pricing-mcp-server
pypi awslabs.aws-pricing-mcp-server                1.0.22      with=mcp<2 env=AWS_REGION=us-east-1 $D/bin/awslabs.aws-pricing-mcp-server
pypi awslabs.aws-pricing-mcp-server                1.0.30      with=mcp<2 env=AWS_REGION=us-east-1 $D/bin/awslabs.aws-pricing-mcp-server
pypi awslabs.aws-pricing-mcp-server                1.1.1       env=AWS_REGION=us-east-1 $D/bin/awslabs.aws-pricing-mcp-server
pypi awslabs.cloudwatch-mcp-server                 0.0.5       with=mcp<2 env=AWS_REGION=us-east-1 $D/bin/awslabs.cloudwatch-mcp-server
pypi awslabs.cloudwatch-mcp-server                 0.0.15      with=mcp<2 env=AWS_REGION=us-east-1 $D/bin/awslabs.cloudwatch-mcp-server
pypi awslabs.cloudwatch-mcp-server                 0.0.26      with=mcp<2 env=AWS_REGION=us-east-1 $D/bin/awslabs.cloudwatch-mcp-server
pypi awslabs.cloudwatch-mcp-server                 0.1.5       with=mcp<2 env=AWS_REGION=us-east-1 $D/bin/awslabs.cloudwatch-mcp-server
pypi awslabs.cloudwatch-mcp-server                 0.2.1       env=AWS_REGION=us-east-1 $D/bin/awslabs.cloudwatch-mcp-server
npm  @wonderwhy-er/desktop-commander             0.2.3       node $D/node_modules/@wonderwhy-er/desktop-commander/dist/index.js
npm  @wonderwhy-er/desktop-commander             0.2.27      node $D/node_modules/@wonderwhy-er/desktop-commander/dist/index.js
npm  @wonderwhy-er/desktop-commander             0.2.41      node $D/node_modules/@wonderwhy-er/desktop-commander/dist/index.js
npm  mongodb-mcp-server                          2.1.1       env=MDB_MCP_TELEMETRY=disabled,DO_NOT_TRACK=1 node $D/node_modules/mongodb-mcp-server/dist/esm/index.js
npm  mongodb-mcp-server                          3.0.4       env=MDB_MCP_TELEMETRY=disabled,DO_NOT_TRACK=1 node $D/node_modules/mongodb-mcp-server/dist/esm/index.js
npm  kubernetes-mcp-server                       0.0.60      node $D/node_modules/kubernetes-mcp-server/bin/index.js --kubeconfig $K
npm  kubernetes-mcp-server                       0.0.67      node $D/node_modules/kubernetes-mcp-server/bin/index.js --kubeconfig $K
pypi mcp-grafana                                 1.0.0       $D/bin/mcp-grafana
pypi mcp-grafana                                 1.4.0       $D/bin/mcp-grafana
crate mcp-server-time                             0.1.0       proto=2025-11-25 $D/bin/mcp-server-time
crate mcp-server-time                             0.2.0       proto=2025-11-25 $D/bin/mcp-server-time
crate mcp-server-time                             0.3.0       proto=2025-11-25 $D/bin/mcp-server-time
EOF
}

# the directory name a package gets under tests/corpus/: registry prefix for crates
# (mcp-server-time exists on both PyPI and crates.io), scope and slashes flattened
safe_name() {
  local reg="$1" pkg="$2" s
  s="${pkg#@}"; s="${s//\//__}"
  [ "$reg" = crate ] && s="crate-$s"
  printf '%s' "$s"
}

install() {
  local reg="$1" pkg="$2" ver="$3" dir="$4" with="$5"
  [ -e "$dir/.installed" ] && return 0
  rm -rf "$dir"; mkdir -p "$dir"
  case "$reg" in
    npm)
      (cd "$dir" && echo '{"private":true}' > package.json &&
        # shellcheck disable=SC2086 # one word per extra package
        npm install --no-audit --no-fund --loglevel=error --ignore-scripts "$pkg@$ver" ${with//,/ }) ;;
    pypi)
      python3 -m venv "$dir"
      # shellcheck disable=SC2086 # one word per extra requirement
      "$dir/bin/pip" install --quiet --disable-pip-version-check "$pkg==$ver" ${with//,/ } ;;
    crate)
      cargo install --quiet --locked --root "$dir" "$pkg@$ver" ||
        cargo install --quiet --root "$dir" "$pkg@$ver" ;;
  esac
  touch "$dir/.installed"
}

status=0
while read -r reg pkg ver cmd; do
  case "$reg" in '' | '#'*) continue ;; esac
  case "$pkg" in *"$filter"*) ;; *) continue ;; esac
  case "$reg" in ${CORPUS_REGISTRY:-*}) ;; *) continue ;; esac
  name="$(safe_name "$reg" "$pkg")"
  D="$inst/$name-$ver"; R="$inst/fs-root"; K="$inst/kubeconfig"
  with=""
  case "$cmd" in with=*) with="${cmd%% *}"; with="${with#with=}"; cmd="${cmd#* }" ;; esac
  envs=()
  case "$cmd" in env=*) e="${cmd%% *}"; e="${e#env=}"; cmd="${cmd#* }"; IFS=, read -r -a envs <<<"$e" ;; esac
  proto=auto
  case "$cmd" in proto=*) proto="${cmd%% *}"; proto="${proto#proto=}"; cmd="${cmd#* }" ;; esac
  echo "== $reg $pkg@$ver${with:+ with $with}" >&2
  if ! install "$reg" "$pkg" "$ver" "$D" "$with" >"$inst/$name-$ver.install.log" 2>&1; then
    echo "   install failed: see $inst/$name-$ver.install.log" >&2; status=1; continue
  fi
  [ -n "${CORPUS_INSTALL_ONLY:-}" ] && continue
  mkdir -p "$here/$name"
  cmd="${cmd//\$D/$D}"; cmd="${cmd//\$R/$R}"; cmd="${cmd//\$K/$K}"
  # shellcheck disable=SC2086 # the command is split on whitespace on purpose
  if ! (cd "$inst" && HOME="$inst/home" MEMORY_FILE_PATH="$inst/memory.json" \
        env ${envs[@]+"${envs[@]}"} "$bin" snapshot --protocol "$proto" --timeout 60 -o "$here/$name/$ver.lock" -- $cmd); then
    echo "   capture failed" >&2; status=1
  fi
done < <(servers)
exit $status
