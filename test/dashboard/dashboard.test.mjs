// The dashboard of the built `corvid serve`, in Debian's Chromium driven by
// puppeteer-core (pinned in package-lock.json). Each test starts a daemon on
// the scripted model and drives the page as a person would.
// Run through run.sh (it builds corvid and sets CORVID_BIN), or:
//   CORVID_BIN=/path/to/corvid node --test dashboard.test.mjs
// DASHBOARD_SCREENSHOTS=DIR also writes a PNG of each view into DIR.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import puppeteer from "puppeteer-core";

const BIN = process.env.CORVID_BIN;
if (!BIN) throw new Error("set CORVID_BIN to the corvid binary (run.sh does)");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SHOTS = process.env.DASHBOARD_SCREENSHOTS ? resolve(process.env.DASHBOARD_SCREENSHOTS) : "";

let browser, profile;
before(async () => {
  profile = mkdtempSync(join(tmpdir(), "cdash-profile-"));
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      `--user-data-dir=${profile}`],
  });
});
after(async () => {
  await browser?.close();
  rmSync(profile, { recursive: true, force: true });
});

function tempDir(t) {
  const d = mkdtempSync(join(tmpdir(), "cdash-"));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

// startDaemon runs `corvid serve` on a loopback port with script and
// resolves with {base, login, project}: the page's URL, the login link
// (with a token) and a project directory to open sessions in.
async function startDaemon(t, script, { yolo = true, token = "" } = {}) {
  const home = tempDir(t);
  const project = join(home, "project");
  mkdirSync(project);
  const file = join(home, "script.json");
  writeFileSync(file, JSON.stringify(script));
  const env = { ...process.env, HOME: home, CORVID_HOME: join(home, ".corvid"), CORVID_KEYRING: "off" };
  for (const k of Object.keys(env)) {
    if (k.startsWith("XDG_") || k.endsWith("_API_KEY") || k.endsWith("_BASE_URL")) delete env[k];
  }
  const args = ["serve", "-m", `script:${file}`, "--listen", "127.0.0.1:0"];
  if (yolo) args.push("--yolo");
  if (token) {
    writeFileSync(join(home, "token"), token + "\n", { mode: 0o600 });
    args.push("--token-file", join(home, "token"));
  }
  const child = spawn(BIN, args, { cwd: home, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  t.after(async () => {
    process.off("exit", killOnExit);
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  });
  const link = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`corvid serve did not listen:\n${stderr}`)), 20000);
    child.stderr.on("data", (b) => {
      stderr += b;
      const m = /corvid serve: dashboard at (http\S+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once("exit", (code) => reject(new Error(`corvid serve exited ${code}:\n${stderr}`)));
  });
  const base = new URL("/", link).href;
  return { base, login: link, project, stderr: () => stderr };
}

// openPage opens a tab that records dialogs, console errors and requests to
// any other host.
async function openPage(t) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 780 });
  const seen = { dialogs: [], foreign: [], errors: [] };
  page.on("dialog", async (d) => {
    seen.dialogs.push(d.message());
    await d.dismiss();
  });
  page.on("pageerror", (e) => seen.errors.push(String(e)));
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.hostname !== "127.0.0.1" && u.protocol !== "data:") seen.foreign.push(r.url());
  });
  t.after(() => page.close().catch(() => {}));
  page.seen = seen;
  return page;
}

async function connected(page) {
  await page.waitForFunction(() => document.getElementById("conn").textContent === "connected", { timeout: 15000 });
}

// newSession creates a session in cwd through the page's form and returns its id.
async function newSession(page, cwd) {
  await connected(page);
  await page.$eval("#new-cwd", (e) => (e.value = ""));
  await page.type("#new-cwd", cwd);
  await page.click("#new-session button");
  await page.waitForFunction(() => location.hash.startsWith("#/s/"), { timeout: 10000 });
  return page.evaluate(() => decodeURIComponent(location.hash.slice(4)));
}

async function prompt(page, text) {
  await page.focus("#prompt");
  await page.keyboard.type(text);
  await page.keyboard.press("Enter");
}

const agentText = (page) => page.$$eval("#transcripts .msg-agent", (ns) => ns.map((n) => n.textContent).join("\n"));

