#!/usr/bin/env bash
# The GitHub Action's check steps. Two parts, each on by default and each turned off by
# an input; the first argument picks which this run does (action.yml runs them as two
# steps, `verdict` then `up-to-date`; no argument: both, in that order):
#
#   verdict (INPUT_VERDICT): on a pull request, the base branch's lockfile
#     (INPUT_BASE_REF, from github.base_ref) against the pull request's,
#     `check --baseline-rev`, classified and gated by INPUT_FAIL_ON (else covenant.toml's fail_on: breaking, minor,
#     patch, version or never). It runs no code of the pull request, so it runs first:
#     the base branch is fetched by force into a ref of the Action's own
#     (refs/mcp-covenant/base), never read from a ref the checkout or an earlier step
#     left (refs/remotes/origin/* can be moved by anything that ran in the job), and it
#     needs no `command`/`http`: the lockfiles are data. This is the part a pull request
#     cannot bypass by regenerating the lockfile in the same commit.
#   up to date (INPUT_UP_TO_DATE): the committed lockfile (INPUT_BASELINE) must be what
#     a live capture of the server (INPUT_COMMAND or INPUT_HTTP) writes:
#     `snapshot --check`, which never writes. It runs the pull request's server, so a
#     malicious pull request can make it lie; it runs last, and nothing after it trusts
#     the runner.
#
# INPUT_MODE=upgrade is for a repository that consumes servers (pins in client configs or
# covenant.toml's [[server]] packages) instead of serving one: the `upgrade` part (the
# third step, which has no token) runs `mcp-covenant upgrade --baseline-rev` on a pull
# request (what the moved pins change, gated by INPUT_FAIL_ON, else covenant.toml's
# fail_on, else breaking) or plain `upgrade` on any other event (a report, failing only
# when fail-on is given); the verdict and up-to-date parts do nothing. It installs and
# starts the packages the pins name, as an upgrade must: a package is judged by what it
# says of itself, so it runs where no token is, and comment and approve-label (which need
# the token) are refused in this mode.
#
# Without INPUT_COMMAND and INPUT_HTTP, the server is covenant.toml's: its `command` or
# `url`, or with [[server]] entries both parts run on every entry (each with its own
# lockfile). INPUT_WORKING_DIRECTORY
# (default: .) is where covenant.toml and the lockfiles live (a package of a monorepo).
#
# MCP_COVENANT_BIN is the absolute path of the binary action/install.sh verified and
# installed (its output `bin`): nothing is looked up on PATH.
#
# The job's token (GITHUB_TOKEN) is for the REST API calls of action/pr.sh only: it is
# taken out of the environment of every process this starts (mcp-covenant, git, the
# server), and it reaches curl on its standard input, never its command line. action.yml
# gives it to the verdict step only: the up-to-date step, which starts the server, never
# has it (a process can read its ancestors' environment).
#
# Reports: markdown to the step summary, SARIF to INPUT_SARIF when asked, INPUT_FORMAT
# to the log; outputs `bump`, `sarif`, `up-to-date`. The exit status is the worst of the
# parts: 0 pass, 1 a part failed, 2 mcp-covenant or git could not do its job.
# Inputs are split on whitespace; nothing in them is evaluated.
#
# The pull request as a conversation (action/pr.sh, the REST API through curl):
#   INPUT_COMMENT=true keeps one comment on the pull request (INPUT_PR_NUMBER), found by
#     its hidden marker among the token's own comments and updated in place on every
#     push; a token that may not write (a fork's) leaves the step summary only, with a
#     notice.
#   INPUT_APPROVE_LABEL=NAME: when the pull request carries that label, the verdict's
#     failures are reported as approved (by that label) and do not fail the job. Commits
#     pushed while it is on are not approved by it: that run fails and removes it.
#   INPUT_ANNOTATIONS=error|warning|notice|none caps the level of the verdict's
#     workflow annotations (`github` format).
set -uo pipefail
part=${1:-all}
case $part in
  verdict | up-to-date | upgrade | all) ;;
  *)
    echo "error: action/run.sh takes \`verdict\`, \`up-to-date\`, \`upgrade\` or nothing (verdict and up-to-date), not \`$part\`" >&2
    exit 2
    ;;
esac
mode=${INPUT_MODE:-check}
case $mode in
  check | upgrade) ;;
  *)
    echo "error: mode must be \`check\` (a server's own interface) or \`upgrade\` (the servers a repository pins), not \`$mode\`" >&2
    exit 2
    ;;
