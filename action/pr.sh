# The pull request as a conversation, sourced by action/run.sh: the sticky comment, the
# approve label, and the cap on annotation levels. The GitHub REST API through curl with
# GITHUB_TOKEN (GITHUB_API_URL, GITHUB_REPOSITORY and INPUT_PR_NUMBER, as a workflow
# run has them); JSON through jq, which GitHub's runners have. The token is a shell
# variable here (run.sh keeps it out of every child's environment) and reaches curl on
# its standard input, never on a command line another process could read. Nothing here
# fails the job: what cannot be done is a notice (the report stays in the step summary),
# and a label that cannot be read approves nothing.

# The marker that finds our comment again; hidden in the rendered markdown.
PR_MARKER='<!-- mcp-covenant:pr-comment -->'
# GitHub refuses comments over 65536 characters.
PR_MAX_BODY=60000

pr_api() { # METHOD PATH OUT_FILE [BODY_FILE]: the response body into OUT_FILE, the status in $pr_status
  local method=$1 path=$2 out=$3 body=${4:-}
  local args=(-sS -o "$out" -w '%{http_code}' -X "$method"
    -H "Accept: application/vnd.github+json"
    -H "X-GitHub-Api-Version: 2022-11-28"
    -H @-
    -H "Expect:"
    --max-time 30)
  if [ -n "$body" ]; then args+=(-H "Content-Type: application/json" --data-binary "@$body"); fi
  pr_status=$(printf 'Authorization: Bearer %s\n' "$GITHUB_TOKEN" |
    curl "${args[@]}" "${GITHUB_API_URL:-https://api.github.com}$path" 2>/dev/null) || pr_status=000
}

# The login whose comments are ours, into $pr_me: the token's user (`GET /user`), or
# `github-actions[bot]` for the job's own installation token, to which /user answers
# 403. Empty when the API says neither (the status is in $pr_status).
pr_identity() {
  local out
  out=$(mktemp)
  pr_me=""
  pr_api GET /user "$out"
  case $pr_status in
    200) pr_me=$(jq -r 'if type == "object" and (.login | type) == "string" then .login else empty end' "$out" 2>/dev/null) ;;
    403) pr_me='github-actions[bot]' ;;
  esac
  rm -f "$out"
}

# Whether the REST API can be used here; a notice says why not.
pr_ready() {
  local what=$1
  if [ -z "${INPUT_PR_NUMBER:-}" ]; then
    echo "::notice::mcp-covenant: not a pull request: no $what"
    return 1
  fi
  if ! [[ $INPUT_PR_NUMBER =~ ^[0-9]+$ ]] || ! [[ ${GITHUB_REPOSITORY:-} =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]]; then
    echo "::notice::mcp-covenant: no pull request number or repository to address: no $what"
    return 1
  fi
  if [ -z "${GITHUB_TOKEN:-}" ]; then
    echo "::notice::mcp-covenant: no GITHUB_TOKEN: no $what"
    return 1
  fi
  for tool in curl jq; do
    if ! command -v "$tool" >/dev/null; then
      echo "::notice::mcp-covenant: $tool is not installed: no $what"
      return 1
    fi
  done
  return 0
}

# Whether the pull request carries label $1 (read from the API, so a label added after
# the run started counts). Anything that cannot be read: no.
pr_has_label() {
  local want=$1 labels found
  pr_ready "approve label" || return 1
  labels=$(mktemp)
  pr_api GET "/repos/$GITHUB_REPOSITORY/issues/$INPUT_PR_NUMBER/labels?per_page=100" "$labels"
  if [ "$pr_status" != 200 ]; then
    echo "::warning::mcp-covenant: cannot read the pull request's labels (HTTP $pr_status): the approve label \`$want\` is not applied"
    rm -f "$labels"
    return 1
  fi
  found=1
  jq -e --arg want "$want" 'type == "array" and any(.[]; .name == $want)' "$labels" >/dev/null && found=0
  rm -f "$labels"
  return "$found"
}

# Whether label $1, which the pull request carries, approves the commits of this run,
# by the run's event (GITHUB_EVENT_PATH): prints `yes`, `stale` (the commits were pushed
# while it was on: a `synchronize` or `reopened` whose payload lists it) or `unknown`
# (an event that cannot tell whether it came before or after the latest push: another
# label, `ready_for_review`, `edited`, a dispatch). It counts on the run that adding it
# starts (`labeled` with this label), on `opened`, and on a re-run of a push's run when
# it came after the push (not in that payload). No event file (not a workflow run): yes.
pr_label_approves() {
  local want=$1 event=${GITHUB_EVENT_PATH:-}
  if [ -z "$event" ] || [ ! -f "$event" ] || ! command -v jq >/dev/null; then
    echo yes
    return 0
  fi
  jq -r --arg want "$want" '
    (any(.pull_request.labels[]?; .name == $want)) as $listed
    | if (.action == "labeled" and .label.name == $want) or .action == "opened" then "yes"
      elif (.action == "synchronize" or .action == "reopened") then (if $listed then "stale" else "yes" end)
      else "unknown" end' "$event" 2>/dev/null || echo unknown
}