async function shot(page, name) {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, name + ".png") });
}

const reply = (...parts) => ({ parts });
const text = (t) => ({ type: "text", text: t });

test("the list shows every session, its state and cwd, and opens one", async (t) => {
  const d = await startDaemon(t, {
    responses: [
      reply({ type: "thinking", text: "The user wants a summary; read the README first." },
        { type: "tool_call", name: "write", input: { path: "notes.md", content: "# Notes\n\n- one\n- two\n" } }),
      reply(text("I wrote **notes.md**:\n\n- a heading\n- two items\n\nSee [the ACP spec](https://agentclientprotocol.com/).\n\n```go\nfmt.Println(\"hi\")\n```")),
    ],
    onExhausted: "repeat-last",
  });
  const page = await openPage(t);
  await page.goto(d.base);
  const a = await newSession(page, d.project);
  await prompt(page, "Write my notes");
  await page.waitForFunction(() => document.body.textContent.includes("turn ended: end_turn"), { timeout: 15000 });
  const b = await newSession(page, d.project);
  await prompt(page, "Say hello");
  await page.waitForFunction(() => document.querySelectorAll("#transcripts .stop").length === 1, { timeout: 15000 });
  await page.waitForFunction((a, b) => {
    const ids = [...document.querySelectorAll("#session-list .session-item")].map((n) => n.dataset.sid);
    return ids.includes(a) && ids.includes(b);
  }, { timeout: 10000 }, a, b);
  const items = await page.$$eval("#session-list .session-item", (ns) => ns.map((n) => ({ sid: n.dataset.sid, state: n.dataset.state, text: n.textContent })));
  for (const it of items) {
    assert.equal(it.state, "idle", JSON.stringify(it));
    assert.ok(it.text.includes(d.project), it.text);
    assert.ok(it.text.includes("script:") && it.text.includes("default"), "model and mode: " + it.text);
  }
  // The first session: its diff, its thought (collapsed), its Markdown.
  await page.click(`#session-list .session-item[data-sid="${a}"]`);
  await page.waitForFunction(() => document.querySelector("#transcripts .diff .diff-line.add"), { timeout: 10000 });
  assert.equal(await page.$eval("#transcripts details.thought", (n) => n.open), false);
  assert.equal(await page.$eval("#transcripts .msg-agent a", (n) => n.href), "https://agentclientprotocol.com/");
  assert.equal(await page.$eval("#transcripts .msg-agent strong", (n) => n.textContent), "notes.md");
  assert.ok(await page.$("#transcripts .msg-agent pre code"));
  await page.$$eval("#transcripts details.tool", (ns) => ns.forEach((n) => (n.open = true)));
  await shot(page, "session");
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
  await shot(page, "session-dark");
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
  assert.deepEqual(page.seen.foreign, []);
  assert.deepEqual(page.seen.errors, []);
});

const SLOW = "Streaming slowly, chunk by chunk. ";
const slowScript = (repeat) => ({
  chunkSize: 6,
  delayMs: 25,
  responses: [reply({ type: "text", text: SLOW, repeat }, text("THE END."))],
  onExhausted: "repeat-last",
});

