// What the browser tests of the dashboard share: Chromium (one per test
// file), a `corvid serve` on the scripted model per test, a tab that
// records dialogs, errors and every request, and the page's usual moves.
// DASHBOARD_SCREENSHOTS=DIR also writes a PNG of each view into DIR.
import { before, after } from "node:test";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import puppeteer from "puppeteer-core";

export const BIN = process.env.CORVID_BIN;
if (!BIN) throw new Error("set CORVID_BIN to the corvid binary (run.sh does)");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SHOTS = process.env.DASHBOARD_SCREENSHOTS ? resolve(process.env.DASHBOARD_SCREENSHOTS) : "";

export let browser;
let profile;
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

export function tempDir(t) {
  const d = mkdtempSync(join(tmpdir(), "cdash-"));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

// startDaemon runs `corvid serve` on a loopback port with script and
// resolves with {base, login, project}: the page's URL, the login link
// (with a token) and a project directory to open sessions in.
// home reuses a home (and its store) of an earlier daemon; model and env
// run it on another model (e.g. a fake provider's) instead of script.
export async function startDaemon(t, script, { yolo = true, token = "", extra = [], home = "", model = "", env: more = {} } = {}) {
  home = home || tempDir(t);
  const project = join(home, "project");
  mkdirSync(project, { recursive: true });
  const file = join(home, "script.json");
  writeFileSync(file, JSON.stringify(script));
  const env = { ...process.env, HOME: home, CORVID_HOME: join(home, ".corvid"), CORVID_KEYRING: "off" };
  for (const k of Object.keys(env)) {
    if (k.startsWith("XDG_") || k.endsWith("_API_KEY") || k.endsWith("_BASE_URL")) delete env[k];
  }
  Object.assign(env, more);
  const args = ["serve", "-m", model || `script:${file}`, "--listen", "127.0.0.1:0"];
  if (yolo) args.push("--yolo");
  args.push(...extra);
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
    if (child.exitCode === null && child.signalCode === null) {
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
  return { base, login: link, project, home, child, stderr: () => stderr };
}

// openPage opens a tab that records dialogs, console errors, requests to
// any other host, and every URL it requests, WebSockets included.
export async function openPage(t) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 780 });
  const seen = { dialogs: [], foreign: [], errors: [], urls: [] };
  const cdp = await page.createCDPSession();
  await cdp.send("Network.enable");
  cdp.on("Network.requestWillBeSent", (e) => seen.urls.push(e.request.url));
  cdp.on("Network.webSocketCreated", (e) => seen.urls.push(e.url));
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

// notSameOrigin is the URLs page requested that are not base's origin
// (http: or ws: to the same host and port): none, for the page to pass.
export function notSameOrigin(page, base) {
  const host = new URL(base).host;
  return page.seen.urls.filter((u) => {
    const x = new URL(u);
    return x.host !== host || !["http:", "ws:"].includes(x.protocol);
  });
}

export async function connected(page) {
  await page.waitForFunction(() => document.getElementById("conn").textContent === "connected", { timeout: 15000 });
}

// newSession creates a session in cwd through the page's form and returns its id.
export async function newSession(page, cwd) {
  await connected(page);
  await page.$eval("#new-cwd", (e) => (e.value = ""));
  await page.type("#new-cwd", cwd);
  const before = await page.evaluate(() => location.hash);
  await page.click("#new-session button");
  // A second session: wait for its own address, not the first one's.
  await page.waitForFunction((before) => location.hash.startsWith("#/s/") && location.hash !== before, { timeout: 10000 }, before);
  return page.evaluate(() => decodeURIComponent(location.hash.slice(4)));
}

export async function prompt(page, text) {
  await page.focus("#prompt");
  await page.keyboard.type(text);
  await page.keyboard.press("Enter");
}

export const agentText = (page) => page.$$eval("#transcripts .msg-agent", (ns) => ns.map((n) => n.textContent).join("\n"));

export async function shot(page, name) {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, name + ".png") });
}

export const reply = (...parts) => ({ parts });
export const text = (t) => ({ type: "text", text: t });
