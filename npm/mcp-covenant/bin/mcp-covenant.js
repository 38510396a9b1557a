#!/usr/bin/env node
// The `mcp-covenant` command of the npm package: runs the native binary that the
// platform package for this OS and CPU (an optional dependency, e.g.
// @mcp-covenant/cli-linux-x64) holds. No dependencies, no shell: the arguments, stdin,
// stdout and stderr, the exit code and signals pass through unchanged.
//
// MCP_COVENANT_BINARY=/path/to/mcp-covenant runs that binary instead.
"use strict";

const { spawn } = require("child_process");
const path = require("path");

const self = require("../package.json");

function fail(lines) {
  process.stderr.write(lines.map((l) => `mcp-covenant (npm): ${l}\n`).join(""));
  process.exit(2);
}

const otherWays = [
  "other ways to install it:",
  "  pipx run mcp-covenant / uvx mcp-covenant (PyPI wheel)",
  "  cargo install mcp-covenant (builds from source with Rust)",
  "  a release archive: https://github.com/mcp-covenant/mcp-covenant/releases",
  "  then point MCP_COVENANT_BINARY at the binary to keep using this command",
];

function binary() {
  const override = process.env.MCP_COVENANT_BINARY;
  if (override) return override;
  const platform = `${process.platform}-${process.arch}`;
  const pkg = `@mcp-covenant/cli-${platform}`;
  if (!Object.prototype.hasOwnProperty.call(self.optionalDependencies || {}, pkg)) {
    fail([
      `no prebuilt binary for ${platform}; there are: ${Object.keys(self.optionalDependencies)
        .map((p) => p.replace("@mcp-covenant/cli-", ""))
        .join(", ")}`,
      ...otherWays,
    ]);
  }
  // Only this package's own copy: in its own node_modules, or beside it in the
  // node_modules it is installed in (npm hoists it there); never one an ancestor
  // directory's node_modules holds, and only at this package's version.
  const root = path.join(__dirname, "..");
  const places = [path.join(root, "node_modules", pkg)];
  if (path.basename(path.dirname(root)) === "node_modules") {
    places.push(path.join(path.dirname(root), pkg));
  }
  for (const dir of places) {
    let manifest;
    try {
      manifest = JSON.parse(require("fs").readFileSync(path.join(dir, "package.json"), "utf8"));
    } catch (e) {
      continue;
    }
    if (manifest.name !== pkg || manifest.version !== self.version) continue;
    return path.join(dir, "bin", process.platform === "win32" ? "mcp-covenant.exe" : "mcp-covenant");
  }
  fail([
    `${pkg}@${self.version}, the binary for ${platform}, is not installed beside this package`,
    "(were optional dependencies skipped, e.g. with --omit=optional or --no-optional?",
    "reinstall without that)",
    ...otherWays,
  ]);
}

const exe = binary();
let child = null;

// A signal sent to this process (a CI timeout, `kill -INT`) goes on to the binary, which
// stops its server and exits; this process then dies of the binary's signal or exits
// with its status. (A terminal's Ctrl-C reaches both processes anyway.) The handlers are
// in place before the binary starts, so no signal can end this process first and
// orphan it.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
const handlers = {};
for (const sig of forwarded) {
  handlers[sig] = () => {
    try {
      if (child) child.kill(sig);
    } catch (e) {
      // the child is already gone: its exit ends this process
    }
  };
  process.on(sig, handlers[sig]);
}

// The binary's hints then say `npx mcp-covenant ...`, a command that works when pasted.
const env = Object.assign({}, process.env, { MCP_COVENANT_LAUNCHER: "npm" });
child = spawn(exe, process.argv.slice(2), { stdio: "inherit", windowsHide: true, env });

child.on("error", (e) => {
  fail([`cannot run ${exe}: ${e.message}`, ...(process.env.MCP_COVENANT_BINARY ? [] : otherWays)]);
});

child.on("exit", (code, signal) => {
  if (signal) {
    for (const sig of forwarded) process.removeListener(sig, handlers[sig]);
    // Die of the same signal, as the binary did, so the caller sees what happened.
    try {
      process.kill(process.pid, signal);
    } catch (e) {
      // a signal this platform cannot raise
    }
    // Still alive a moment later (a signal Node ignores, such as SIGPIPE): exit with
    // the shell's convention for it.
    setTimeout(() => process.exit(128 + (require("os").constants.signals[signal] || 0)), 200);
    return;
  }
  process.exit(code === null ? 1 : code);
});
