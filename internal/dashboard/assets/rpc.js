// The ACP connection: JSON-RPC 2.0 over the daemon's WebSocket at /acp.
// The login cookie (when the daemon has a token) rides on the upgrade.

export class Conn {
  constructor(handlers) {
    this.h = handlers; // onRequest(method, params, id), onNotify(method, params), onState(open, why)
    this.next = 1;
    this.waiting = new Map();
  }

  open() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${proto}//${location.host}/acp`);
    this.ws = ws;
    ws.onopen = async () => {
      try {
        this.init = await this.call("initialize", {
          protocolVersion: 1,
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
          clientInfo: { name: "corvid-dashboard", title: "corvid dashboard", version: "1" },
        });
        this.h.onState(true, "");
      } catch (e) {
        this.h.onState(false, "initialize failed: " + e.message);
      }
    };
    ws.onmessage = (ev) => this.receive(ev.data);
    ws.onclose = (ev) => {
      for (const [, w] of this.waiting) w.reject(new Error("connection closed"));
      this.waiting.clear();
      if (this.ws === ws) this.h.onState(false, ev.reason || "connection closed");
    };
  }

  receive(data) {
    let msg;
    try {
      msg = JSON.parse(data);
    } catch {
      return;
    }
    if (msg.method && msg.id !== undefined && msg.id !== null) {
      this.h.onRequest(msg.method, msg.params || {}, msg.id);
    } else if (msg.method) {
      this.h.onNotify(msg.method, msg.params || {});
    } else if (msg.id !== undefined) {
      const w = this.waiting.get(msg.id);
      if (!w) return;
      this.waiting.delete(msg.id);
      if (msg.error) {
        const e = new Error(msg.error.message || "error");
        e.code = msg.error.code;
        e.data = msg.error.data;
        w.reject(e);
      } else {
        w.resolve(msg.result);
      }
    }
  }

  send(obj) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(obj));
  }

  call(method, params) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  notify(method, params) {
    this.send({ jsonrpc: "2.0", method, params });
  }

  respond(id, result) {
    this.send({ jsonrpc: "2.0", id, result });
  }

  fail(id, code, message) {
    this.send({ jsonrpc: "2.0", id, error: { code, message } });
  }
}
