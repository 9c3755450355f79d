// A small Markdown renderer that builds DOM nodes and sets only
// textContent: model text is never parsed as HTML, and a link is a
// link only when its URL is http: or https: (anything else stays text).
// It covers what agents write: paragraphs, headings, fenced code, lists,
// block quotes, inline code, bold, italic and links.

const el = (tag, cls) => {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  return n;
};

// safeURL returns the URL when it is absolute http(s), else null.
export function safeURL(s) {
  try {
    const u = new URL(s);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
  } catch {
    return null;
  }
}

// inline appends the inline Markdown of text to parent.
function inline(parent, text) {
  const re = /(`+)([\s\S]*?)\1|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]*)\]\(([^)\s]+)\)/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) parent.append(document.createTextNode(text.slice(last, m.index)));
    last = m.index + m[0].length;
    if (m[1]) {
      const c = el("code");
      c.textContent = m[2];
      parent.append(c);
    } else if (m[3] !== undefined || m[4] !== undefined) {
      const b = el("strong");
      inline(b, m[3] ?? m[4]);
      parent.append(b);
    } else if (m[5] !== undefined || m[6] !== undefined) {
      const i = el("em");
      inline(i, m[5] ?? m[6]);
      parent.append(i);
    } else {
      const href = safeURL(m[8]);
      if (href) {
        const a = el("a");
        a.href = href;
        a.rel = "noopener noreferrer nofollow";
        a.target = "_blank";
        a.textContent = m[7] || href;
        parent.append(a);
      } else {
        parent.append(document.createTextNode(m[0]));
      }
    }
  }
  if (last < text.length) parent.append(document.createTextNode(text.slice(last)));
}

// render returns a fragment with the Markdown of src.
export function render(src) {
  const out = document.createDocumentFragment();
  const lines = src.replace(/\r\n?/g, "\n").split("\n");
  let para = [];
  const flush = () => {
    if (para.length) {
      const p = el("p");
      inline(p, para.join("\n"));
      out.append(p);
      para = [];
    }
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^\s*(```+|~~~+)\s*([\w+-]*)/);
    if (fence) {
      flush();
      const body = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) body.push(lines[i]);
      const pre = el("pre");
      const code = el("code");
      if (fence[2]) code.dataset.lang = fence[2];
      code.textContent = body.join("\n");
      pre.append(code);
      out.append(pre);
      continue;
    }
    const h = line.match(/^(#{1,6})\s+(.*)$/);
    if (h) {
      flush();
      // Headings inside a transcript stay small: h3 to h6.
      const n = el("h" + Math.min(6, h[1].length + 2));
      inline(n, h[2]);
      out.append(n);
      continue;
    }
    const li = line.match(/^\s*([-*+]|\d+[.)])\s+(.*)$/);
    if (li) {
      flush();
      const ordered = /\d/.test(li[1]);
      const list = el(ordered ? "ol" : "ul");
      for (; i < lines.length; i++) {
        const m = lines[i].match(/^\s*([-*+]|\d+[.)])\s+(.*)$/);
        if (!m) break;
        const item = el("li");
        inline(item, m[2]);
        list.append(item);
      }
      i--;
      out.append(list);
      continue;
    }
    if (/^\s*>/.test(line)) {
      flush();
      const q = [];
      for (; i < lines.length && /^\s*>/.test(lines[i]); i++) q.push(lines[i].replace(/^\s*>\s?/, ""));
      i--;
      const bq = el("blockquote");
      bq.append(render(q.join("\n")));
      out.append(bq);
      continue;
    }
    if (line.trim() === "") {
      flush();
      continue;
    }
    para.push(line);
  }
  flush();
  return out;
}
