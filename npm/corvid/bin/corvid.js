#!/usr/bin/env node
// The npm launcher of corvid: it runs the corvid binary of this platform,
// which npm installed as one of the optional dependencies, and behaves like
// it: the same arguments, stdin/stdout/stderr shared (so the editor's ACP
// stream and stdin EOF reach corvid directly), and the same exit status.
//
// Signals: SIGTERM and SIGHUP sent to this process are passed on and the
// launcher waits for corvid to end, so corvid is never left running alone.
// SIGINT is not passed on: corvid shares this process group, so a Ctrl-C or
// a host's interrupt to the group (Gas City) reaches it directly, and a
// second copy would read as "interrupt twice: exit".
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

const platforms = {
  "linux-x64": "@corvid-agent/corvid-linux-x64",
  "linux-arm64": "@corvid-agent/corvid-linux-arm64",
  "darwin-x64": "@corvid-agent/corvid-darwin-x64",
  "darwin-arm64": "@corvid-agent/corvid-darwin-arm64",
  "win32-x64": "@corvid-agent/corvid-win32-x64",
};

function binary() {
  if (process.env.CORVID_BINARY) return process.env.CORVID_BINARY;
  const key = `${process.platform}-${process.arch}`;
  const pkg = platforms[key];
  if (!pkg) {
    fail(`no prebuilt corvid for ${key}; build it from source: go build ./cmd/corvid`);
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    fail(`${pkg} is not installed; reinstall @corvid-agent/corvid without --omit=optional (or --no-optional)`);
  }
  return path.join(dir, "bin", process.platform === "win32" ? "corvid.exe" : "corvid");
}

function fail(msg) {
  process.stderr.write(`corvid: ${msg}\n`);
  process.exit(1);
}

// The handlers go in before corvid starts. Until a process has one, a
// SIGTERM kills it outright: a launcher stopped between the spawn and the
// handlers died alone and left corvid running, orphaned. A signal that
// comes now is handled once this script has run, so child is set by then.
let child;
for (const sig of ["SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
  });
}
process.on("SIGINT", () => {}); // corvid gets it from the process group

child = spawn(binary(), process.argv.slice(2), { stdio: "inherit" });

child.on("error", (err) => fail(`cannot run ${err.path || "corvid"}: ${err.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    // End the way corvid ended, so the parent sees the same status.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