# Take label $1 off the pull request; a notice when that cannot be done.
pr_remove_label() {
  local want=$1 name sink
  pr_ready "label removal" || return 0
  name=$(jq -rn --arg s "$want" '$s | @uri')
  sink=$(mktemp)
  pr_api DELETE "/repos/$GITHUB_REPOSITORY/issues/$INPUT_PR_NUMBER/labels/$name" "$sink"
  rm -f "$sink"
  case $pr_status in
    200 | 404) echo "mcp-covenant: the label \`$want\` is removed: add it again to approve the changes as they are now" ;;
    *) echo "::notice::mcp-covenant: cannot remove the label \`$want\` (HTTP $pr_status; a fork's token is read-only, or the workflow lacks \`pull-requests: write\`): remove it and add it again to approve the changes as they are now" ;;
  esac
}

# Create or update the one comment of ours that carries the marker, with the report in
# file $1. Anyone can write the marker, and a token that may write can edit anyone's
# comment: only a comment the token's own identity wrote is ever edited, so that a
# comment the pull request's author planted (and can edit later) never carries the verdict.
pr_comment() {
  local report=$1 body payload page comments ids="" id="" sink tried=0
  pr_ready "pull request comment (the report is in the step summary)" || return 0
  pr_identity
  if [ -z "$pr_me" ]; then
    echo "::notice::mcp-covenant: cannot tell whose token this is (HTTP $pr_status from GET /user): no pull request comment, the report is in the step summary only"
    return 0
  fi
  body=$(mktemp)
  {
    printf '%s\n' "$PR_MARKER"
    head -c "$PR_MAX_BODY" "$report"
    if [ "$(wc -c <"$report")" -gt "$PR_MAX_BODY" ]; then
      printf '\n\n… (cut: the whole report is in the run'"'"'s step summary)\n'
    fi
  } >"$body"
  payload=$(mktemp)
  comments=$(mktemp)
  sink=$(mktemp)
  jq -n --rawfile body "$body" '{body: $body}' >"$payload"
  # Our comments that carry the marker, on any page (a long conversation has many); the
  # first that can be updated is, else ours is created.
  for page in $(seq 1 30); do
    pr_api GET "/repos/$GITHUB_REPOSITORY/issues/$INPUT_PR_NUMBER/comments?per_page=100&page=$page" "$comments"
    if [ "$pr_status" != 200 ]; then
      echo "::notice::mcp-covenant: cannot list the pull request's comments (HTTP $pr_status): the report is in the step summary only"
      rm -f "$body" "$payload" "$comments" "$sink"
      return 0
    fi
    ids+=" $(jq -r --arg m "$PR_MARKER" --arg me "$pr_me" 'if type == "array" then [.[] | select(type == "object" and (.user.login? // "") == $me and ((.body // "") | type) == "string" and ((.body // "") | startswith($m))) | .id | tostring] | join(" ") else empty end' "$comments")"
    if [ "$(jq 'if type == "array" then length else 0 end' "$comments")" -lt 100 ]; then
      break
    fi
  done
  what=""
  for id in $ids; do
    [[ $id =~ ^[0-9]+$ ]] || continue
    tried=$((tried + 1))
    if [ "$tried" -gt 5 ]; then break; fi
    pr_api PATCH "/repos/$GITHUB_REPOSITORY/issues/comments/$id" "$sink" "$payload"
    if [ "$pr_status" = 200 ]; then
      what="updated"
      break
    fi
  done
  if [ -z "$what" ]; then
    pr_api POST "/repos/$GITHUB_REPOSITORY/issues/$INPUT_PR_NUMBER/comments" "$sink" "$payload"
    what="created"
  fi
  rm -f "$body" "$payload" "$comments" "$sink"
  case $pr_status in
    200 | 201) echo "mcp-covenant: pull request comment $what" ;;
    401 | 403 | 404)
      echo "::notice::mcp-covenant: no permission to comment on this pull request (HTTP $pr_status; a fork's token is read-only, or the workflow lacks \`pull-requests: write\`): the report is in the step summary only"
      ;;
    *) echo "::notice::mcp-covenant: the pull request comment failed (HTTP $pr_status): the report is in the step summary" ;;
  esac
  return 0
}

# Workflow annotations at most at level $1 (error, warning, notice; none: plain lines).
cap_annotations() {
  case $1 in
    error) cat ;;
    warning) sed -E 's/^::error( |::)/::warning\1/' ;;
    notice) sed -E 's/^::(error|warning)( |::)/::notice\2/' ;;
    none) sed -E 's/^::(error|warning|notice)( [^:]*)?::/\1: /' ;;
  esac
}
