// A client built on the official ACP TypeScript SDK (ClientSideConnection over the
// child's stdio), driving the corvid binary named by $CORVID_BIN.
//
// The SDK validates every incoming message with its generated zod schemas. A
// schema-invalid notification never reaches the handler: the SDK logs it with
// console.error and drops it, so an invalid update would be an invisible update.
// watchSDKErrors turns those log lines into test failures, and the sessionUpdate
// handler also rejects any update kind corvid has no business sending.

import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

export { acp };

// The session/update kinds ACP v1 defines that corvid is expected to send.
export const KNOWN_UPDATES = new Set([
  "user_message_chunk",
  "agent_message_chunk",
  "agent_thought_chunk",
  "tool_call",
  "tool_call_update",
  "plan",
  "available_commands_update",
  "current_mode_update",
  "config_option_update",
  "session_info_update",
  "usage_update",
]);

const sdkErrors = [];
let watching = false;
let quiet = false;

// quietSDKErrors stops forwarding the recorded lines to the real console (for the
// test that provokes them on purpose).
export function quietSDKErrors(on) {
  quiet = on;
}

// watchSDKErrors records everything the SDK (or anything else) logs through
// console.error/console.warn; sdkErrors() returns it. The SDK has no other
// error hook for a dropped notification.
export function watchSDKErrors() {
  if (watching) return;
  watching = true;
  for (const level of ["error", "warn"]) {
    const original = console[level].bind(console);
    console[level] = (...args) => {
      sdkErrors.push(`console.${level}: ` + args.map(describe).join(" "));
      if (!quiet) original(...args);
    };
  }
}

export function takeSDKErrors() {
  return sdkErrors.splice(0, sdkErrors.length);
}

function describe(v) {
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

export function corvidBin() {
  const bin = process.env.CORVID_BIN;
  if (!bin) throw new Error("set CORVID_BIN to the corvid binary (test/clients/run.sh does)");
  return bin;
}

// tempDir makes a directory that is removed when the test ends.
export function tempDir(t, prefix = "corvid-client-") {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function writeScript(dir, script) {
  const path = join(dir, "script.json");
  writeFileSync(path, JSON.stringify(script));
  return path;
}

// A recording client: what corvid asked for, and every session/update.
export class RecordingClient {
  constructor({ permissionKind = "allow_once" } = {}) {
    this.permissionKind = permissionKind;
    this.permissions = [];
    this.writes = [];
    this.reads = [];
    this.updates = []; // {sessionId, update, at}
    this.problems = []; // protocol problems seen in handlers
    this.files = new Map(); // the editor's buffers
    this.waiters = [];
  }

  async requestPermission(params) {
    this.permissions.push(params);
    const option = params.options.find((o) => o.kind === this.permissionKind);
    if (!option) {
      this.problems.push(`permission request offers no ${this.permissionKind} option: ${JSON.stringify(params.options)}`);
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  }

  async sessionUpdate(params) {
    const kind = params.update?.sessionUpdate;
    if (!KNOWN_UPDATES.has(kind)) {
      this.problems.push(`unexpected session/update kind ${JSON.stringify(kind)}`);
    }
    this.updates.push({ sessionId: params.sessionId, update: params.update, at: this.updates.length });
    for (const w of [...this.waiters]) {
      if (w.pred(params)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(params);
      }
    }
  }

  async writeTextFile(params) {
    this.writes.push(params);
    this.files.set(params.path, params.content);
    return {};
  }

  async readTextFile(params) {
    this.reads.push(params);
    if (!this.files.has(params.path)) {
      throw acp.RequestError.resourceNotFound(params.path);
    }
    return { content: this.files.get(params.path) };
  }

  // waitUpdate resolves with the first future update that satisfies pred.
  waitUpdate(pred, ms = 10000) {
    return new Promise((resolve, reject) => {
      const w = { pred, resolve };
      this.waiters.push(w);
      setTimeout(() => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) {
          this.waiters.splice(i, 1);
          reject(new Error(`no matching session/update within ${ms} ms`));
        }
      }, ms).unref();
    });
  }

  textOf(sessionId, kind, from = 0) {
    return this.updates
      .slice(from)
      .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === kind)
      .map((u) => (u.update.content?.type === "text" ? u.update.content.text : ""))
      .join("");
  }
}

// startCorvid spawns `corvid acp -m script:FILE ...args` on an isolated home and
// connects a ClientSideConnection to it.
export function startCorvid(t, { script, home, cwd, args = [], client = new RecordingClient() }) {
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (/_API_KEY$|_BASE_URL$|_AUTH_TOKEN$|^CORVID_|^XDG_/.test(k)) delete env[k];
  }
  Object.assign(env, {
    HOME: home,
    CORVID_HOME: join(home, ".corvid"),
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
    CORVID_KEYRING: "off",
  });
  const child = spawn(corvidBin(), ["acp", "-m", "script:" + script, ...args], {
    cwd,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const conn = new acp.ClientSideConnection(() => client, stream);
  return {
    child,
    conn,
    client,
    exited,
    stderr: () => stderr,
    // close ends corvid's stdin and waits for it to exit.
    async close() {
      child.stdin.end();
      return await exited;
    },
  };
}

export const FULL_FS = {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
  clientInfo: { name: "corvid-client-tests", version: "0.0.0" },
};
