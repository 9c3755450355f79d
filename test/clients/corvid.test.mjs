// corvid, driven by the official ACP TypeScript SDK's ClientSideConnection.
// Run through run.sh (it builds corvid and sets CORVID_BIN), or:
//   CORVID_BIN=/path/to/corvid node --test corvid.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  acp,
  FULL_FS,
  quietSDKErrors,
  RecordingClient,
  startCorvid,
  takeSDKErrors,
  tempDir,
  watchSDKErrors,
  writeScript,
} from "./harness.mjs";

watchSDKErrors();

// Every test ends by checking the SDK logged nothing (a dropped, schema-invalid
// message) and the handlers saw nothing unexpected.
function assertClean(client) {
  assert.deepEqual(takeSDKErrors(), [], "the SDK reported errors (a schema-invalid or unexpected message)");
  assert.deepEqual(client.problems, [], "the client saw protocol problems");
}

test("the SDK's dropped-notification log is caught (the checks below can fail)", async (t) => {
  // A fake agent in memory sends one schema-invalid session/update.
  const toClient = new TransformStream();
  const toAgent = new TransformStream();
  const client = new RecordingClient();
  new acp.ClientSideConnection(() => client, acp.ndJsonStream(toAgent.writable, toClient.readable));
  const w = toClient.writable.getWriter();
  t.after(() => quietSDKErrors(false));
  quietSDKErrors(true);
  const bad = { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text" } } } };
  const weird = { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "ok" } } } };
  await w.write(new TextEncoder().encode(JSON.stringify(bad) + "\n" + JSON.stringify(weird) + "\n"));
  await new Promise((r) => setTimeout(r, 50));
  const errs = takeSDKErrors();
  assert.equal(client.updates.length, 1, "the invalid update should have been dropped, the valid one delivered");
  assert.ok(errs.length >= 1 && errs.some((e) => e.includes("session/update")), `expected the SDK to log the dropped update, got ${JSON.stringify(errs)}`);
  await w.close();
});

test("a scripted turn asks permission and writes through the client", async (t) => {
  const home = tempDir(t);
  const workspace = tempDir(t);
  const content = "written by corvid through the editor\n";
  const script = writeScript(home, {
    chunkSize: 6,
    responses: [
      {
        parts: [
          { type: "thinking", text: "The user wants a notes file." },
          { type: "text", text: "I will create notes.txt." },
          { type: "tool_call", id: "call_w", name: "write", input: { path: "notes.txt", content } },
        ],
      },
      { parts: [{ type: "text", text: "Done: notes.txt now exists." }] },
    ],
  });
  const c = startCorvid(t, { script, home, cwd: workspace });
  const init = await c.conn.initialize(FULL_FS);
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentCapabilities?.loadSession, true, "corvid should advertise loadSession");

  const { sessionId } = await c.conn.newSession({ cwd: workspace, mcpServers: [] });
  assert.match(sessionId, /\S/);
  const res = await c.conn.prompt({ sessionId, prompt: [{ type: "text", text: "make notes" }] });
  assert.equal(res.stopReason, "end_turn");

  assert.equal(c.client.permissions.length, 1, "one permission request for the write");
  const perm = c.client.permissions[0];
  assert.equal(perm.sessionId, sessionId);
  const kinds = perm.options.map((o) => o.kind).sort();
  assert.ok(kinds.includes("allow_once") && kinds.includes("reject_once"), `permission options ${kinds}`);

  assert.equal(c.client.writes.length, 1, "corvid should write through fs/write_text_file");
  assert.equal(c.client.writes[0].path, join(workspace, "notes.txt"));
  assert.equal(c.client.writes[0].content, content);
  assert.equal(c.client.writes[0].sessionId, sessionId);
  assert.ok(!existsSync(join(workspace, "notes.txt")), "the client kept the write in its buffer: corvid must not write the disk itself");

  assert.equal(c.client.textOf(sessionId, "agent_message_chunk"), "I will create notes.txt.Done: notes.txt now exists.");
  assert.equal(c.client.textOf(sessionId, "agent_thought_chunk"), "The user wants a notes file.");
  const tool = c.client.updates.filter((u) => u.update.toolCallId && u.update.sessionUpdate.startsWith("tool_call"));
  assert.ok(tool.length >= 2, "tool_call and its updates");
  assert.equal(tool.at(-1).update.status, "completed");
  for (const u of c.client.updates) assert.equal(u.sessionId, sessionId);

  const exit = await c.close();
  assert.equal(exit.code, 0, "corvid exits 0 on stdin EOF");
  assertClean(c.client);
});

