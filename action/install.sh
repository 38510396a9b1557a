#!/usr/bin/env bash
# Installs mcp-covenant for the GitHub Action: a released version from crates.io when
# INPUT_VERSION is set, else the action's own source (ACTION_PATH).
set -euo pipefail
if command -v mcp-covenant >/dev/null && [ -z "${INPUT_VERSION:-}" ] && [ -n "${MCP_COVENANT_SKIP_INSTALL:-}" ]; then
  exit 0
fi
if [ -n "${INPUT_VERSION:-}" ]; then
  cargo install mcp-covenant --locked --version "$INPUT_VERSION"
else
  cargo install --locked --path "${ACTION_PATH:?ACTION_PATH is not set}"
fi
