#!/usr/bin/env bash
# A fully static Linux build (glibc, -C target-feature=+crt-static) of mcp-covenant and
# of the fixture server, into target/static/<host>/<profile>/. tests/it/static_build.rs runs
# them in an empty root; scripts/test.sh calls this as root. Extra arguments go to
# `cargo build` (e.g. --release for the binary you ship).
#
# --target must be given explicitly: with it, RUSTFLAGS applies to the binaries only, not
# to build scripts and proc macros (which must stay dynamic). Needs glibc's static
# libraries (libc.a: Debian's and Ubuntu's libc6-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
case "$host" in
  *-linux-gnu) ;;
  *) echo "static-build: $host is not a *-linux-gnu target; nothing to do" >&2; exit 1 ;;
esac
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
  cargo build --target "$host" --target-dir target/static --bin mcp-covenant --example fixture-server "$@"
