// One session's transcript: session/update notifications become DOM
// nodes. Every text from the agent, a model, a tool or a file name is set
// with textContent (or through md.js, which does the same).
import { render } from "./md.js";
import { formFields } from "./form.js";

const el = (tag, cls, text) => {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  if (text !== undefined) n.textContent = text;
  return n;
};

const str = (v) => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v, null, 2));

export class Transcript {
  constructor(onChange, root) {
    this.root = root || el("ol", "transcript");
    this.tools = new Map(); // toolCallId -> {li, ...}
    this.questions = new Map(); // request id -> {li, ...}
    this.members = new Map(); // member key -> {t: Transcript, status, li}
    this.cur = null; // {kind, text, node}
    this.usage = null;
    this.onChange = onChange || (() => {});
  }

  add(li) {
    this.root.append(li);
    this.onChange();
    return li;
  }

  // chunk appends streamed text to the open block of its kind, or opens one.
  chunk(kind, content) {
    if (!content || content.type !== "text") {
      if (content) this.cur = null, this.add(el("li", "muted", `[${content.type} content]`));
      return;
    }
    if (!this.cur || this.cur.kind !== kind) {
      let li, node;
      if (kind === "user") {
        li = el("li", "msg-user");
        node = li;
        if (!this.firstUser) this.firstUser = li;
      } else if (kind === "thought") {
        li = el("li");
        const d = el("details", "thought");
        d.append(el("summary", "", "Thought"));
        node = el("div");
        d.append(node);
        li.append(d);
      } else {
        li = el("li", "msg-agent");
        node = li;
      }
      this.cur = { kind, text: "", node };
      this.add(li);
    }
    this.cur.text += content.text;
    if (kind === "agent") {
      this.cur.node.replaceChildren(render(this.cur.text));
    } else {
      this.cur.node.textContent = this.cur.text;
    }
    this.onChange();
  }

  userText(text) {
    this.cur = null;
    this.chunk("user", { type: "text", text });
    this.cur = null;
  }

  update(u) {
    const m = memberOf(u._meta);
    if (m && !this.member) return this.memberFor(m).t.update(u);
    if (u.sessionUpdate === "session_info_update" && u._meta && u._meta["codebuddy.ai/teamUpdate"]) {
      return this.team(u._meta["codebuddy.ai/teamUpdate"]);
    }
    switch (u.sessionUpdate) {
      case "user_message_chunk":
        return this.chunk("user", u.content);
      case "agent_message_chunk":
        return this.chunk("agent", u.content);
      case "agent_thought_chunk":
        return this.chunk("thought", u.content);
      case "tool_call":
      case "tool_call_update":
        this.cur = null;
        return this.tool(u);
      case "plan":
        this.cur = null;
        return this.plan(u.entries || []);
      case "usage_update":
        this.usage = u;
        return this.onChange();
    }
  }

  tool(u) {
    let t = this.tools.get(u.toolCallId);
    if (!t) {
      const li = el("li");
      const d = el("details", "tool");
      const sum = el("summary");
      const kind = el("span", "tool-kind");
      const title = el("span", "tool-title");
      const status = el("span", "tool-status");
      sum.append(kind, title, status);
      const body = el("div", "tool-body");
      d.append(sum, body);
      li.append(d);
      t = { li, d, kind, title, status, body, data: {} };
      this.tools.set(u.toolCallId, t);
      this.add(li);
    }
    for (const k of ["title", "kind", "status", "locations", "rawInput", "rawOutput", "content"]) {
      if (u[k] !== undefined && u[k] !== null) t.data[k] = u[k];
    }
    const d = t.data;
    t.kind.textContent = d.kind || "tool";
    t.title.textContent = d.title || u.toolCallId;
    t.status.textContent = d.status || "pending";
    t.status.className = "tool-status " + (d.status || "pending");
    const body = [];
    if (Array.isArray(d.locations) && d.locations.length) {
      const ul = el("ul", "locations");
      for (const loc of d.locations) ul.append(el("li", "", loc.line ? `${loc.path}:${loc.line}` : str(loc.path)));
      body.push(ul);
    }
    if (d.rawInput !== undefined) {
      body.push(el("div", "muted", "Input"));
      body.push(el("pre", "raw-input", str(d.rawInput)));
    }
    for (const c of d.content || []) body.push(this.toolContent(c));
    if (d.rawOutput !== undefined && !(d.content || []).length) {
      body.push(el("div", "muted", "Output"));
      body.push(el("pre", "raw-output", str(d.rawOutput)));
    }
    const by = u._meta && u._meta["corvid.dev/answeredBy"];
    if (by) t.answeredBy = answeredBy(by);
    if (t.answeredBy) body.unshift(el("p", "answered-by", t.answeredBy));
    t.body.replaceChildren(...body);
    if (by) {
      for (const q of this.questions.values()) {
        if (q.toolCallId === u.toolCallId) this.settle(q.id, t.answeredBy, true);
      }
    }
    this.onChange();
  }

