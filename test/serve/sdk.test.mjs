// `corvid serve`, driven by the official ACP TypeScript SDK 2.4.0's experimental
// transports (ws-client, http-client), and compared, request by request, with the
// SDK's own reference server (experimental/server + experimental/node) for the
// HTTP status codes of malformed requests.
// Run through run.sh (it builds corvid and sets CORVID_BIN), or:
//   CORVID_BIN=/path/to/corvid node --test sdk.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { Readable, Writable } from "node:stream";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import WebSocket, { WebSocketServer } from "ws";

const BIN = process.env.CORVID_BIN;
if (!BIN) throw new Error("set CORVID_BIN to the corvid binary (run.sh does)");

const ANSWER = "Hello from corvid serve, through the SDK's WebSocket client.";

function tempDir(t) {
  const d = mkdtempSync(join(tmpdir(), "cserve-"));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

// startDaemon runs `corvid serve` on a loopback port and resolves with its /acp URL.
function startDaemon(t, home, script, flags = ["--yolo"]) {
  const env = { ...process.env, HOME: home, CORVID_HOME: join(home, ".corvid"), CORVID_KEYRING: "off" };
  for (const k of Object.keys(env)) {
    if (k.startsWith("XDG_") || k.endsWith("_API_KEY") || k.endsWith("_BASE_URL")) delete env[k];
  }
  const child = spawn(BIN, ["serve", "-m", `script:${script}`, ...flags, "--listen", "127.0.0.1:0"], { cwd: home, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  // Even a test that times out must not leave a daemon behind.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  t.after(async () => {
    process.off("exit", killOnExit);
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`corvid serve did not listen:\n${stderr}`)), 20000);
    child.stderr.on("data", (b) => {
      stderr += b;
      const m = /corvid serve: listening on (http\S+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once("exit", (code) => reject(new Error(`corvid serve exited ${code}:\n${stderr}`)));
  });
}

// recordingClient is an SDK client app that keeps every session/update.
function recordingClient() {
  const updates = [];
  const app = acp.client({ name: "corvid-serve-test" }).onNotification("session/update", ({ params }) => {
    updates.push(params);
  });
  return { app, updates };
}

function textOf(updates, sessionId) {
  return updates
    .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk" && u.update.content.type === "text")
    .map((u) => u.update.content.text)
    .join("");
}

async function waitFor(cond, what) {
  const deadline = Date.now() + 15000;
  while (Date.now() < deadline) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test("the SDK's WebSocket client prompts; its HTTP client lists and loads the session from a second connection", async (t) => {
  const home = tempDir(t);
  const script = join(home, "script.json");
  writeFileSync(script, JSON.stringify({ chunkSize: 9, responses: [{ parts: [{ type: "text", text: ANSWER }] }] }));
  const url = await startDaemon(t, home, script);
  const wsUrl = url.replace(/^http/, "ws");

  // Connection 1: WebSocket.
  const first = recordingClient();
  let sessionId;
  await first.app.connectWith(createWebSocketStream(wsUrl, { WebSocket }), async (agent) => {
    const init = await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    assert.equal(init.protocolVersion, 1);
    assert.equal(init.agentCapabilities.loadSession, true);
    const session = await agent.buildSession(home).start();
    sessionId = session.sessionId;
    const answered = session.prompt("Hello");
    const text = await session.readText();
    assert.equal((await answered).stopReason, "end_turn");
    assert.equal(text, ANSWER);
    const chunks = first.updates.filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk");
    assert.ok(chunks.length >= 2, `the answer should stream in several chunks, got ${chunks.length}`);
    session.dispose();
  });

  // Connection 2: Streamable HTTP, while nothing else is connected.
  const second = recordingClient();
  await second.app.connectWith(createHttpStream(url), async (agent) => {
    await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const list = await agent.request("session/list", {});
    assert.ok(list.sessions.some((s) => s.sessionId === sessionId), `session/list should show ${sessionId}: ${JSON.stringify(list)}`);
    await agent.request("session/load", { sessionId, cwd: home, mcpServers: [] });
    // The replay arrives on the session's stream, the answer on the connection's.
    await waitFor(() => textOf(second.updates, sessionId).includes(ANSWER), "the replayed answer");
  });
});

test("a permission question reaches the SDK's clients over both transports, and their answers come back", async (t) => {
  const home = tempDir(t);
  const script = join(home, "script.json");
  // Each session plays the script from its start: one write, then a text.
  writeFileSync(script, JSON.stringify({ responses: [
    { parts: [{ type: "tool_call", name: "write", input: { path: "notes.txt", content: "written" } }] },
    { parts: [{ type: "text", text: "wrote" }] },
  ] }));
  // Without --yolo: writes ask.
  const env = { ...process.env, HOME: home, CORVID_HOME: join(home, ".corvid"), CORVID_KEYRING: "off" };
  const child = spawn(BIN, ["serve", "-m", `script:${script}`, "--listen", "127.0.0.1:0"], { cwd: home, env, stdio: ["ignore", "ignore", "pipe"] });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  t.after(async () => {
    process.off("exit", killOnExit);
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  });
  const url = await new Promise((resolve, reject) => {
    let err = "";
    child.stderr.on("data", (b) => {
      err += b;
      const m = /listening on (http\S+)/.exec(err);
      if (m) resolve(m[1]);
    });
    child.once("exit", () => reject(new Error(err)));
  });
  for (const [name, stream] of [
    ["websocket", () => createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket })],
    ["http", () => createHttpStream(url)],
  ]) {
    rmSync(join(home, "notes.txt"), { force: true });
    const asked = [];
    const app = acp.client({ name: `perm-${name}` }).onRequest("session/request_permission", ({ params }) => {
      asked.push(params.toolCall.title);
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    });
    await app.connectWith(stream(), async (agent) => {
      await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const session = await agent.buildSession(home).start();
      const answered = session.prompt("write");
      await session.readText();
      assert.equal((await answered).stopReason, "end_turn", name);
      session.dispose();
    });
    assert.equal(asked.length, 1, `${name}: one permission question`);
    assert.equal(readFileSync(join(home, "notes.txt"), "utf8"), "written", `${name}: the allowed write happened`);
  }
});