test("a second tab opens a running session, follows it live, and a reload mid-turn gets it all back", async (t) => {
  const d = await startDaemon(t, slowScript(80));
  const full = SLOW.repeat(80) + "THE END.";
  const a = await openPage(t);
  await a.goto(d.base);
  const sid = await newSession(a, d.project);
  await prompt(a, "Tell me a long story");
  await a.waitForFunction(() => document.querySelector("#transcripts .msg-agent"), { timeout: 10000 });

  const b = await openPage(t);
  await b.goto(d.base);
  await connected(b);
  // The list says it runs; opening it attaches while it runs.
  const item = `#session-list .session-item[data-sid="${sid}"]`;
  await b.waitForFunction((sel) => document.querySelector(sel)?.dataset.state === "running", { timeout: 10000 }, item);
  await shot(b, "list");
  await b.click(item);
  await b.waitForFunction(() => document.querySelector("#transcripts .msg-agent")?.textContent.length > 0, { timeout: 10000 });
  const early = (await agentText(b)).length;
  assert.ok(early < full.length, "the turn had already ended when the second tab opened it");
  await b.waitForFunction((n) => document.querySelector("#transcripts .msg-agent").textContent.length > n, { timeout: 10000 }, early);
  // The turn runs on tab a's connection; tab b may cancel it, not prompt over it.
  await b.waitForFunction(() => !document.getElementById("cancel").disabled && document.getElementById("send").disabled, { timeout: 10000 });
  assert.equal(await b.$eval("#session-title", (n) => n.textContent), "Tell me a long story");
  await shot(b, "running");

  // Reload mid-turn: the page comes back to the same session, replays and goes on live.
  await b.reload();
  await connected(b);
  await b.waitForFunction(() => document.querySelector("#transcripts .msg-agent"), { timeout: 10000 });
  assert.ok((await agentText(b)).length < full.length, "the turn ended before the reload: make the script slower");
  await b.waitForFunction((want) => document.querySelector("#transcripts .msg-agent")?.textContent.includes(want), { timeout: 30000 }, "THE END.");
  assert.equal(await agentText(b), full, "after the reload: the whole answer, once");
  await a.waitForFunction(() => document.body.textContent.includes("turn ended: end_turn"), { timeout: 30000 });
  assert.equal(await agentText(a), full);
  assert.equal(await b.$eval("#transcripts .msg-user", (n) => n.textContent), "Tell me a long story");
});

test("Enter sends a prompt, Shift+Enter makes a new line, and Cancel stops the turn", async (t) => {
  const d = await startDaemon(t, slowScript(200));
  const page = await openPage(t);
  await page.goto(d.base);
  await newSession(page, d.project);
  await page.focus("#prompt");
  await page.keyboard.type("line one");
  await page.keyboard.down("Shift");
  await page.keyboard.press("Enter");
  await page.keyboard.up("Shift");
  await page.keyboard.type("line two");
  assert.equal(await page.$eval("#prompt", (e) => e.value), "line one\nline two");
  await page.keyboard.press("Enter");
  assert.equal(await page.$eval("#prompt", (e) => e.value), "");
  await page.waitForFunction(() => document.querySelector("#transcripts .msg-agent"), { timeout: 10000 });
  assert.equal(await page.$eval("#cancel", (e) => e.disabled), false);
  await page.click("#cancel");
  await page.waitForFunction(() => document.body.textContent.includes("turn ended: cancelled"), { timeout: 15000 });
  assert.ok(!(await agentText(page)).includes("THE END."));
  assert.equal(await page.$eval("#cancel", (e) => e.disabled), true);
  assert.equal(await page.$eval("#transcripts .msg-user", (n) => n.textContent), "line one\nline two");
});

test("a permission question shows its options as buttons, and the answer lets the tool run", async (t) => {
  const d = await startDaemon(t, {
    responses: [
      reply(text("I will create notes.txt."), { type: "tool_call", name: "write", input: { path: "notes.txt", content: "written by corvid\n" } }),
      reply(text("Done: notes.txt now exists.")),
    ],
  }, { yolo: false });
  const page = await openPage(t);
  await page.goto(d.base);
  const sid = await newSession(page, d.project);
  await prompt(page, "Create notes.txt");
  await page.waitForSelector("#transcripts .question button.option", { timeout: 15000 });
  const options = await page.$$eval("#transcripts .question button.option", (ns) => ns.map((n) => ({ text: n.textContent, kind: n.dataset.kind })));
  assert.ok(options.length >= 2, JSON.stringify(options));
  await page.waitForFunction((sid) => document.querySelector(`#session-list .session-item[data-sid="${sid}"]`)?.dataset.state === "waiting", { timeout: 10000 }, sid);
  assert.equal(await page.$eval("#session-list .session-item", (n) => n.dataset.state), "waiting", "waiting sessions come first");
  await shot(page, "question");
  // Keyboard: the first option has the focus; pick allow_once by Tab and Enter.
  const allow = options.findIndex((o) => o.kind === "allow_once");
  assert.ok(allow >= 0, JSON.stringify(options));
  await page.$$eval("#transcripts .question button.option", (ns, i) => ns[i].focus(), allow);
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.body.textContent.includes("turn ended: end_turn"), { timeout: 15000 });
  assert.equal(readFileSync(join(d.project, "notes.txt"), "utf8"), "written by corvid\n");
  assert.ok((await page.$eval("#transcripts .question .outcome", (n) => n.textContent)).startsWith("You answered:"));
  assert.equal(await page.$$eval("#transcripts .question button.option:not(:disabled)", (ns) => ns.length), 0);
  assert.ok((await agentText(page)).includes("Done: notes.txt now exists."));
});