  toolContent(c) {
    if (c.type === "diff") return diff(c.path, c.oldText, c.newText);
    if (c.type === "terminal") return el("pre", "terminal", `[terminal ${c.terminalId}]`);
    if (c.type === "content" && c.content && c.content.type === "text") return el("pre", "tool-text", c.content.text);
    return el("pre", "muted", str(c));
  }

  plan(entries) {
    if (!this.planLi) {
      this.planLi = el("li");
      this.planLi.append(el("div", "muted", "Plan"));
      this.planList = el("ol", "plan");
      this.planLi.append(this.planList);
      this.add(this.planLi);
    } else {
      this.root.append(this.planLi); // the latest plan moves to the end
    }
    this.planList.replaceChildren(...entries.map((e) => {
      const li = el("li", e.status || "", e.content);
      li.title = `${e.status || ""} ${e.priority || ""}`.trim();
      return li;
    }));
    this.onChange();
  }

  // question shows a permission request; answer(optionId) replies.
  question(id, params, answer) {
    const m = memberOf(params.toolCall && params.toolCall._meta);
    if (m && !this.member) return this.memberFor(m).t.question(id, params, answer);
    this.cur = null;
    const li = el("li", "question");
    li.setAttribute("role", "group");
    const tc = params.toolCall || {};
    const head = el("div", "", "Permission: ");
    head.append(el("strong", "q-title", tc.title || tc.toolCallId || "a tool call"));
    li.append(head);
    if (tc.rawInput !== undefined) li.append(el("pre", "raw-input", str(tc.rawInput)));
    const opts = el("div", "options");
    for (const o of params.options || []) {
      const b = el("button", "option", o.name || o.optionId);
      b.type = "button";
      b.dataset.kind = o.kind || "";
      b.addEventListener("click", () => {
        this.settle(id, `You answered: ${o.name || o.optionId}`);
        answer(o.optionId);
      });
      opts.append(b);
    }
    li.append(opts);
    const out = el("p", "outcome");
    out.setAttribute("role", "status");
    li.append(out);
    this.questions.set(String(id), { id: String(id), li, opts, out, toolCallId: tc.toolCallId });
    this.add(li);
    const first = opts.querySelector("button");
    if (first) first.focus({ preventScroll: true });
  }

