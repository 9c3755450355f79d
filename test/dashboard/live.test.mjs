// The dashboard's list, questions, forms and members in Chromium: the
// built `corvid serve` on the scripted model, and a stand-in agent
// (fakeagent.mjs) for frames of a contract the daemon may not send yet.
// Run through run.sh.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDaemon, openPage, connected, newSession, prompt, agentText, shot, reply, text, tempDir, notSameOrigin } from "./harness.mjs";
import { startFakeAgent } from "./fakeagent.mjs";

const itemSel = (sid) => `#session-list .session-item[data-sid="${sid}"]`;
const stateIn = (page, sid) => page.$eval(itemSel(sid), (n) => n.dataset.state).catch(() => "");

test("the list follows every session live, without polling: state, model, mode, clients; waiting first", async (t) => {
  const d = await startDaemon(t, {
    responses: [
      reply(text("I will write it."), { type: "tool_call", name: "write", input: { path: "a.txt", content: "a\n" } }),
      reply(text("Done.")),
    ],
    onExhausted: "repeat-last",
  }, { yolo: false });
  // Tab a works; tab b only watches the list, holding no session.
  const a = await openPage(t);
  await a.goto(d.base);
  const quiet = await newSession(a, d.project);
  const busy = await newSession(a, d.project);
  const b = await openPage(t);
  await b.goto(d.base);
  await connected(b);
  assert.equal(await b.$eval("#list-hint", (n) => n.textContent), "Updated live.");
  // Count b's session/list calls: they follow notifications, not a timer.
  const frames = { list: 0, changed: 0 };
  const cdp = await b.createCDPSession();
  await cdp.send("Network.enable");
  cdp.on("Network.webSocketFrameSent", (e) => { if (e.response.payloadData.includes('"session/list"')) frames.list++; });
  cdp.on("Network.webSocketFrameReceived", (e) => { if (e.response.payloadData.includes("_corvid/sessions_changed")) frames.changed++; });
  await b.waitForSelector(itemSel(busy), { timeout: 10000 });

  await prompt(a, "Write a.txt");
  // b learns that a session it does not hold waits for an answer: b does
  // not poll (frames, below), so only the notification can tell it.
  await b.waitForFunction((sel) => document.querySelector(sel)?.dataset.state === "waiting", { timeout: 15000 }, itemSel(busy)).catch(async (e) => {
    throw new Error(e.message + "; list: " + await b.$eval("#session-list", (n) => n.textContent) + " frames " + JSON.stringify(frames) + " a: " + await a.$eval("#transcripts", (n) => n.textContent));
  });
  assert.equal(await b.$eval("#session-list .session-item", (n) => n.dataset.sid), busy, "waiting sessions come first");
  assert.equal(await b.title(), "(1 waiting) corvid");
  const row = await b.$eval(itemSel(busy), (n) => n.textContent);
  assert.ok(row.includes("waiting") && row.includes(d.project) && row.includes("script:") && row.includes("default") && row.includes("1 attached"), row);
  await b.setViewport({ width: 900, height: 420 });
  await shot(b, "list-live");
  await b.setViewport({ width: 1200, height: 780 });
  await a.$$eval("#transcripts .question button.option", (ns) => ns.find((n) => n.dataset.kind === "allow_once").click());
  await b.waitForFunction((sel) => document.querySelector(sel)?.dataset.state === "idle", { timeout: 15000 }, itemSel(busy));
  assert.equal(await stateIn(b, quiet), "idle");
  assert.equal(await b.title(), "corvid");
  // Tab a leaves: both sessions are stored ones nobody holds, and still
  // show their model.
  await a.close();
  await b.waitForFunction((sel) => document.querySelector(sel)?.textContent.includes("0 attached"), { timeout: 15000 }, itemSel(busy));
  assert.ok((await b.$eval(itemSel(busy), (n) => n.textContent)).includes("script:"));
  assert.ok(frames.changed > 0, "no _corvid/sessions_changed reached the page");
  assert.ok(frames.list <= frames.changed + 1, `session/list ${frames.list} times for ${frames.changed} notifications: polling?`);
  assert.deepEqual(notSameOrigin(b, d.base), []);
  assert.deepEqual(b.seen.errors, []);
});

// askUser is an ask_user call whose form carries the payload in every text.
const XSS = `<img src=x onerror="window.__pwned='form'">`;
const askUser = {
  type: "tool_call", name: "ask_user", input: { questions: [
    { header: "Database " + XSS, question: "Which database? " + XSS, options: [
      { label: "Postgres", description: "Relational" }, { label: "SQLite " + XSS, description: "One file" }] },
    { header: "Targets", question: "Which platforms?", multiSelect: true, options: [{ label: "linux" }, { label: "macos" }] },
    { header: "Name", question: "What is it called?" }] },
};

