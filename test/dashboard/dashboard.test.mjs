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