test("cancel of a slow turn answers cancelled and streams nothing after", async (t) => {
  const home = tempDir(t);
  const workspace = tempDir(t);
  const script = writeScript(home, {
    chunkSize: 4,
    delayMs: 20,
    responses: [{ parts: [{ type: "text", text: "This answer streams slowly so that you can cancel it. ", repeat: 50 }] }],
  });
  const c = startCorvid(t, { script, home, cwd: workspace });
  await c.conn.initialize(FULL_FS);
  const { sessionId } = await c.conn.newSession({ cwd: workspace, mcpServers: [] });
  const first = c.client.waitUpdate((p) => p.sessionId === sessionId && p.update.sessionUpdate === "agent_message_chunk");
  const started = Date.now();
  const prompt = c.conn.prompt({ sessionId, prompt: [{ type: "text", text: "talk slowly" }] });
  await first;
  await c.conn.cancel({ sessionId });
  const res = await prompt;
  assert.equal(res.stopReason, "cancelled");
  assert.ok(Date.now() - started < 5000, "the cancelled turn ended well before the script would have");
  const seen = c.client.updates.length;
  // A round trip through corvid, then nothing more of that turn may arrive.
  await c.conn.newSession({ cwd: workspace, mcpServers: [] });
  await new Promise((r) => setTimeout(r, 100));
  const late = c.client.updates.slice(seen).filter((u) => u.sessionId === sessionId);
  assert.deepEqual(late, [], "updates of the cancelled session arrived after its prompt response");
  const streamed = c.client.textOf(sessionId, "agent_message_chunk");
  assert.ok(streamed.length > 0 && streamed.length < 55 * 50, `streamed ${streamed.length} characters`);

  const exit = await c.close();
  assert.equal(exit.code, 0);
  assertClean(c.client);
});

test("session/load in a new process replays the history before it resolves", async (t) => {
  const home = tempDir(t);
  const workspace = tempDir(t);
  const script = writeScript(home, {
    chunkSize: 5,
    responses: [
      {
        parts: [
          { type: "thinking", text: "Read the file first." },
          { type: "tool_call", id: "call_r", name: "read", input: { path: "notes.txt" } },
        ],
      },
      { parts: [{ type: "text", text: "The notes say alpha." }] },
      { parts: [{ type: "text", text: "Second answer, after the load." }] },
    ],
  });

  // Process A: one turn, then a clean exit.
  const clientA = new RecordingClient();
  clientA.files.set(join(workspace, "notes.txt"), "alpha\n");
  const a = startCorvid(t, { script, home, cwd: workspace, client: clientA });
  await a.conn.initialize(FULL_FS);
  const { sessionId } = await a.conn.newSession({ cwd: workspace, mcpServers: [] });
  const res = await a.conn.prompt({ sessionId, prompt: [{ type: "text", text: "What do the notes say?" }] });
  assert.equal(res.stopReason, "end_turn");
  assert.equal(clientA.reads.length, 1, "the read went through fs/read_text_file");
  const liveText = clientA.textOf(sessionId, "agent_message_chunk");
  const liveThought = clientA.textOf(sessionId, "agent_thought_chunk");
  assert.equal(liveText, "The notes say alpha.");
  assert.equal((await a.close()).code, 0);
  assertClean(clientA);

  // Process B, same store: load replays before the response.
  const clientB = new RecordingClient();
  const b = startCorvid(t, { script, home, cwd: workspace, client: clientB });
  const init = await b.conn.initialize(FULL_FS);
  assert.equal(init.agentCapabilities?.loadSession, true);
  const loaded = await b.conn.loadSession({ sessionId, cwd: workspace, mcpServers: [] });
  assert.equal(typeof loaded, "object");
  const replay = clientB.updates.filter((u) => u.sessionId === sessionId);
  assert.ok(replay.length > 0, "no replay arrived before session/load resolved");
  assert.equal(clientB.textOf(sessionId, "user_message_chunk"), "What do the notes say?");
  assert.equal(clientB.textOf(sessionId, "agent_thought_chunk"), liveThought);
  assert.equal(clientB.textOf(sessionId, "agent_message_chunk"), liveText);
  const tools = replay.filter((u) => u.update.sessionUpdate === "tool_call");
  assert.equal(tools.length, 1, "the read tool call is replayed");
  const toolEnd = replay.filter((u) => u.update.toolCallId === tools[0].update.toolCallId && u.update.status).at(-1);
  assert.equal(toolEnd.update.status, "completed");

  // The restored context continues the script where it left off.
  const before = clientB.updates.length;
  const next = await b.conn.prompt({ sessionId, prompt: [{ type: "text", text: "And now?" }] });
  assert.equal(next.stopReason, "end_turn");
  assert.equal(clientB.textOf(sessionId, "agent_message_chunk", before), "Second answer, after the load.");
  assert.equal((await b.close()).code, 0);
  assertClean(clientB);
});