test("HTML, scripts and javascript: links from a model, a tool title and a file name run nothing", async (t) => {
  const payloads = [
    `<img src=x onerror="window.__pwned='img'">`,
    `<script>window.__pwned='script'</script>`,
    `[click me](javascript:window.__pwned='link')`,
    `<a href="javascript:window.__pwned='a'">a</a>`,
    `<svg onload="window.__pwned='svg'"></svg>`,
  ].join("\n\n");
  const evilName = `<img src=x onerror=window.__pwned=1>.txt`;
  const d = await startDaemon(t, {
    responses: [
      reply({ type: "thinking", text: payloads },
        { type: "tool_call", name: "write", input: { path: evilName, content: payloads + "\n" } }),
      reply(text(payloads + "\n\n**bold** [ok](https://example.com/)")),
    ],
  });
  const page = await openPage(t);
  await page.goto(d.base);
  await newSession(page, d.project);
  await prompt(page, payloads);
  await page.waitForFunction(() => document.body.textContent.includes("turn ended: end_turn"), { timeout: 15000 });
  await page.$$eval("#transcripts details", (ns) => ns.forEach((n) => (n.open = true)));
  await new Promise((r) => setTimeout(r, 300));
  // Try the links that are there.
  for (const a of await page.$$("#transcripts a")) await a.click({ button: "middle" }).catch(() => {});
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(page.seen.dialogs, []);
  const found = await page.evaluate(() => ({
    tags: document.querySelectorAll("#transcripts img, #transcripts script, #transcripts svg, #transcripts iframe").length,
    hrefs: [...document.querySelectorAll("#transcripts a")].map((a) => a.href),
    text: document.getElementById("transcripts").textContent,
    title: [...document.querySelectorAll("#transcripts .tool-title")].map((n) => n.textContent).join("|"),
  }));
  assert.equal(found.tags, 0);
  assert.deepEqual(found.hrefs, ["https://example.com/"]);
  assert.ok(found.text.includes(`<img src=x onerror="window.__pwned='img'">`), "the payload shows as text");
  assert.ok(found.text.includes("<script>window.__pwned='script'</script>"));
  assert.ok(found.title.includes(evilName), found.title);
  assert.ok(existsSync(join(d.project, evilName)));
  await shot(page, "xss");
  assert.deepEqual(page.seen.foreign, []);
});

test("with a token, the one-time login link logs the browser in; the code then fails and never shows", async (t) => {
  const token = "0123456789abcdef0123456789abcdef";
  const d = await startDaemon(t, { responses: [reply(text("hi"))] }, { token });
  const page = await openPage(t);
  const denied = await page.goto(d.base);
  assert.equal(denied.status(), 401);
  await page.goto(d.login);
  assert.equal(page.url(), d.base, "the login redirects to /, dropping the code");
  await connected(page);
  const cookies = await page.cookies();
  assert.equal(cookies.length, 1);
  assert.ok(cookies[0].httpOnly && cookies[0].sameSite === "Strict", JSON.stringify(cookies));
  assert.equal(await page.evaluate(() => document.cookie), "");
  const html = await page.content();
  assert.ok(!html.includes(token) && !html.includes(new URL(d.login).searchParams.get("once")));
  await newSession(page, d.project);
  await prompt(page, "hello");
  await page.waitForFunction(() => document.body.textContent.includes("turn ended: end_turn"), { timeout: 15000 });
  const other = await browser.createBrowserContext();
  t.after(() => other.close());
  const p2 = await other.newPage();
  const again = await p2.goto(d.login);
  assert.equal(again.status(), 401, "a login link works once");
  // Another browser logs in with the token through the form / shows.
  await p2.goto(d.base);
  await p2.setViewport({ width: 900, height: 420 });
  await shot(p2, "login");
  await p2.type("#token", "wrong-token-0123456789");
  await Promise.all([p2.waitForNavigation(), p2.click("form button")]);
  assert.ok(await p2.evaluate(() => document.body.textContent.includes("wrong token")), await p2.content());
  await p2.goto(d.base);
  await p2.type("#token", token);
  await Promise.all([p2.waitForNavigation(), p2.click("form button")]);
  assert.equal(p2.url(), d.base);
  await connected(p2);
});