  // elicit shows an elicitation/create form request; reply(result)
  // answers it ({action, content?}).
  elicit(id, params, reply) {
    this.cur = null;
    const li = el("li", "question elicitation");
    const form = el("form", "elicit-form");
    form.noValidate = false;
    const box = el("fieldset");
    box.append(el("legend", "", params.message || "The agent asks"));
    const fields = formFields(params.requestedSchema || {}, String(id));
    for (const f of fields) box.append(f.node);
    const opts = el("div", "options");
    const submit = el("button", "option", "Submit");
    submit.type = "submit";
    submit.dataset.kind = "accept";
    const decline = el("button", "option", "Decline");
    decline.type = "button";
    decline.dataset.kind = "decline";
    const cancel = el("button", "option", "Cancel");
    cancel.type = "button";
    cancel.dataset.kind = "cancel";
    opts.append(submit, decline, cancel);
    box.append(opts);
    form.append(box);
    const out = el("p", "outcome");
    out.setAttribute("role", "status");
    li.append(form, out);
    const q = { id: String(id), li, opts: form, out, toolCallId: params.toolCallId };
    this.questions.set(String(id), q);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      if (q.done) return;
      const content = {};
      for (const f of fields) {
        const v = f.value();
        if (v !== undefined) content[f.name] = v;
      }
      this.settle(id, "You submitted the form.");
      reply({ action: "accept", content });
    });
    decline.addEventListener("click", () => {
      this.settle(id, "You declined.");
      reply({ action: "decline" });
    });
    cancel.addEventListener("click", () => {
      this.settle(id, "You cancelled.");
      reply({ action: "cancel" });
    });
    this.add(li);
    const first = form.querySelector("input, select, textarea, button");
    if (first) first.focus({ preventScroll: true });
  }

  pendingQuestions() {
    let n = 0;
    for (const q of this.questions.values()) if (!q.done) n++;
    for (const m of this.members.values()) n += m.t.pendingQuestions();
    return n;
  }

  // settle closes a question with the text saying how it ended; again
  // replaces the text of one already closed (who answered, learnt later).
  settle(id, text, again) {
    for (const m of this.members.values()) m.t.settle(id, text, again);
    const q = this.questions.get(String(id));
    if (!q || (q.done && !again)) return;
    if (q.done && again && q.mine) return; // this page answered: it says so
    if (!q.done && text.startsWith("You ")) q.mine = true;
    q.done = true;
    for (const b of q.opts.querySelectorAll("button, input, select, textarea")) b.disabled = true;
    q.out.textContent = text;
    this.onChange();
  }

  // memberFor is the timeline of a sub-agent, team member or worker,
  // made the first time one of its updates comes.
  memberFor(m) {
    let g = this.members.get(m.key);
    if (g) return g;
    const li = el("li", "member");
    li.dataset.member = m.name;
    const d = el("details", "member-box");
    d.open = true;
    const sum = el("summary");
    const name = el("span", "member-name", m.name);
    const kind = el("span", "tool-kind", m.kind);
    const status = el("span", "member-status");
    sum.append(kind, name, status);
    const ol = el("ol", "transcript member-log");
    d.append(sum, ol);
    li.append(d);
    const t = new Transcript(this.onChange, ol);
    t.member = m;
    g = { t, li, status };
    this.members.set(m.key, g);
    // Under the tool call that started it, when that call is shown.
    const parent = m.parentToolCallId && this.tools.get(m.parentToolCallId);
    if (parent) parent.li.after(li), this.onChange();
    else this.add(li);
    if (this.memberStatus && this.memberStatus.has(m.name)) status.textContent = this.memberStatus.get(m.name);
    return g;
  }

  // team reads a team update (codebuddy.ai/teamUpdate): each member's status.
  team(p) {
    if (!p || typeof p !== "object") return;
    this.memberStatus = this.memberStatus || new Map();
    const list = Array.isArray(p.members) ? p.members : p.member ? [p.member] : [];
    for (const m of list) {
      if (!m || typeof m.name !== "string") continue;
      this.memberStatus.set(m.name, String(m.status || ""));
      for (const g of this.members.values()) {
        if (g.t.member.name === m.name) g.status.textContent = String(m.status || "");
      }
    }
    this.onChange();
  }

  stop(text, isError) {
    this.cur = null;
    this.add(el("li", isError ? "stop error" : "stop", text));
  }
}

// diff renders old and new text as a line diff (an LCS; a long file falls
// back to all old lines out, all new lines in).
export function diff(path, oldText, newText) {
  const box = el("div", "diff");
  box.append(el("div", "diff-path", path || ""));
  const a = oldText ? oldText.split("\n") : [];
  const b = (newText || "").split("\n");
  for (const [op, line] of lineDiff(a, b)) {
    box.append(el("div", "diff-line " + (op === "+" ? "add" : op === "-" ? "del" : "ctx"), op + " " + line));
  }
  return box;
}

function lineDiff(a, b) {
  if (a.length * b.length > 250000) return [...a.map((l) => ["-", l]), ...b.map((l) => ["+", l])];
  const n = a.length, m = b.length;
  const L = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) L[i][j] = a[i] === b[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) out.push([" ", a[i++]]), j++;
    else if (L[i + 1][j] >= L[i][j + 1]) out.push(["-", a[i++]]);
    else out.push(["+", b[j++]]);
  }
  while (i < n) out.push(["-", a[i++]]);
  while (j < m) out.push(["+", b[j++]]);
  return out;
}

// memberOf names the member an update comes from: corvid's sub-agent tag
// ({id, name, parentToolCallId, background}) or CodeBuddy's member name.
function memberOf(meta) {
  if (!meta) return null;
  const sub = meta["corvid.dev/subagent"];
  if (sub && typeof sub === "object") {
    const name = String(sub.name || sub.id || "sub-agent");
    return { key: "sub:" + String(sub.id || name), name, kind: sub.background ? "worker" : "sub-agent", parentToolCallId: sub.parentToolCallId };
  }
  const team = meta["codebuddy.ai/memberEvent"];
  if (typeof team === "string" && team) return { key: "team:" + team, name: team, kind: "member" };
  return null;
}

// answeredBy says who answered, from the answering client's ACP clientInfo.
export function answeredBy(by) {
  if (typeof by === "string") return "Answered by " + by;
  if (!by || typeof by !== "object") return "Answered elsewhere";
  const who = String(by.title || by.name || "another client");
  return "Answered by " + who + (by.version ? " " + String(by.version) : "");
}