esac
# Each part belongs to one mode: the others have nothing to do here. (No argument, in
# upgrade mode: the upgrade part.)
if [ "$mode" = upgrade ] && [ "$part" = all ]; then part=upgrade; fi
if { [ "$mode" = upgrade ] && [ "$part" != upgrade ]; } || { [ "$mode" = check ] && [ "$part" = upgrade ]; }; then
  exit 0
fi
# Secrets no process started here may see. GITHUB_TOKEN stays a shell variable for pr.sh.
secrets=(GITHUB_TOKEN INPUT_TOKEN GH_TOKEN ACTIONS_RUNTIME_TOKEN ACTIONS_ID_TOKEN_REQUEST_TOKEN ACTIONS_ID_TOKEN_REQUEST_URL)
if [ "$part" = up-to-date ] || [ "$part" = upgrade ]; then unset "${secrets[@]}"; fi
export -n "${secrets[@]}" 2>/dev/null
unset INPUT_TOKEN
bin=${MCP_COVENANT_BIN:-}
case "$bin" in
  /* | [A-Za-z]:[/\\]*) ;;
  *)
    echo "error: MCP_COVENANT_BIN must be the absolute path of the mcp-covenant binary that action/install.sh verified (its output \`bin\`), not \`$bin\`: a binary found on PATH is never run" >&2
    exit 2
    ;;
esac
if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
  echo "error: $bin is not an executable file: run action/install.sh first" >&2
  exit 2
fi
# mcp-covenant, by its path, with none of the secrets in its environment.
mcp() { env "${secrets[@]/#/-u}" "$bin" "$@"; }
lock=${INPUT_BASELINE:-mcp-covenant.lock}
status=0
worst() { if [ "$1" -gt "$status" ]; then status=$1; fi; }
on() { case "$1" in false | False | FALSE | no | off | 0) return 1 ;; *) return 0 ;; esac; }
output() { if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "$1" >>"$GITHUB_OUTPUT"; fi; }
summary() { if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat >>"$GITHUB_STEP_SUMMARY"; else cat >/dev/null; fi; }
# A workflow-command property or message: %, CR, LF (and , : in properties) escaped.
escape() { local s=${1//%/%25}; s=${s//$'\r'/%0D}; s=${s//$'\n'/%0A}; printf '%s' "$s"; }
escape_property() { local s; s=$(escape "$1"); s=${s//:/%3A}; s=${s//,/%2C}; printf '%s' "$s"; }

# shellcheck source=action/pr.sh
. "$(dirname "${BASH_SOURCE[0]}")/pr.sh"
# SARIF goes where the workflow said, from the workspace; then into the package.
sarif=${INPUT_SARIF:-}
case "$sarif" in "" | /*) ;; *) sarif=$PWD/$sarif ;; esac
workdir=${INPUT_WORKING_DIRECTORY:-.}
if ! cd -- "$workdir" 2>/dev/null; then
  echo "error: working-directory \`$workdir\` is not a directory of the checkout" >&2
  exit 2
fi
case "${INPUT_ANNOTATIONS:-error}" in
  error | warning | notice | none) ;;
  *)
    echo "error: annotations must be error, warning, notice or none, not \`${INPUT_ANNOTATIONS}\`" >&2
    exit 2
    ;;
esac

read -r -a extra <<<"${INPUT_ARGS:-}"
# The server given as an input, or else every [[server]] of covenant.toml.
single=1
live=()
if [ -n "${INPUT_HTTP:-}" ]; then
  live=(--http "$INPUT_HTTP")
elif [ -n "${INPUT_COMMAND:-}" ]; then
  read -r -a cmd <<<"$INPUT_COMMAND"
  live=(-- "${cmd[@]}")
elif [ -f covenant.toml ] && grep -Eq '^[[:space:]]*\[\[server\]\]' covenant.toml; then
  single=0
fi
lockfile=()
if [ "$single" = 1 ]; then lockfile=(--baseline "$lock"); fi

ran=0

# --- part 1: the committed lockfile is up to date ---------------------------------------
up_to_date() {
  # Without a `command` or `http` input, the server is covenant.toml's (`command` or
  # `url`, as `init` writes it): mcp-covenant reads it, and says what to do when there is
  # none.
  if [ "$single" = 1 ]; then
    mcp snapshot --check -o "$lock" "${extra[@]}" "${live[@]}"
  else
    mcp snapshot --check "${extra[@]}"
  fi
  rc=$?
  case $rc in
    0) output "up-to-date=true" ;;
    1)
      output "up-to-date=false"
      what="the committed lockfile is not what the server serves: run \`mcp-covenant snapshot\` and commit the result"
      if [ "$single" = 1 ]; then
        what="$lock is not up to date with the server: run \`mcp-covenant snapshot -o $lock\` and commit the result"
        echo "::error file=$(escape_property "$lock")::$(escape "$what")"
      else
        echo "::error::$(escape "$what")"
      fi
      printf '### mcp-covenant: lockfile out of date\n\n%s\n\n' "$what" | summary
      ;;
  esac
  worst "$rc"
}

# --- part 2: the verdict, the pull request's lockfile against the base branch's ----------
# The base branch's tip, fetched by force into a ref of our own (`ref`): whatever the
# checkout, an earlier step or a cache left in refs/remotes/origin/* (or here) is
# overwritten, not trusted. A shallow checkout (a pull request's merge commit) gets the
# tip alone, which is all the verdict reads. No hooks run.
ref=refs/mcp-covenant/base
fetch_base() {
  if [[ $base == -* ]] || ! git check-ref-format "refs/heads/$base"; then
    echo "error: base-ref \`$base\` is not a branch name" >&2
    exit 2
  fi
  local depth=()
  if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then depth=(--depth=1); fi
  if ! env "${secrets[@]/#/-u}" git -c core.hooksPath=/dev/null fetch --quiet --no-tags --no-recurse-submodules \
    "${depth[@]}" origin "+refs/heads/$base:$ref"; then
    echo "error: cannot fetch the base branch \`$base\` from origin" >&2
    exit 2
  fi
  echo "mcp-covenant: the base branch \`$base\` is $(git rev-parse --verify --quiet "$ref^{commit}") (fetched as $ref)" >&2
}

verdict() {
  fetch_base
  # Each lockfile against itself at the base branch's tip (a lockfile the base lacks is
  # new: everything in it is reported as added).
  check=(mcp check --baseline-rev "$ref" "${lockfile[@]}")
  # The approve label, read before the verdict (no label read: not approved).
  # A label that was on before this run's commits were pushed approved earlier changes,
  # not these: it counts again once added again.
  approved=0
  stale=0
  if [ -n "${INPUT_APPROVE_LABEL:-}" ] && pr_has_label "$INPUT_APPROVE_LABEL"; then
    case $(pr_label_approves "$INPUT_APPROVE_LABEL") in
      yes) approved=1 ;;
      stale)
        stale=1
        echo "::notice::mcp-covenant: the approve label \`$(escape "$INPUT_APPROVE_LABEL")\` was on the pull request before these commits were pushed: it approved the changes it was given on, not these"
        ;;
      *)
        stale=2
        echo "::notice::mcp-covenant: the approve label \`$(escape "$INPUT_APPROVE_LABEL")\` counts on the run that adding it starts, or a re-run of the latest push's run; this run's event (\`$(escape "$(jq -r '.action // "?"' "$GITHUB_EVENT_PATH" 2>/dev/null)")\`) cannot tell whether it came before the latest commits, so it approves nothing here"
        ;;
    esac
  fi
  # Extra renderings first, quietly: the last run prints any error, and its status.
  report="${RUNNER_TEMP:-/tmp}/mcp-covenant-report.md"
  "${check[@]}" --format markdown --fail-on never >"$report" 2>/dev/null
  if [ "$approved" = 1 ]; then
    approval="**Approved** by the label \`$INPUT_APPROVE_LABEL\`: the changes below are intended, and do not fail this check."
    { printf '%s\n\n' "$approval"; cat "$report"; } >"$report.tmp" && mv "$report.tmp" "$report"
  elif [ "$stale" = 1 ]; then
    approval="**Not approved:** the label \`$INPUT_APPROVE_LABEL\` was on the pull request before its latest commits were pushed, so it does not approve them. Add it again to approve the changes as they are now."
    { printf '%s\n\n' "$approval"; cat "$report"; } >"$report.tmp" && mv "$report.tmp" "$report"
  elif [ "$stale" = 2 ]; then
    approval="**Not approved here:** the label \`$INPUT_APPROVE_LABEL\` counts on the run that adding it starts, or a re-run of the latest push's run; this run was started by another event, which cannot tell whether the label came before the latest commits. Re-run the latest push's run, or add the label again."
    { printf '%s\n\n' "$approval"; cat "$report"; } >"$report.tmp" && mv "$report.tmp" "$report"
  fi
  summary <"$report"
  if on "${INPUT_COMMENT:-false}"; then
    pr_comment "$report"
  fi
  if [ -n "$sarif" ]; then
    if "${check[@]}" --format sarif --fail-on never --output "$sarif" >/dev/null 2>&1; then
      output "sarif=$INPUT_SARIF"
    fi
  fi
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    # The highest bump of any server.
    bumps=$("${check[@]}" --format json --fail-on never 2>/dev/null | sed -n 's/^ *"required_bump": "\([a-z]*\)",$/\1/p')
    bump=none
    for b in patch minor major; do
      if grep -qx "$b" <<<"$bumps"; then bump=$b; fi
    done
    output "bump=$bump"
  fi
  cap=${INPUT_ANNOTATIONS:-error}
  # An approved break is a warning, not an error.
  if [ "$approved" = 1 ] && [ "$cap" = error ]; then cap=warning; fi
  # No fail-on input: covenant.toml's fail_on (held to the base's), else breaking.
  "${check[@]}" --format "${INPUT_FORMAT:-github}" ${INPUT_FAIL_ON:+--fail-on "$INPUT_FAIL_ON"} | cap_annotations "$cap"
  rc=${PIPESTATUS[0]}
  if [ "$rc" = 1 ] && [ "$approved" = 1 ]; then
    echo "mcp-covenant: the verdict fails, approved by the label \`$INPUT_APPROVE_LABEL\`"
    rc=0
  fi
  # Off, so that no later run of these commits counts it, and adding it again (a
  # `labeled` run) approves what is there now.
  if [ "$rc" = 1 ] && [ "$stale" = 1 ]; then
    pr_remove_label "$INPUT_APPROVE_LABEL"
  fi
  worst "$rc"
}

# --- upgrade mode: what the pull request's pin moves change ------------------------------
upgrade_part() {
  if on "${INPUT_COMMENT:-false}" || [ -n "${INPUT_APPROVE_LABEL:-}" ]; then
    echo "error: comment and approve-label need the token, and mode: upgrade runs the pinned packages, which no step with the token may start: leave them off (the verdict is in the step summary and the log)" >&2
    exit 2
  fi
  local args=(upgrade) gate=()
  if [ -n "${INPUT_FAIL_ON:-}" ]; then gate=(--fail-on "$INPUT_FAIL_ON"); fi
  if [ -n "$base" ]; then
    fetch_base
    args+=(--baseline-rev "$ref")
  elif [ ${#gate[@]} -eq 0 ]; then
    echo "mcp-covenant: not a pull request: the upgrade report is for reading (give fail-on to gate on it)"
    gate=(--fail-on never)
  fi
  report="${RUNNER_TEMP:-/tmp}/mcp-covenant-upgrade.md"
  rm -f "$report"
  mcp "${args[@]}" "${extra[@]}" "${gate[@]}" --format markdown --output "$report"
  rc=$?
  if [ -f "$report" ]; then summary <"$report"; fi
  worst "$rc"
}

base=${INPUT_BASE_REF:-}
if [ "$part" = upgrade ]; then
  upgrade_part
  exit "$status"
fi
verdict_runs=0
if on "${INPUT_VERDICT:-true}" && [ -n "$base" ]; then verdict_runs=1; fi
# The verdict first: nothing of the pull request has run in this step yet.
if [ "$part" != up-to-date ]; then
  if [ "$verdict_runs" = 1 ]; then
    ran=1
    verdict
  elif on "${INPUT_VERDICT:-true}"; then
    echo "mcp-covenant: no base branch (not a pull request): the verdict is skipped"
  fi
fi
# Then the part that runs the server; the verdict's report is already out.
if [ "$part" != verdict ] && on "${INPUT_UP_TO_DATE:-true}"; then
  ran=1
  up_to_date
fi
if [ "$part" = verdict ]; then exit "$status"; fi
if [ "$part" = up-to-date ] && [ "$verdict_runs" = 1 ]; then ran=1; fi

if [ "$ran" = 0 ]; then
  echo "error: nothing to check: both parts are off, or the verdict has no base branch and the up-to-date check is off" >&2
  exit 2
fi
exit "$status"