// Whether serve puts a question to every attached client is issue 30's to
// build; until docs/serve.md stops listing it as not built, the race below
// cannot happen and the test says so instead of failing.
const fanOutBuilt = !readFileSync(new URL("../../docs/serve.md", import.meta.url), "utf8")
  .includes("**Questions to every attached client.**");

test("two tabs race to answer one question: exactly one wins and both show the outcome", { skip: fanOutBuilt ? false : "serve does not yet put a question to every attached client (docs/serve.md, Not built yet)" }, async (t) => {
  const d = await startDaemon(t, {
    responses: [
      reply({ type: "tool_call", name: "write", input: { path: "race.txt", content: "raced\n" } }),
      reply(text("Written.")),
    ],
  }, { yolo: false });
  const a = await openPage(t);
  await a.goto(d.base);
  const sid = await newSession(a, d.project);
  const b = await openPage(t);
  await b.goto(d.base + "#/s/" + encodeURIComponent(sid));
  await connected(b);
  await b.waitForFunction(() => document.getElementById("session").hidden === false, { timeout: 10000 });
  await prompt(a, "Write race.txt");
  const q = "#transcripts .question button.option";
  await a.waitForSelector(q, { timeout: 15000 });
  await b.waitForSelector(q, { timeout: 15000 });
  // Both click at once: one allows, the other rejects.
  await Promise.all([
    a.$$eval(q, (ns) => ns.find((n) => n.dataset.kind === "allow_once").click()),
    b.$$eval(q, (ns) => ns.find((n) => n.dataset.kind === "reject_once").click()),
  ]);
  for (const p of [a, b]) {
    await p.waitForFunction(() => document.querySelector("#transcripts .question .outcome")?.textContent !== "", { timeout: 15000 });
  }
  await a.waitForFunction(() => document.body.textContent.includes("turn ended:"), { timeout: 15000 });
  const written = existsSync(join(d.project, "race.txt"));
  const outA = await a.$eval("#transcripts .question .outcome", (n) => n.textContent);
  const outB = await b.$eval("#transcripts .question .outcome", (n) => n.textContent);
  // The tool ran exactly when the allow won; each tab says what it did.
  assert.match(outA, /^You answered: Allow once$|^Answered/);
  assert.match(outB, /^You answered: Reject$|^Answered/);
  const status = await b.waitForFunction(() => document.querySelector("#transcripts .tool-status")?.textContent.match(/completed|failed/), { timeout: 15000 }).then((h) => h.jsonValue());
  assert.equal(written, status[0] === "completed", `file written ${written}, tool ${status[0]}`);
});

test("opening a stored session from its address keeps the session's cwd", async (t) => {
  const d = await startDaemon(t, { responses: [reply(text("Stored answer."))] });
  const a = await openPage(t);
  await a.goto(d.base);
  const sid = await newSession(a, d.project);
  await prompt(a, "remember me");
  await a.waitForFunction(() => document.body.textContent.includes("turn ended: end_turn"), { timeout: 15000 });
  await a.close();
  const b = await openPage(t);
  await b.goto(d.base + "#/s/" + encodeURIComponent(sid));
  await b.waitForFunction(() => document.querySelector("#transcripts .msg-agent")?.textContent.includes("Stored answer."), { timeout: 15000 });
  assert.equal(await b.$eval("#session-cwd", (n) => n.textContent), d.project);
  await b.reload();
  await b.waitForFunction((sid, cwd) => document.querySelector(`#session-list .session-item[data-sid="${sid}"]`)?.textContent.includes(cwd), { timeout: 15000 }, sid, d.project);
  assert.equal(await b.$eval("#session-cwd", (n) => n.textContent), d.project);
});
