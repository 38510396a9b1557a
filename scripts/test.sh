#!/usr/bin/env bash
# Every test: installs the real MCP servers the tests capture (tests/servers/setup.sh:
# npm ci and Python venvs, maturin and pre-commit among them), builds the release
# artifacts (scripts/dist.sh: dist/, which the install tests install), then runs the whole
# suite including the `#[ignore]`d tests that need them. Tests that need root (a tmpfs mount, a static binary in a chroot, built
# here by scripts/static-build.sh) run when this script runs as root (as CI does);
# otherwise they are skipped and this script says so.
# Extra arguments go to `cargo test` (e.g. `scripts/test.sh --release`).
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in node npm python3; do
  command -v "$tool" >/dev/null || {
    echo "scripts/test.sh: $tool is required (the real-server tests run published MCP servers)" >&2
    exit 1
  }
done
echo "== test.sh: setup (at ${SECONDS}s)"
tests/servers/setup.sh
echo "== test.sh: dist (at ${SECONDS}s)"
MATURIN=tests/servers/.venv-dist/bin/maturin scripts/dist.sh
# The jsoncompat oracle of tests/it/jsoncompat.rs: a package of its own (tests/oracle/Cargo.toml
# says why), about 170 crates, ~2 CPU-minutes to build from scratch.
echo "== test.sh: the jsoncompat oracle (at ${SECONDS}s)"
cargo build --locked --manifest-path tests/oracle/Cargo.toml --target-dir target/oracle

skip=()
if [ "$(id -u)" != 0 ]; then
  echo "scripts/test.sh: not root: skipping the as_root:: tests (full disk, static chroot)" >&2
  skip=(--skip as_root::)
else
  echo "== test.sh: static build (at ${SECONDS}s)"
  scripts/static-build.sh
fi
echo "== test.sh: cargo test (at ${SECONDS}s)"
# The tests' temporary files go to a directory of this run's own, removed once all
# passed, so that runs on one machine neither fill its disk nor touch each other's files
# (a sweep of /tmp once deleted a concurrent run's); after a failure it stays for a look.
tests_tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-covenant-tests.XXXXXX")
TMPDIR=$tests_tmp cargo test "$@" -- --include-ignored "${skip[@]}"
rm -rf "$tests_tmp"
