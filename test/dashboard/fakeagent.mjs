// A stand-in ACP agent for the page: it serves the dashboard's files from
// internal/dashboard/assets (with the daemon's CSP) and speaks JSON-RPC on
// a WebSocket at /acp, so a test can send the page exactly the frames of a
// contract (who answered a question, an elicitation of every field type)
// without waiting for the daemon to produce them. A minimal RFC 6455
// server: one text frame per message, no extensions.
import { createServer } from "node:http";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

const ASSETS = new URL("../../internal/dashboard/assets/", import.meta.url);
const CSP = "default-src 'self'; connect-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const TYPES = { html: "text/html; charset=utf-8", js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8" };

// startFakeAgent listens on 127.0.0.1 and resolves with {base, peer, close}:
// peer() waits for the page's connection and returns {send, call, notify,
// next}: next(method) waits for the page's message of method (a request,
// a notification or, with method "", an answer to one of ours).
export function startFakeAgent(t, { sessions = [] } = {}) {
  const waiting = [];
  const peers = [];
  const server = createServer((req, res) => {
    const name = req.url === "/" ? "index.html" : req.url.slice(1).split("?")[0];
    let body;
    try {
      if (name.includes("/") || name.includes("..")) throw new Error("no");
      body = readFileSync(new URL(name, ASSETS));
    } catch {
      res.writeHead(404, { "Content-Security-Policy": CSP });
      return res.end("not found");
    }
    res.writeHead(200, { "Content-Type": TYPES[name.split(".").pop()] || "application/octet-stream", "Content-Security-Policy": CSP });
    res.end(body);
  });
  server.on("upgrade", (req, socket) => {
    const accept = createHash("sha1").update(req.headers["sec-websocket-key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    const peer = wsPeer(socket, sessions);
    peers.push(peer);
    const w = waiting.shift();
    if (w) w(peer);
  });
  t.after(() => new Promise((r) => {
    for (const p of peers) p.socket.destroy();
    server.close(r);
  }));
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => {
    const base = `http://127.0.0.1:${server.address().port}/`;
    resolve({ base, peer: () => (peers.length ? Promise.resolve(peers[peers.length - 1]) : new Promise((r) => waiting.push(r))) });
  }));
}

function wsPeer(socket, sessions) {
  let buf = Buffer.alloc(0);
  const inbox = [];
  const wanted = [];
  let nextId = 1000;
  const send = (obj) => {
    const data = Buffer.from(JSON.stringify(obj));
    let head;
    if (data.length < 126) head = Buffer.from([0x81, data.length]);
    else if (data.length < 65536) head = Buffer.from([0x81, 126, data.length >> 8, data.length & 255]);
    else {
      head = Buffer.alloc(10);
      head[0] = 0x81;
      head[1] = 127;
      head.writeBigUInt64BE(BigInt(data.length), 2);
    }
    socket.write(Buffer.concat([head, data]));
  };
  const deliver = (msg) => {
    // The page's handshake and listing are answered here.
    if (msg.method === "initialize") {
      return send({ jsonrpc: "2.0", id: msg.id, result: { protocolVersion: 1, agentCapabilities: { loadSession: true, sessionCapabilities: { list: {} }, _meta: { "corvid.dev/sessionsChanged": true } }, agentInfo: { name: "fake", version: "0" } } });
    }
    if (msg.method === "session/list") return send({ jsonrpc: "2.0", id: msg.id, result: { sessions } });
    if (msg.method === "session/load") return send({ jsonrpc: "2.0", id: msg.id, result: {} });
    const i = wanted.findIndex((w) => w.ok(msg));
    if (i >= 0) return wanted.splice(i, 1)[0].resolve(msg);
    inbox.push(msg);
  };
  socket.on("data", (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      if (buf.length < 2) return;
      const op = buf[0] & 15;
      let len = buf[1] & 127, off = 2;
      if (len === 126) len = buf.readUInt16BE(2), off = 4;
      else if (len === 127) len = Number(buf.readBigUInt64BE(2)), off = 10;
      const masked = buf[1] & 128;
      if (buf.length < off + (masked ? 4 : 0) + len) return;
      const mask = masked ? buf.subarray(off, off + 4) : null;
      off += masked ? 4 : 0;
      const data = Buffer.from(buf.subarray(off, off + len));
      if (mask) for (let j = 0; j < data.length; j++) data[j] ^= mask[j & 3];
      buf = buf.subarray(off + len);
      if (op === 8) return socket.end();
      if (op === 9) socket.write(Buffer.concat([Buffer.from([0x8a, data.length]), data]));
      if (op === 1) deliver(JSON.parse(data.toString("utf8")));
    }
  });
  socket.on("error", () => {});
  const next = (method, timeout = 10000) => {
    const ok = (m) => (method === "" ? m.method === undefined : m.method === method);
    const i = inbox.findIndex(ok);
    if (i >= 0) return Promise.resolve(inbox.splice(i, 1)[0]);
    return new Promise((resolve, reject) => {
      const w = { ok, resolve: (m) => (clearTimeout(timer), resolve(m)) };
      const timer = setTimeout(() => {
        wanted.splice(wanted.indexOf(w), 1);
        reject(new Error(`the page sent no ${method || "answer"}`));
      }, timeout);
      wanted.push(w);
    });
  };
  return {
    socket,
    send,
    next,
    notify: (method, params) => send({ jsonrpc: "2.0", method, params }),
    // call sends a request and resolves with the page's answer.
    call: (method, params) => {
      const id = nextId++;
      send({ jsonrpc: "2.0", id, method, params });
      return next("").then((m) => (m.id === id ? m : Promise.reject(new Error("answer to another request: " + JSON.stringify(m)))));
    },
  };
}
