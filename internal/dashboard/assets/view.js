// One session's transcript: session/update notifications become DOM
// nodes. Every text from the agent, a model, a tool or a file name is set
// with textContent (or through md.js, which does the same).
import { render } from "./md.js";

const el = (tag, cls, text) => {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  if (text !== undefined) n.textContent = text;
  return n;
};

const str = (v) => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v, null, 2));

export class Transcript {
  constructor(onChange) {
    this.root = el("ol", "transcript");
    this.tools = new Map(); // toolCallId -> {li, ...}
    this.questions = new Map(); // request id -> {li, ...}
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
    t.body.replaceChildren(...body);
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
    this.questions.set(String(id), { li, opts, out });
    this.add(li);
    const first = opts.querySelector("button");
    if (first) first.focus({ preventScroll: true });
  }

  pendingQuestions() {
    let n = 0;
    for (const q of this.questions.values()) if (!q.done) n++;
    return n;
  }

  // settle closes a question with the text saying how it ended.
  settle(id, text) {
    const q = this.questions.get(String(id));
    if (!q || q.done) return;
    q.done = true;
    for (const b of q.opts.querySelectorAll("button")) b.disabled = true;
    q.out.textContent = text;
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