test("an elicitation is a form: keyboard, labels as text, submit and decline", async (t) => {
  const d = await startDaemon(t, {
    responses: [reply(askUser), reply(text("finished one")), reply(askUser), reply(text("finished two"))],
  });
  const page = await openPage(t);
  await page.goto(d.base);
  const sid = await newSession(page, d.project);
  await prompt(page, "ask me");
  await page.waitForSelector("#transcripts .elicit-form", { timeout: 15000 });
  await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.state === "waiting", { timeout: 5000 }, itemSel(sid));
  // The agent's texts are labels and options, as text.
  const form = await page.$eval("#transcripts .elicit-form", (f) => ({
    legend: f.querySelector("legend").textContent,
    labels: [...f.querySelectorAll("label, legend")].map((l) => l.textContent),
    options: [...f.querySelectorAll("option")].map((o) => o.textContent),
    tags: f.querySelectorAll("img, script, svg").length,
  }));
  assert.equal(form.tags, 0);
  assert.ok(form.labels.some((l) => l.includes("Database " + XSS)), JSON.stringify(form.labels));
  assert.ok(form.options.includes("SQLite " + XSS), JSON.stringify(form.options));
  // The accessibility tree: a combobox, checkboxes and a textbox, each
  // named by its label, and the three buttons.
  const ax = await page.accessibility.snapshot({ root: await page.$("#transcripts .elicit-form") });
  const nodes = [];
  (function walk(n) { if (!n) return; nodes.push(n); (n.children || []).forEach(walk); })(ax);
  const named = (role, name) => nodes.some((n) => n.role === role && (n.name || "").startsWith(name));
  assert.ok(named("combobox", "Database "), JSON.stringify(nodes.map((n) => [n.role, n.name])));
  assert.ok(named("checkbox", "linux") && named("checkbox", "macos"));
  assert.ok(named("textbox", "Name"));
  for (const b of ["Submit", "Decline", "Cancel"]) assert.ok(named("button", b), b);
  await shot(page, "form");
  // The first field has the focus; fill the form with the keyboard.
  assert.equal(await page.evaluate(() => document.activeElement.tagName), "SELECT");
  await page.select("#transcripts .elicit-form select", "SQLite " + XSS);
  await page.keyboard.press("Tab");
  await page.keyboard.press("Space"); // linux
  await page.keyboard.press("Tab");
  await page.keyboard.press("Space"); // macos
  await page.keyboard.press("Tab");
  await page.keyboard.type("ledger");
  await page.keyboard.press("Enter"); // submits
  await page.waitForFunction(() => document.body.textContent.includes("finished one"), { timeout: 15000 });
  const out = await page.$eval("#transcripts .tool-body", (n) => n.textContent);
  assert.ok(out.includes("SQLite " + XSS) && out.includes("linux, macos") && out.includes("ledger"), out);
  assert.equal(await page.$eval("#transcripts .elicitation .outcome", (n) => n.textContent), "You submitted the form.");

  // The second ask: declined.
  await page.waitForFunction(() => document.body.textContent.includes("turn ended: end_turn"), { timeout: 15000 });
  await prompt(page, "ask again");
  await page.waitForFunction(() => document.querySelectorAll("#transcripts .elicit-form").length === 2, { timeout: 15000 });
  await page.$$eval("#transcripts .elicit-form", (fs) => fs[1].querySelector('button[data-kind="decline"]').click());
  await page.waitForFunction(() => document.body.textContent.includes("finished two"), { timeout: 15000 });
  assert.ok((await page.$$eval("#transcripts .tool-body", (ns) => ns[1].textContent)).toLowerCase().includes("declined"));
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(page.seen.dialogs, []);
  assert.deepEqual(notSameOrigin(page, d.base), []);
});