test("three SDK clients on one session: WebSocket prompts, HTTP and stdio through the relay attach mid-turn and get every word once", async (t) => {
  const home = tempDir(t);
  const script = join(home, "script.json");
  const words = Array.from({ length: 40 }, (_, i) => `word-${String(i).padStart(2, "0")}`).join(" ") + " END";
  writeFileSync(script, JSON.stringify({ chunkSize: 8, delayMs: 30, responses: [{ parts: [{ type: "text", text: words }] }] }));
  const url = await startDaemon(t, home, script);

  const a = recordingClient();
  let sessionId;
  let startedA;
  const aStarted = new Promise((r) => (startedA = r));
  const aDone = a.app.connectWith(createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket }), async (agent) => {
    await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const session = await agent.buildSession(home).start();
    sessionId = session.sessionId;
    const answered = session.prompt("go");
    await waitFor(() => textOf(a.updates, sessionId).includes("word-02"), "the first words on A");
    startedA();
    assert.equal((await answered).stopReason, "end_turn");
    await waitFor(() => textOf(a.updates, sessionId) === words, "A's whole answer");
    session.dispose();
  });
  await aStarted;

  // B: the HTTP client loads the running session.
  const b = recordingClient();
  const bDone = b.app.connectWith(createHttpStream(url), async (agent) => {
    await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    await agent.request("session/load", { sessionId, cwd: home, mcpServers: [] });
    await waitFor(() => textOf(b.updates, sessionId) === words || textOf(b.updates, sessionId).length > words.length, "B's whole answer");
    assert.equal(textOf(b.updates, sessionId), words, "B: the replay, then live, each word once");
  });

  // C: the SDK's stdio client through `corvid acp --connect`, the relay.
  const c = recordingClient();
  const relay = spawn(BIN, ["acp", "--connect", url], { stdio: ["pipe", "pipe", "inherit"] });
  t.after(() => relay.kill());
  const stdio = acp.ndJsonStream(Writable.toWeb(relay.stdin), Readable.toWeb(relay.stdout));
  const cDone = c.app.connectWith(stdio, async (agent) => {
    await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    await agent.request("session/load", { sessionId, cwd: home, mcpServers: [] });
    await waitFor(() => textOf(c.updates, sessionId) === words || textOf(c.updates, sessionId).length > words.length, "C's whole answer");
    assert.equal(textOf(c.updates, sessionId), words, "C: the replay, then live, each word once");
  });
  await Promise.all([aDone, bDone, cDone]);
});

