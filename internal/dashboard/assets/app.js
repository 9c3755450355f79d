// The dashboard: an ACP client of the daemon (rpc.js) that lists its
// sessions (session/list, polled: the daemon sends no list-change
// notification), attaches to one with session/load (replay, then live),
// answers its permission questions and prompts it.
import { Conn } from "./rpc.js";
import { Transcript } from "./view.js";

const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  if (text !== undefined) n.textContent = text;
  return n;
};

const S = {
  sessions: [], // from session/list
  loaded: new Map(), // sessionId -> {t: Transcript, config, modes, running, title}
  current: null,
  ready: false,
  listSig: "", // what the list shows now
};

const conn = new Conn({ onRequest, onNotify, onState });

function onState(open, why) {
  S.ready = open;
  $("conn").textContent = open ? "connected" : `disconnected: ${why}; retrying`;
  $("conn").classList.toggle("bad", !open);
  if (open) {
    const want = decodeURIComponent(location.hash.replace(/^#\/s\//, ""));
    // The list first: session/load needs the session's own cwd.
    refresh().then(() => {
      if (want && location.hash.startsWith("#/s/")) open_(want);
    });
  } else {
    S.loaded.clear();
    $("transcripts").replaceChildren();
    setTimeout(() => conn.open(), 1000);
  }
}

// The agent's requests: permission questions are shown; the dashboard
// offers no file system or terminal, so anything else is refused.
function onRequest(method, params, id) {
  if (method === "session/request_permission") {
    const s = S.loaded.get(params.sessionId);
    if (!s) return conn.fail(id, -32603, "session not open in this dashboard");
    s.t.question(id, params, (optionId) =>
      conn.respond(id, { outcome: { outcome: "selected", optionId } }));
    drawList();
    return;
  }
  conn.fail(id, -32601, "Method not found: " + method);
}

function onNotify(method, params) {
  if (method === "session/update") {
    const s = S.loaded.get(params.sessionId);
    if (!s) return;
    const u = params.update || {};
    if (u.sessionUpdate === "session_info_update" && u.title) s.title = u.title;
    if (u.sessionUpdate === "current_mode_update" && s.modes) s.modes.currentModeId = u.currentModeId;
    if (u.sessionUpdate === "config_option_update" && u.configOptions) s.config = u.configOptions;
    s.t.update(u);
    if (params.sessionId === S.current) drawHead();
    return;
  }
  if (method === "$/cancel_request") {
    // The agent withdrew a question: another client answered it first,
    // or the turn ended.
    const by = params._meta && params._meta["corvid.dev/answeredBy"];
    for (const s of S.loaded.values()) {
      s.t.settle(params.requestId, by ? `Answered by ${str(by)}` : "Answered elsewhere or withdrawn");
    }
    drawList();
  }
}

const str = (v) => (typeof v === "string" ? v : JSON.stringify(v));

async function refresh() {
  if (!S.ready) return;
  try {
    let all = [], cursor;
    do {
      const r = await conn.call("session/list", cursor ? { cursor } : {});
      all = all.concat(r.sessions || []);
      cursor = r.nextCursor;
    } while (cursor && all.length < 500);
    S.sessions = all;
    drawList();
    drawHead();
  } catch (e) {
    $("conn").textContent = "session/list failed: " + e.message;
  }
}

function stateOf(info) {
  const s = S.loaded.get(info.sessionId);
  if (s && s.t.pendingQuestions()) return "waiting";
  const m = info._meta || {};
  if (m["corvid.dev/waiting"]) return "waiting";
  if (m["corvid.dev/running"] || (s && s.running)) return "running";
  if (m["corvid.dev/interrupted"]) return "interrupted";
  return "idle";
}

function ago(iso) {
  if (!iso) return "";
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(iso).toLocaleDateString();
}

const rank = { waiting: 0, running: 1, interrupted: 2, idle: 3 };

function drawList() {
  const ul = $("session-list");
  const items = S.sessions.map((info) => ({ info, state: stateOf(info) }));
  items.sort((a, b) => rank[a.state] - rank[b.state] || (b.info.updatedAt || "").localeCompare(a.info.updatedAt || ""));
  // Rebuild only when something shown changed: a list redrawn every poll
  // would steal a screen reader's place.
  const sig = JSON.stringify([S.current, items.map(({ info, state }) => [info, state, ago(info.updatedAt), titleOf(info.title, info.sessionId)])]);
  if (sig === S.listSig) return;
  S.listSig = sig;
  const hadFocus = document.activeElement && document.activeElement.dataset.sid;
  ul.replaceChildren(...items.map(({ info, state }) => {
    const m = info._meta || {};
    const li = el("li");
    const b = el("button", "session-item");
    b.type = "button";
    b.dataset.sid = info.sessionId;
    b.dataset.state = state;
    if (info.sessionId === S.current) b.setAttribute("aria-current", "true");
    const title = el("span", "s-title");
    title.append(el("span", "state " + state, state));
    title.append(document.createTextNode(titleOf(info.title, info.sessionId)));
    b.append(title);
    b.append(el("span", "s-meta", info.cwd));
    const bits = [];
    if (m["corvid.dev/mode"]) bits.push(str(m["corvid.dev/mode"]));
    if (m["corvid.dev/model"]) bits.push(str(m["corvid.dev/model"]));
    if (bits.length) b.append(el("span", "s-meta", bits.join(" · ")));
    const more = [ago(info.updatedAt)];
    if (m["corvid.dev/attached"] !== undefined) more.push(`${m["corvid.dev/attached"]} attached`);
    if (m["corvid.dev/cost"]) more.push(cost(m["corvid.dev/cost"]));
    b.append(el("span", "s-meta", more.filter(Boolean).join(" · ")));
    b.addEventListener("click", () => open_(info.sessionId));
    li.append(b);
    return li;
  }));
  if (hadFocus) {
    const again = ul.querySelector(`button[data-sid="${CSS.escape(hadFocus)}"]`);
    if (again) again.focus();
  }
  if (!$("new-cwd").value && S.sessions.length) $("new-cwd").value = S.sessions[0].cwd || "";
}

// titleOf: the session's title, else its first prompt as this page saw
// it, else its id.
function titleOf(title, sid) {
  if (title) return title;
  const s = S.loaded.get(sid);
  const first = s && s.t.firstUser && s.t.firstUser.textContent.trim();
  return first ? first.split("\n")[0].slice(0, 120) : "(untitled) " + sid;
}

function cost(c) {
  if (!c || typeof c.amount !== "number") return "";
  return `${c.amount.toFixed(c.amount < 1 ? 4 : 2)} ${c.currency || ""}`.trim();
}

// open_ shows a session, attaching to it with session/load the first time.
async function open_(sid) {
  S.current = sid;
  history.replaceState(null, "", "#/s/" + encodeURIComponent(sid));
  $("empty").hidden = true;
  $("session").hidden = false;
  let s = S.loaded.get(sid);
  if (!s) {
    s = { t: new Transcript(() => changed(sid)), title: "", running: false };
    S.loaded.set(sid, s);
    const info = S.sessions.find((x) => x.sessionId === sid);
    if (!info) {
      // session/load would move it to whatever cwd it is given: never guess.
      s.t.stop("This session is not in the daemon's list.", true);
      S.loaded.delete(sid);
      $("transcripts").replaceChildren(s.t.root);
      return;
    }
    s.title = info.title;
    s.cwd = info.cwd;
    try {
      const r = await conn.call("session/load", { sessionId: sid, cwd: s.cwd, mcpServers: [] });
      s.config = r.configOptions;
      s.modes = r.modes;
    } catch (e) {
      s.t.stop("session/load failed: " + e.message, true);
    }
  }
  show(sid);
}

function show(sid) {
  const s = S.loaded.get(sid);
  if (!s || S.current !== sid) return;
  $("transcripts").replaceChildren(s.t.root);
  drawHead();
  drawList();
  scrollDown(true);
}

function changed(sid) {
  if (sid === S.current) scrollDown(false);
  drawList();
}

function scrollDown(force) {
  const box = $("transcripts");
  if (force || box.scrollHeight - box.scrollTop - box.clientHeight < 120) box.scrollTop = box.scrollHeight;
}

function drawHead() {
  const s = S.loaded.get(S.current);
  if (!s) return;
  const info = S.sessions.find((x) => x.sessionId === S.current);
  $("session-title").textContent = titleOf(s.title || (info && info.title), S.current);
  $("session-cwd").textContent = s.cwd || "";
  const u = s.t.usage;
  $("usage").textContent = u ? `context ${u.used} / ${u.size} tokens${u.cost ? " · cost " + cost(u.cost) : ""}` : "";
  // A turn another client started counts too: session/cancel reaches it.
  const busy = s.running || !!(info && info._meta && info._meta["corvid.dev/running"]);
  $("cancel").disabled = !busy;
  $("send").disabled = busy;
  $("turn-state").textContent = s.running ? "running…" : busy ? "running (started elsewhere)…" : "";
  drawControls(s);
}

// drawControls: the mode and model selectors from configOptions (or the
// older modes field when there are none).
function drawControls(s) {
  const box = $("controls");
  const key = JSON.stringify([s.config, s.modes]);
  if (box.dataset.key === key && box.dataset.sid === S.current) return;
  box.dataset.key = key;
  box.dataset.sid = S.current;
  const out = [];
  const opts = (s.config || []).filter((o) => o.type === "select");
  for (const o of opts) {
    const id = "cfg-" + o.id;
    const label = el("label", "", (o.name || o.id) + " ");
    label.htmlFor = id;
    const sel = el("select");
    sel.id = id;
    for (const v of flat(o.options)) {
      const op = el("option", "", v.name || v.value);
      op.value = v.value;
      op.selected = v.value === o.currentValue;
      sel.append(op);
    }
    sel.addEventListener("change", async () => {
      try {
        const r = await conn.call("session/set_config_option", { sessionId: S.current, configId: o.id, value: sel.value });
        if (r && r.configOptions) s.config = r.configOptions;
      } catch (e) {
        s.t.stop(`set ${o.id} failed: ${e.message}`, true);
      }
      drawHead();
    });
    label.append(sel);
    out.push(label);
  }
  if (!opts.length && s.modes && (s.modes.availableModes || []).length) {
    const label = el("label", "", "Mode ");
    const sel = el("select");
    for (const m of s.modes.availableModes) {
      const op = el("option", "", m.name || m.id);
      op.value = m.id;
      op.selected = m.id === s.modes.currentModeId;
      sel.append(op);
    }
    sel.addEventListener("change", () => conn.call("session/set_mode", { sessionId: S.current, modeId: sel.value }).catch(() => {}));
    label.append(sel);
    out.push(label);
  }
  box.replaceChildren(...out);
}

function flat(options) {
  const out = [];
  for (const o of options || []) {
    if (Array.isArray(o.options)) out.push(...o.options);
    else out.push(o);
  }
  return out;
}

async function send() {
  const sid = S.current;
  const s = S.loaded.get(sid);
  const text = $("prompt").value;
  if (!s || !text.trim() || s.running) return;
  $("prompt").value = "";
  s.t.userText(text);
  s.running = true;
  drawHead();
  try {
    const r = await conn.call("session/prompt", { sessionId: sid, prompt: [{ type: "text", text }] });
    s.t.stop("turn ended: " + (r.stopReason || "done"));
  } catch (e) {
    s.t.stop("prompt failed: " + e.message, true);
  }
  s.running = false;
  if (S.current === sid) drawHead();
  refresh();
}

async function newSession(cwd) {
  try {
    const r = await conn.call("session/new", { cwd, mcpServers: [] });
    const s = { t: new Transcript(() => changed(r.sessionId)), title: "", cwd, running: false, config: r.configOptions, modes: r.modes };
    S.loaded.set(r.sessionId, s);
    await refresh();
    open_(r.sessionId);
  } catch (e) {
    $("conn").textContent = "session/new failed: " + e.message;
  }
}

addEventListener("DOMContentLoaded", () => {
  $("prompt-form").addEventListener("submit", (e) => {
    e.preventDefault();
    send();
  });
  $("prompt").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });
  $("cancel").addEventListener("click", () => {
    if (S.current) conn.notify("session/cancel", { sessionId: S.current });
  });
  $("new-session").addEventListener("submit", (e) => {
    e.preventDefault();
    newSession($("new-cwd").value.trim());
  });
  conn.open();
  setInterval(refresh, 2000);
});