test("sub-agents' timelines show each under its member, names as text", async (t) => {
  const dir = tempDir(t);
  const child = (name, words) => {
    const f = join(dir, name + ".json");
    writeFileSync(f, JSON.stringify({ responses: [reply({ type: "thinking", text: "thinking as " + name }, text(words))] }));
    return "script:" + f;
  };
  const evil = `<img src=x onerror="window.__pwned='member'">`;
  const task = (id, name, words) => ({ type: "tool_call", id, name: "task", input: { name, description: "task of " + name, prompt: "go", model: child(id, words) } });
  const d = await startDaemon(t, {
    responses: [reply(text("Starting two helpers."), task("t1", "writer", "the writer's answer"), task("t2", evil, "the other answer")), reply(text("both done"))],
  });
  const page = await openPage(t);
  await page.goto(d.base);
  await newSession(page, d.project);
  await prompt(page, "use helpers");
  await page.waitForFunction(() => document.body.textContent.includes("turn ended: end_turn"), { timeout: 20000 });
  const members = await page.$$eval("#transcripts li.member", (ns) => ns.map((n) => ({
    name: n.querySelector(".member-name").textContent,
    status: n.querySelector(".member-status").textContent,
    kind: n.querySelector(".tool-kind").textContent,
    text: [...n.querySelectorAll(".msg-agent")].map((m) => m.textContent).join(""),
    thought: n.querySelector("details.thought") !== null,
    after: n.previousElementSibling?.querySelector(".tool-title")?.textContent || "",
  })));
  const w = members.find((m) => m.name === "writer");
  const e = members.find((m) => m.name === evil);
  assert.ok(w && e, JSON.stringify(members));
  assert.equal(w.text, "the writer's answer");
  assert.equal(e.text, "the other answer");
  assert.ok(w.thought && w.kind === "sub-agent");
  assert.equal(w.status, "completed", "the team update's status of the member");
  assert.ok(w.after.includes("writer"), "the member follows its task call: " + w.after);
  // The root's own text stays outside the members.
  const rootText = await page.$$eval("#transcripts > ol > li.msg-agent", (ns) => ns.map((n) => n.textContent).join("|"));
  assert.ok(rootText.includes("Starting two helpers.") && rootText.includes("both done") && !rootText.includes("the writer's answer"), rootText);
  assert.equal(await page.$$eval("#transcripts img", (ns) => ns.length), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await shot(page, "members");
});

test("who answered a question: the answering client's clientInfo, as text", async (t) => {
  const sid = "sess_fake";
  const fake = await startFakeAgent(t, { sessions: [{ sessionId: sid, cwd: "/work", title: "a fake session" }] });
  const page = await openPage(t);
  await page.goto(fake.base + "#/s/" + sid);
  await connected(page);
  const peer = await fake.peer();
  await page.waitForFunction(() => document.getElementById("session").hidden === false, { timeout: 10000 });
  peer.notify("session/update", { sessionId: sid, update: { sessionUpdate: "tool_call", toolCallId: "c1", title: "Write notes.txt", kind: "edit", status: "pending" } });
  const asked = peer.call("session/request_permission", { sessionId: sid, toolCall: { toolCallId: "c1", title: "Write notes.txt" },
    options: [{ optionId: "allow_once", name: "Allow once", kind: "allow_once" }, { optionId: "reject_once", name: "Reject", kind: "reject_once" }] });
  await page.waitForSelector("#transcripts .question button.option", { timeout: 10000 });
  // Another client answered first: the question is withdrawn, then the
  // tool call's update names who answered.
  peer.notify("$/cancel_request", { requestId: 1000 });
  await page.waitForFunction(() => document.querySelector("#transcripts .question .outcome")?.textContent === "Answered elsewhere or withdrawn", { timeout: 5000 });
  const who = { name: "zed", title: `Zed ${XSS}`, version: "0.201.3" };
  peer.notify("session/update", { sessionId: sid, update: { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed", _meta: { "corvid.dev/answeredBy": who } } });
  await page.waitForFunction(() => document.querySelector("#transcripts .question .outcome")?.textContent.startsWith("Answered by"), { timeout: 5000 });
  assert.equal(await page.$eval("#transcripts .question .outcome", (n) => n.textContent), `Answered by Zed ${XSS} 0.201.3`);
  await page.$eval("#transcripts details.tool", (n) => (n.open = true));
  assert.equal(await page.$eval("#transcripts .tool .answered-by", (n) => n.textContent), `Answered by Zed ${XSS} 0.201.3`);
  // Without a title, the name.
  peer.notify("session/update", { sessionId: sid, update: { sessionUpdate: "tool_call", toolCallId: "c2", title: "Run tests", kind: "execute", status: "completed", _meta: { "corvid.dev/answeredBy": { name: "corvid-dashboard", version: "1" } } } });
  await page.waitForFunction(() => [...document.querySelectorAll("#transcripts .answered-by")].some((n) => n.textContent === "Answered by corvid-dashboard 1"), { timeout: 5000 });
  assert.equal(await page.$$eval("#transcripts img", (ns) => ns.length), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  void asked.catch(() => {});
  assert.deepEqual(notSameOrigin(page, fake.base), []);
});

test("an elicitation of every field type: defaults, numbers, booleans, enums; the answer's types; cancel", async (t) => {
  const sid = "sess_form";
  const fake = await startFakeAgent(t, { sessions: [{ sessionId: sid, cwd: "/work", title: "forms" }] });
  const page = await openPage(t);
  await page.goto(fake.base + "#/s/" + sid);
  await connected(page);
  const peer = await fake.peer();
  await page.waitForFunction(() => document.getElementById("session").hidden === false, { timeout: 10000 });
  const schema = {
    type: "object",
    properties: {
      name: { type: "string", title: "Name " + XSS, description: "Who " + XSS, default: `"><script>window.__pwned='default'</script>` },
      count: { type: "integer", title: "Count", minimum: 1, maximum: 9, default: 3 },
      ratio: { type: "number", title: "Ratio" },
      ok: { type: "boolean", title: "Proceed", default: true },
      level: { type: "string", title: "Level", enum: ["lo", "hi"], enumNames: ["Low " + XSS, "High"] },
      size: { type: "number", title: "Size", enum: [1, 2] },
      tags: { type: "array", title: "Tags", items: { enum: ["a", "b"] }, default: ["b"] },
    },
    required: ["name", "count"],
  };
  const answer = peer.call("elicitation/create", { sessionId: sid, mode: "form", message: "Settings " + XSS, requestedSchema: schema });
  await page.waitForSelector("#transcripts .elicit-form", { timeout: 10000 });
  const shown = await page.$eval("#transcripts .elicit-form", (f) => ({
    legend: f.querySelector("legend").textContent,
    name: f.querySelector('input[name="name"]').value,
    count: f.querySelector('input[name="count"]').value,
    countType: f.querySelector('input[name="count"]').type,
    ok: f.querySelector('input[name="ok"]').checked,
    levels: [...f.querySelectorAll('select[name="level"] option')].map((o) => o.textContent),
    tags: f.querySelectorAll("img, script").length,
  }));
  assert.equal(shown.legend, "Settings " + XSS);
  assert.equal(shown.name, `"><script>window.__pwned='default'</script>`);
  assert.equal(shown.count, "3");
  assert.equal(shown.countType, "number");
  assert.equal(shown.ok, true);
  assert.deepEqual(shown.levels, ["—", "Low " + XSS, "High"]);
  assert.equal(shown.tags, 0);
  await page.$eval('#transcripts .elicit-form input[name="ratio"]', (n) => (n.value = "0.5"));
  await page.select('#transcripts .elicit-form select[name="level"]', "hi");
  await page.select('#transcripts .elicit-form select[name="size"]', "2");
  await page.click('#transcripts .elicit-form button[data-kind="accept"]');
  const r = await answer;
  assert.deepEqual(r.result, { action: "accept", content: {
    name: `"><script>window.__pwned='default'</script>`, count: 3, ratio: 0.5, ok: true, level: "hi", size: 2, tags: ["b"] } });
  // A required field left empty is not sent: the browser asks for it.
  const again = peer.call("elicitation/create", { sessionId: sid, mode: "form", message: "Again", requestedSchema: { type: "object", properties: { q: { type: "string", title: "Question" } }, required: ["q"] } });
  await page.waitForFunction(() => document.querySelectorAll("#transcripts .elicit-form").length === 2, { timeout: 10000 });
  await page.$$eval("#transcripts .elicit-form", (fs) => fs[1].querySelector('button[data-kind="accept"]').click());
  await new Promise((res) => setTimeout(res, 300));
  assert.equal(await page.$$eval("#transcripts .elicitation .outcome", (ns) => ns[1].textContent), "");
  await page.$$eval("#transcripts .elicit-form", (fs) => fs[1].querySelector('button[data-kind="cancel"]').click());
  assert.deepEqual((await again).result, { action: "cancel" });
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(page.seen.dialogs, []);
});

test("the page is keyboard operable with real controls, follows prefers-color-scheme, and asks nothing of another host", async (t) => {
  const d = await startDaemon(t, { responses: [reply(text("hi"))] });
  const page = await openPage(t);
  await page.goto(d.base);
  const sid = await newSession(page, d.project);
  await prompt(page, "hello");
  await page.waitForFunction(() => document.body.textContent.includes("turn ended: end_turn"), { timeout: 15000 });
  // The list hears of the turn's end by its own notification, a moment later.
  await page.waitForFunction(() => /idle/.test(document.querySelector("#session-list")?.textContent || ""), { timeout: 10000 });
  const ax = await page.accessibility.snapshot();
  const nodes = [];
  (function walk(n) { if (!n) return; nodes.push(n); (n.children || []).forEach(walk); })(ax);
  const has = (role, name) => nodes.some((n) => n.role === role && (n.name || "").startsWith(name));
  assert.ok(has("textbox", "New session in"), JSON.stringify(nodes.map((n) => [n.role, n.name])));
  assert.ok(has("textbox", "Prompt"));
  assert.ok(has("button", "Send") && has("button", "Cancel") && has("button", "New"));
  assert.ok(has("button", "idle"), "each session is a button named by its state and title");
  // prefers-color-scheme: the colours follow it.
  const colours = async (scheme) => {
    await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: scheme }]);
    return page.evaluate(() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]);
  };
  const light = await colours("light");
  const dark = await colours("dark");
  assert.notDeepEqual(light, dark);
  assert.equal(dark[0], "rgb(22, 24, 28)", "the dark background");
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
  // Tab from the top reaches a session button; Enter opens it.
  await page.goto("about:blank");
  await page.goto(d.base);
  await connected(page);
  await page.waitForSelector(itemSel(sid));
  let reached = false;
  for (let i = 0; i < 10 && !reached; i++) {
    await page.keyboard.press("Tab");
    reached = await page.evaluate((sid) => document.activeElement?.dataset.sid === sid, sid);
  }
  assert.ok(reached, "Tab never reached the session's button");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.querySelector("#transcripts .msg-agent")?.textContent === "hi", { timeout: 10000 });
  assert.deepEqual(notSameOrigin(page, d.base), []);
  assert.ok(page.seen.urls.some((u) => u.startsWith("ws://")), "the WebSocket was recorded");
});