test("a question goes to both SDK clients on one session; the first answer wins, the other is withdrawn, both see who answered", async (t) => {
  const home = tempDir(t);
  const script = join(home, "script.json");
  writeFileSync(script, JSON.stringify({ responses: [
    { parts: [{ type: "tool_call", name: "write", input: { path: "notes.txt", content: "written" } }] },
    { parts: [{ type: "text", text: "wrote" }] },
  ] }));
  const url = await startDaemon(t, home, script, []); // writes ask
  const httpInfo = { name: "sdk-http", title: "SDK over HTTP", version: "2.4.0" };
  const answeredBy = (updates, sessionId) =>
    updates.find((u) => u.sessionId === sessionId && u.update.sessionUpdate === "tool_call_update" && u.update._meta?.["corvid.dev/answeredBy"])?.update._meta["corvid.dev/answeredBy"];

  // A: WebSocket; it prompts, and never answers: its question is withdrawn.
  const aUpdates = [];
  let withdrawn = false;
  let aAsked;
  const aWasAsked = new Promise((r) => (aAsked = r));
  let sessionId;
  let started;
  const sessionStarted = new Promise((r) => (started = r));
  let finishA;
  const aMayFinish = new Promise((r) => (finishA = r));
  const aApp = acp
    .client({ name: "sdk-ws" })
    .onNotification("session/update", ({ params }) => { aUpdates.push(params); })
    .onRequest("session/request_permission", ({ signal }) => {
      aAsked();
      return new Promise((resolve) => signal.addEventListener("abort", () => {
        withdrawn = true;
        resolve({ outcome: { outcome: "cancelled" } });
      }));
    });
  const aDone = aApp.connectWith(createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket }), async (agent) => {
    await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "sdk-ws", version: "2.4.0" } });
    const session = await agent.buildSession(home).start();
    sessionId = session.sessionId;
    started();
    const answered = session.prompt("write");
    assert.equal((await answered).stopReason, "end_turn");
    await aMayFinish;
    session.dispose();
  });
  await sessionStarted;
  await aWasAsked;

  // B: Streamable HTTP; it attaches while the question is open, is asked, and allows.
  const bUpdates = [];
  const bApp = acp
    .client({ name: "sdk-http" })
    .onNotification("session/update", ({ params }) => { bUpdates.push(params); })
    .onRequest("session/request_permission", () => ({ outcome: { outcome: "selected", optionId: "allow_once" } }));
  await bApp.connectWith(createHttpStream(url), async (agent) => {
    await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {}, clientInfo: httpInfo });
    await agent.request("session/load", { sessionId, cwd: home, mcpServers: [] });
    await waitFor(() => answeredBy(bUpdates, sessionId), "B's tool_call_update with who answered");
    assert.deepEqual(answeredBy(bUpdates, sessionId), httpInfo);
  });
  await waitFor(() => withdrawn, "A's question withdrawn ($/cancel_request)");
  await waitFor(() => answeredBy(aUpdates, sessionId), "A's tool_call_update with who answered");
  assert.deepEqual(answeredBy(aUpdates, sessionId), httpInfo);
  finishA();
  await aDone;
  assert.equal(readFileSync(join(home, "notes.txt"), "utf8"), "written");
});