test("ask_user's elicitation/create is accepted by the SDK client and its answer becomes the tool result", async (t) => {
  const home = tempDir(t);
  const workspace = tempDir(t);
  const script = writeScript(home, {
    responses: [
      {
        parts: [
          {
            type: "tool_call",
            id: "call_q",
            name: "ask_user",
            input: {
              questions: [
                {
                  header: "Database",
                  question: "Which database?",
                  options: [
                    { label: "Postgres", description: "Relational, in production" },
                    { label: "SQLite", description: "One file" },
                  ],
                },
                { header: "Targets", question: "Which platforms?", multiSelect: true, options: [{ label: "linux" }, { label: "macos" }] },
                { header: "Name", question: "What is it called?" },
              ],
            },
          },
        ],
      },
      { parts: [{ type: "text", text: "Noted." }] },
    ],
  });
  // The SDK parses elicitation/create with its zod schema before this handler
  // runs; a request it rejects never gets here and the tool would fail.
  class ElicitingClient extends RecordingClient {
    constructor() {
      super();
      this.elicitations = [];
    }
    async createElicitation(params) {
      this.elicitations.push(params);
      return { action: "accept", content: { q1: "SQLite", q2: ["linux", "macos"], q3: "ledger" } };
    }
  }
  const client = new ElicitingClient();
  const c = startCorvid(t, { script, home, cwd: workspace, client });
  await c.conn.initialize({ ...FULL_FS, clientCapabilities: { ...FULL_FS.clientCapabilities, elicitation: { form: {} } } });
  const { sessionId } = await c.conn.newSession({ cwd: workspace, mcpServers: [] });
  const res = await c.conn.prompt({ sessionId, prompt: [{ type: "text", text: "ask me" }] });
  assert.equal(res.stopReason, "end_turn");

  assert.equal(client.elicitations.length, 1, "one elicitation/create");
  const el = client.elicitations[0];
  assert.equal(el.mode, "form");
  assert.equal(el.sessionId, sessionId);
  const tool = client.updates.filter((u) => u.update.toolCallId && u.update.sessionUpdate.startsWith("tool_call"));
  assert.equal(el.toolCallId, tool[0].update.toolCallId, "the elicitation is scoped to the ask_user tool call");
  assert.deepEqual(el.requestedSchema.properties.q1.oneOf.map((o) => o.const), ["Postgres", "SQLite"]);
  const last = tool.at(-1).update;
  assert.equal(last.status, "completed");
  assert.match(last.rawOutput.output, /Which database\? → SQLite/);
  assert.match(last.rawOutput.output, /Which platforms\? → linux, macos/);

  const exit = await c.close();
  assert.equal(exit.code, 0);
  assertClean(c.client);
});