// The daemon's side of "who answered": corvid.dev/answeredBy on the tool
// call's update (internal/acpserver/questions.go).
test("who answered, from the daemon: a tab that did not answer names the tab that did", async (t) => {
  const d = await startDaemon(t, {
    responses: [reply({ type: "tool_call", name: "write", input: { path: "who.txt", content: "who\n" } }), reply(text("Written."))],
  }, { yolo: false });
  const a = await openPage(t);
  await a.goto(d.base);
  const sid = await newSession(a, d.project);
  const b = await openPage(t);
  await b.goto(d.base + "#/s/" + encodeURIComponent(sid));
  await connected(b);
  await b.waitForFunction(() => document.getElementById("session").hidden === false, { timeout: 10000 });
  await prompt(a, "Write who.txt");
  const q = "#transcripts .question button.option";
  await a.waitForSelector(q, { timeout: 15000 });
  await b.waitForSelector(q, { timeout: 15000 });
  await b.$$eval(q, (ns) => ns.find((n) => n.dataset.kind === "allow_once").click());
  await a.waitForFunction(() => document.querySelector("#transcripts .question .outcome")?.textContent.startsWith("Answered by"), { timeout: 15000, polling: 100 });
  assert.equal(await a.$eval("#transcripts .question .outcome", (n) => n.textContent), "Answered by corvid dashboard 1");
  assert.equal(await b.$eval("#transcripts .question .outcome", (n) => n.textContent), "You answered: Allow once");
});

test("a prompt from one tab shows in the other tab holding the session, once in each", async (t) => {
  const d = await startDaemon(t, { responses: [reply(text("Answered."))] });
  const a = await openPage(t);
  await a.goto(d.base);
  const sid = await newSession(a, d.project);
  const b = await openPage(t);
  await b.goto(d.base + "#/s/" + encodeURIComponent(sid));
  await connected(b);
  await b.waitForFunction(() => document.getElementById("session").hidden === false, { timeout: 10000 });
  await prompt(a, "Hello from tab a");
  const userText = (p) => p.$$eval("#transcripts .msg-user", (ns) => ns.map((n) => n.textContent));
  await b.waitForFunction(() => document.body.textContent.includes("Answered."), { timeout: 15000, polling: 100 });
  await a.waitForFunction(() => document.body.textContent.includes("Answered."), { timeout: 15000, polling: 100 });
  for (const [name, p] of [["a", a], ["b", b]]) {
    const shown = (await userText(p)).filter((s) => s.includes("Hello from tab a"));
    assert.equal(shown.length, 1, `tab ${name} shows the prompt ${shown.length} times: ${JSON.stringify(await userText(p))}`);
  }
  assert.deepEqual(b.seen.errors, []);
});