// A trivial agent behind the SDK's reference server.
function referenceServer(t) {
  const app = acp
    .agent({ name: "reference" })
    .onRequest("initialize", () => ({ protocolVersion: 1, agentCapabilities: { loadSession: true } }))
    .onRequest("session/new", () => ({ sessionId: "ref-session" }))
    .onRequest("session/prompt", () => ({ stopReason: "end_turn" }));
  const server = new AcpServer({ agent: app });
  const wss = new WebSocketServer({ noServer: true });
  const http = createServer(createNodeHttpHandler(server));
  http.on("upgrade", createNodeWebSocketUpgradeHandler(server, wss));
  t.after(async () => {
    await server.close();
    wss.close();
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
  });
  return new Promise((resolve) => http.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${http.address().port}/acp`)));
}

const INIT = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });

async function req(url, method, headers = {}, body) {
  const ac = new AbortController();
  const res = await fetch(url, { method, headers, body, signal: ac.signal });
  const type = res.headers.get("content-type") ?? "";
  let text = "";
  if (!type.includes("event-stream")) {
    text = await res.text();
  } // a stream stays open (its status is all we compare) until abort()
  return { status: res.status, text, connectionId: res.headers.get("acp-connection-id"), type, abort: () => ac.abort() };
}

// probes sends the same malformed (and a few valid) requests to one server and
// returns what it answered, by name.
async function probes(url) {
  const json = { "Content-Type": "application/json" };
  const out = {};
  const init = await req(url, "POST", json, INIT);
  out["initialize"] = { status: init.status, hasConnectionId: Boolean(init.connectionId) };
  const conn = { ...json, "Acp-Connection-Id": init.connectionId };
  const put = async (name, p) => {
    const r = await p;
    out[name] = { status: r.status };
    return r;
  };
  await put("text/plain body", req(url, "POST", { "Content-Type": "text/plain" }, INIT));
  await put("malformed JSON", req(url, "POST", json, "{\"jsonrpc\":"));
  const batch = await put("batch", req(url, "POST", conn, `[${INIT}]`));
  out["batch"].error = JSON.parse(batch.text).error.code;
  await put("not an object", req(url, "POST", json, "42"));
  await put("missing connection id", req(url, "POST", json, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/", mcpServers: [] } })));
  await put("unknown connection id", req(url, "POST", { ...json, "Acp-Connection-Id": "00000000-0000-4000-8000-000000000000" }, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/", mcpServers: [] } })));
  await put("initialize on a connection", req(url, "POST", conn, INIT));
  await put("prompt without Acp-Session-Id", req(url, "POST", conn, JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId: "s", prompt: [] } })));
  await put("mismatched Acp-Session-Id", req(url, "POST", { ...conn, "Acp-Session-Id": "other" }, JSON.stringify({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId: "s", prompt: [] } })));
  await put("accepted request", req(url, "POST", conn, JSON.stringify({ jsonrpc: "2.0", id: 4, method: "session/list", params: {} })));
  await put("oversized body", req(url, "POST", json, JSON.stringify({ pad: "x".repeat(17 << 20) })));
  await put("GET without Accept", req(url, "GET", { "Acp-Connection-Id": init.connectionId }));
  await put("GET without connection id", req(url, "GET", { Accept: "text/event-stream" }));
  await put("GET unknown connection id", req(url, "GET", { Accept: "text/event-stream", "Acp-Connection-Id": "nope" }));
  const stream = await put("GET stream", req(url, "GET", { Accept: "text/event-stream", "Acp-Connection-Id": init.connectionId }));
  const second = await put("GET second receiver", req(url, "GET", { Accept: "text/event-stream", "Acp-Connection-Id": init.connectionId }));
  stream.abort();
  second.abort();
  await put("PUT", req(url, "PUT", json, "{}"));
  await put("DELETE without connection id", req(url, "DELETE"));
  await put("DELETE unknown connection id", req(url, "DELETE", { "Acp-Connection-Id": "nope" }));
  await put("DELETE", req(url, "DELETE", { "Acp-Connection-Id": init.connectionId }));
  await put("POST after DELETE", req(url, "POST", conn, JSON.stringify({ jsonrpc: "2.0", id: 5, method: "session/list", params: {} })));
  out["websocket upgrade"] = await new Promise((resolve) => {
    const ws = new WebSocket(url.replace(/^http/, "ws"));
    ws.once("upgrade", (res) => resolve({ status: res.statusCode, hasConnectionId: Boolean(res.headers["acp-connection-id"]) }));
    ws.once("open", () => ws.close());
    ws.once("error", () => resolve({ status: "error" }));
  });
  return out;
}

test("corvid serve answers malformed requests with the reference server's status codes", async (t) => {
  const home = tempDir(t);
  const script = join(home, "script.json");
  writeFileSync(script, JSON.stringify({ responses: [{ parts: [{ type: "text", text: "hi" }] }] }));
  const corvid = await probes(await startDaemon(t, home, script));
  const reference = await probes(await referenceServer(t));
  assert.deepEqual(corvid, reference);
  // And the oracle says what the RFD says, so this compares something.
  assert.equal(reference["text/plain body"].status, 415);
  assert.equal(reference["GET second receiver"].status, 409);
  assert.equal(reference["websocket upgrade"].status, 101);
});

test("the SDK's stdio client through the unix relay gets the daemon's own initialize answer (the relay answers it from the daemon's published copy) and prompts", async (t) => {
  const home = tempDir(t);
  const script = join(home, "script.json");
  writeFileSync(script, JSON.stringify({ responses: [{ parts: [{ type: "text", text: ANSWER }] }] }));
  const sock = join(home, "s.sock");
  const url = await startDaemon(t, home, script, ["--yolo", "--listen", `unix:${sock}`]);
  const params = {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true, auth: { terminal: true } },
    clientInfo: { name: "sdk-stdio", version: "2.4.0" },
  };

  // The daemon's answer, over the SDK's WebSocket client.
  let direct;
  await recordingClient().app.connectWith(createWebSocketStream(url.replace(/^http/, "ws"), { WebSocket }), async (agent) => {
    direct = await agent.request("initialize", params);
  });

  // The relay's, over the SDK's stdio client.
  const c = recordingClient();
  const relay = spawn(BIN, ["acp", "--connect", `unix:${sock}`], { stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, HOME: home, CORVID_HOME: join(home, ".corvid"), CORVID_KEYRING: "off" } });
  t.after(() => relay.kill());
  const stdio = acp.ndJsonStream(Writable.toWeb(relay.stdin), Readable.toWeb(relay.stdout));
  await c.app.connectWith(stdio, async (agent) => {
    const viaRelay = await agent.request("initialize", params);
    assert.deepEqual(viaRelay, direct, "the relay's initialize answer is the daemon's");
    assert.ok(viaRelay.authMethods.some((m) => m.type === "terminal"), "the terminal-auth variant was chosen");
    const session = await agent.buildSession(home).start();
    assert.equal((await session.prompt("hi")).stopReason, "end_turn");
    await waitFor(() => textOf(c.updates, session.sessionId) === ANSWER, "the answer through the relay");
    session.dispose();
  });
});
