// The list of a daemon that holds no session: what it shows of the stored
// sessions, read from their logs. A first `corvid serve`, on a fake
// Anthropic API (a priced model, so sessions have a cost), is killed with
// SIGKILL in the middle of a turn; the page of the next one, on the same
// store, shows that session as interrupted with its cost so far, and a
// finished one as idle with its cost.
//   CORVID_BIN=/path/to/corvid node --test stored.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { startDaemon, openPage, newSession, prompt, shot } from "./harness.mjs";

// startFakeAnthropic streams the queued answers of the Messages API, one
// per request: {text, input, output, delayMs (between text pieces)}.
async function startFakeAnthropic(t, answers) {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", async () => {
      const a = answers.shift() || { text: "(no more answers)", input: 1, output: 1 };
      res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache" });
      const send = (event, data) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
      send("message_start", { message: { id: "msg_" + Math.random().toString(36).slice(2), type: "message", role: "assistant",
        model: "claude-haiku-4-5", content: [], stop_reason: null, stop_sequence: null,
        usage: { input_tokens: a.input, output_tokens: 0 } } });
      send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      for (let i = 0; i < a.text.length; i += 8) {
        if (a.delayMs) await new Promise((r) => setTimeout(r, a.delayMs));
        if (res.destroyed) return;
        send("content_block_delta", { index: 0, delta: { type: "text_delta", text: a.text.slice(i, i + 8) } });
      }
      send("content_block_stop", { index: 0 });
      send("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { input_tokens: a.input, output_tokens: a.output } });
      send("message_stop", {});
      res.end();
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => { server.closeAllConnections(); server.close(); });
  return `http://127.0.0.1:${server.address().port}`;
}

test("a stored session killed mid-turn shows as interrupted with its cost, a finished one as idle with its cost", async (t) => {
  // claude-haiku-4-5: $1 per million input tokens, $5 per million output.
  const api = await startFakeAnthropic(t, [
    { text: "The finished answer.", input: 3000, output: 200 }, // $0.0040
    { text: "The first answer.", input: 2000, output: 20 }, // $0.0021
    { text: "slow-start " + "word ".repeat(300), input: 5000, output: 500, delayMs: 40 },
  ]);
  const onAPI = { model: "anthropic:claude-haiku-4-5", env: { ANTHROPIC_API_KEY: "sk-ant-dash", ANTHROPIC_BASE_URL: api } };
  const first = await startDaemon(t, {}, onAPI);
  let page = await openPage(t);
  await page.goto(first.base);
  const done = await newSession(page, first.project);
  await prompt(page, "Finish this");
  await page.waitForFunction(() => document.body.textContent.includes("turn ended: end_turn"), { timeout: 15000 });
  const cut = await newSession(page, first.project);
  await prompt(page, "Answer once");
  await page.waitForFunction(() => document.querySelectorAll("#transcripts .stop").length >= 1 &&
    document.body.textContent.includes("The first answer."), { timeout: 15000 });
  await prompt(page, "Answer slowly");
  await page.waitForFunction(() => document.body.textContent.includes("slow-start"), { timeout: 15000 });
  first.child.kill("SIGKILL");
  await new Promise((r) => (first.child.exitCode !== null || first.child.signalCode !== null ? r() : first.child.once("exit", r)));
  await page.close();

  const next = await startDaemon(t, {}, { ...onAPI, home: first.home });
  page = await openPage(t);
  await page.goto(next.base);
  await page.waitForFunction((a, b) => {
    const ids = [...document.querySelectorAll("#session-list .session-item")].map((n) => n.dataset.sid);
    return ids.includes(a) && ids.includes(b);
  }, { timeout: 15000 }, done, cut);
  const item = (sid) => page.$eval(`#session-list .session-item[data-sid="${sid}"]`, (n) => ({ state: n.dataset.state, text: n.textContent }));
  const c = await item(cut);
  assert.equal(c.state, "interrupted", JSON.stringify(c));
  assert.ok(c.text.includes("interrupted") && c.text.includes("0.0021 USD"), "the interrupted session: " + c.text);
  const d = await item(done);
  assert.equal(d.state, "idle", JSON.stringify(d));
  assert.ok(d.text.includes("0.0040 USD"), "the finished session: " + d.text);
  // Interrupted sessions come after running ones and before idle ones.
  const order = await page.$$eval("#session-list .session-item", (ns) => ns.map((n) => n.dataset.sid));
  assert.ok(order.indexOf(cut) < order.indexOf(done), order.join(","));
  await shot(page, "list-interrupted");
  assert.deepEqual(page.seen.foreign, []);
  assert.deepEqual(page.seen.errors, []);
});
