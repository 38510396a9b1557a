#!/usr/bin/env bash
# The GitHub Action's check step. Captures the server once (snapshot to a temporary
# lockfile), then reports from that capture offline: markdown to the step summary,
# SARIF to INPUT_SARIF when asked, and INPUT_FORMAT to the log, whose exit status
# (0 pass, 1 a change at or above fail-on, 2 error) is the step's.
set -uo pipefail
bin=${MCP_COVENANT_BIN:-mcp-covenant}
tmp=$(mktemp -d "${RUNNER_TEMP:-/tmp}/mcp-covenant.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
current="$tmp/current.lock"

# Inputs are split on whitespace; nothing in them is evaluated.
read -r -a extra <<<"${INPUT_ARGS:-}"
if [ -n "${INPUT_HTTP:-}" ]; then
  "$bin" snapshot -o "$current" "${extra[@]}" --http "$INPUT_HTTP" || exit 2
elif [ -n "${INPUT_COMMAND:-}" ]; then
  read -r -a cmd <<<"$INPUT_COMMAND"
  "$bin" snapshot -o "$current" "${extra[@]}" -- "${cmd[@]}" || exit 2
else
  echo "error: give the action a \`command\` (stdio) or an \`http\` URL" >&2
  exit 2
fi

baseline=${INPUT_BASELINE:-mcp-covenant.lock}
check=("$bin" check --baseline "$baseline" --against "$current")

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  "${check[@]}" --format markdown --fail-on never >>"$GITHUB_STEP_SUMMARY" || exit 2
fi
if [ -n "${INPUT_SARIF:-}" ]; then
  "${check[@]}" --format sarif --fail-on never --output "$INPUT_SARIF" >/dev/null || exit 2
  [ -n "${GITHUB_OUTPUT:-}" ] && echo "sarif=$INPUT_SARIF" >>"$GITHUB_OUTPUT"
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  bump=$("${check[@]}" --format json --fail-on never | sed -n 's/^  "required_bump": "\(.*\)",$/\1/p')
  echo "bump=${bump:-none}" >>"$GITHUB_OUTPUT"
fi
"${check[@]}" --format "${INPUT_FORMAT:-github}" --fail-on "${INPUT_FAIL_ON:-breaking}"
