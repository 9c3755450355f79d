// A tiny scripted ACP agent on the official TypeScript SDK's agent side
// (@agentclientprotocol/sdk, pinned in package.json), for `corvid tui --
// node sdk-agent.mjs` (test/tui/agents_test.go). Each prompt streams an
// answer, shows a plan and a tool call, asks permission for it and says
// what the user chose; "cancel me" streams until session/cancel.
//
// With SDK_AGENT_TOKEN_FILE set, it wants a login first (test/tui/login_test.go):
// session/new is refused with auth_required until that file holds a token. It
// offers an agent method, "sdk-token" (authenticate reads the file), and, to a
// client that can run it (clientCapabilities.auth.terminal), a terminal one:
// this script with --login, which asks for the token on the terminal and writes
// it, with the method's env variable SDK_LOGIN_MARK on the next line.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const tokenFile = process.env.SDK_AGENT_TOKEN_FILE;
const hasToken = () => !!tokenFile && existsSync(tokenFile) && readFileSync(tokenFile, "utf8").trim() !== "";

if (process.argv.includes("--login")) {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  rl.question("SDK agent token: ", (token) => {
    rl.close();
    if (!tokenFile || token.trim() === "") process.exit(1);
    writeFileSync(tokenFile, `${token.trim()}\n${process.env.SDK_LOGIN_MARK ?? ""}\n`, { mode: 0o600 });
    process.exit(0);
  });
} else {
  serve();
}

const sessions = new Map();
let next = 0;

const update = (client, sessionId, u) => client.notify("session/update", { sessionId, update: u });
const text = (t) => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: t } });
const sleep = (ms, signal) => new Promise((res) => {
  const t = setTimeout(res, ms);
  signal?.addEventListener("abort", () => { clearTimeout(t); res(); }, { once: true });
});

function serve() {
let authed = !tokenFile;
acp.agent()
  .onRequest("initialize", ({ params }) => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
    agentInfo: { name: "sdk-agent", title: "SDK test agent", version: "1.0.0" },
    authMethods: !tokenFile ? [] : [
      ...(params.clientCapabilities?.auth?.terminal
        ? [{ type: "terminal", id: "sdk-login", name: "Log in to the SDK agent", args: ["--login"], env: { SDK_LOGIN_MARK: "set-by-the-method" } }]
        : []),
      { id: "sdk-token", name: "SDK token file", description: "authenticate reads SDK_AGENT_TOKEN_FILE" },
    ],
  }))
  .onRequest("authenticate", ({ params }) => {
    if (!tokenFile || params.methodId !== "sdk-token") throw acp.RequestError.invalidParams(undefined, `no method ${params.methodId}`);
    if (!hasToken()) throw acp.RequestError.authRequired(undefined, "the SDK agent's token file is empty");
    authed = true;
    return {};
  })
  .onRequest("session/new", () => {
    authed = authed || hasToken();
    if (!authed) throw acp.RequestError.authRequired();
    const sessionId = `sdk-${++next}`;
    sessions.set(sessionId, { cancelled: false });
    return {
      sessionId,
      modes: { currentModeId: "ask", availableModes: [{ id: "ask", name: "Ask" }, { id: "code", name: "Code" }] },
    };
  })
  .onRequest("session/set_mode", ({ params }) => {
    sessions.get(params.sessionId).mode = params.modeId;
    return {};
  })
  .onNotification("session/cancel", ({ params }) => {
    const s = sessions.get(params.sessionId);
    if (s) s.cancelled = true;
  })
  .onRequest("session/prompt", async ({ params, client, signal }) => {
    const { sessionId } = params;
    const s = sessions.get(sessionId);
    s.cancelled = false;
    const said = params.prompt.filter((b) => b.type === "text").map((b) => b.text).join(" ");
    if (said.includes("cancel me")) {
      for (let i = 0; i < 600 && !s.cancelled && !signal.aborted; i++) {
        await update(client, sessionId, text(`tick ${i} `));
        await sleep(50, signal);
      }
      return { stopReason: "cancelled" };
    }
    for (const piece of ["Hello from ", "the **SDK** ", "agent.\n"]) {
      await update(client, sessionId, text(piece));
    }
    await update(client, sessionId, { sessionUpdate: "plan", entries: [
      { content: "Look at the request", priority: "high", status: "completed" },
      { content: "Touch sdk.txt", priority: "medium", status: "in_progress" },
    ] });
    await update(client, sessionId, { sessionUpdate: "tool_call", toolCallId: "call-1", title: "Touch sdk.txt",
      kind: "edit", status: "pending", locations: [{ path: "sdk.txt" }] });
    const answer = await client.request("session/request_permission", {
      sessionId,
      toolCall: { toolCallId: "call-1", title: "Touch sdk.txt", kind: "edit" },
      options: [
        { optionId: "yes", name: "Allow", kind: "allow_once" },
        { optionId: "no", name: "Refuse", kind: "reject_once" },
      ],
    });
    const chose = answer.outcome.outcome === "selected" ? answer.outcome.optionId : "cancelled";
    await update(client, sessionId, { sessionUpdate: "tool_call_update", toolCallId: "call-1",
      status: chose === "yes" ? "completed" : "failed",
      content: [{ type: "content", content: { type: "text", text: `permission: ${chose}` } }] });
    await update(client, sessionId, text(`The user chose ${chose}.\n`));
    return { stopReason: "end_turn" };
  })
  .connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
}
