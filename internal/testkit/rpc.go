package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/corvid-agent/corvid/internal/acpkit"
)

// handleLine records, checks and routes one line read from the agent's stdout.
func (e *Editor) handleLine(line []byte) {
	e.mu.Lock()
	seq := len(e.lines)
	e.lines = append(e.lines, Line{Seq: seq, Dir: FromAgent, Text: string(line)})
	e.broadcastLocked()
	e.mu.Unlock()

	m, bad := decodeMessage(line)
	if bad != "" {
		e.t.Errorf("testkit: agent wrote a stdout line that is not a JSON-RPC 2.0 message (%s):\n%s", bad, shorten(string(line)))
		return
	}
	m.Seq = seq
	switch {
	case m.IsResponse():
		e.handleResponse(m)
	case m.IsRequest():
		e.handleRequest(m)
	default:
		e.handleNotification(m)
	}
}

// checkDef validates raw against $defs/def and fails the test on a mismatch.
func (e *Editor) checkDef(what, def string, raw json.RawMessage, line json.RawMessage) bool {
	if err := e.sch.Validate(def, raw); err != nil {
		e.t.Errorf("testkit: %s does not match the ACP schema type %s: %v\nmessage: %s", what, def, err, shorten(string(line)))
		return false
	}
	return true
}

func (e *Editor) handleResponse(m Message) {
	key := idKey(m.ID)
	e.mu.Lock()
	method, sent := e.sent[key]
	dup := false
	for _, r := range e.responses {
		if key != "null" && idKey(r.msg.ID) == key {
			dup = true
		}
	}
	e.mu.Unlock()
	switch {
	case dup:
		e.t.Errorf("testkit: agent answered request id %s twice:\n%s", key, shorten(string(m.Raw)))
	case !sent && key != "null":
		e.t.Errorf("testkit: agent answered id %s, which the editor never sent:\n%s", key, shorten(string(m.Raw)))
	}
	if m.Error != nil {
		var errObj struct {
			Error json.RawMessage `json:"error"`
		}
		_ = json.Unmarshal(m.Raw, &errObj)
		e.checkDef("error of the response to "+describe(method, key), "Error", errObj.Error, m.Raw)
	} else if def := e.sch.Def(acpkit.AgentResult, method); def != "" {
		e.checkDef("result of "+method, def, m.Result, m.Raw)
	}
	e.mu.Lock()
	e.responses = append(e.responses, &response{msg: m, method: method})
	e.broadcastLocked()
	e.mu.Unlock()
}

func describe(method, key string) string {
	if method == "" {
		return "id " + key
	}
	return method + " (id " + key + ")"
}

func (e *Editor) handleNotification(m Message) {
	method := m.Method
	switch def := e.sch.Def(acpkit.AgentNotification, method); {
	case e.opts.Dialect == "codebuddy" && isSessionEnd(m):
		// CodeBuddy's session_end (not an ACP v1 update kind).
	case def != "":
		e.checkDef("params of notification "+method, def, m.Params, m.Raw)
	case strings.HasPrefix(method, "_") || strings.HasPrefix(method, "$/"):
		// Extension and protocol-dependent notifications: no schema, nothing to check.
	default:
		e.t.Errorf("testkit: agent sent notification %q, which is not an ACP v1 agent→client method:\n%s", method, shorten(string(m.Raw)))
	}
	e.mu.Lock()
	e.notifications = append(e.notifications, m)
	if method == "session/update" {
		if u, ok := parseUpdate(m); ok {
			if why := e.caps.gateUpdate(u.SessionUpdate); why != "" {
				e.t.Errorf("testkit: agent sent a %s update %s:\n%s", u.SessionUpdate, why, shorten(string(m.Raw)))
			}
			e.updates = append(e.updates, u)
		}
	}
	var cancelFn context.CancelFunc
	if method == "$/cancel_request" {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.RequestID != nil {
			cancelFn = e.inflight[idKey(p.RequestID)]
		}
	}
	e.broadcastLocked()
	e.mu.Unlock()
	if cancelFn != nil {
		cancelFn()
	}
}

// nextIDLocked returns the id for the editor's next request. e.mu must be held.
func (e *Editor) nextIDLocked() json.RawMessage {
	n := e.nextID
	e.nextID++
	switch e.opts.IDs {
	case IDsFromOne:
		return marshalID(n + 1)
	case IDsString:
		return marshalID(fmt.Sprintf("req-%d", n))
	default:
		return marshalID(n)
	}
}

// writeLine records line in the transcript and writes it to the agent's stdin. Requests,
// initialize capabilities and session/cancel are noted first, so an answer can never
// overtake its bookkeeping.
func (e *Editor) writeLine(line []byte, fromTest bool) error {
	if bytes.ContainsRune(line, '\n') {
		return fmt.Errorf("testkit: a line to send contains a newline")
	}
	e.noteOutgoing(line)
	e.writeMu.Lock()
	defer e.writeMu.Unlock()
	if e.stdinClosed {
		if fromTest {
			return fmt.Errorf("testkit: write after stdin was closed: %s", shorten(string(line)))
		}
		return nil
	}
	e.mu.Lock()
	e.lines = append(e.lines, Line{Seq: len(e.lines), Dir: ToAgent, Text: string(line)})
	e.mu.Unlock()
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	if _, err := e.stdin.Write(buf); err != nil && fromTest {
		return fmt.Errorf("testkit: write to agent stdin: %w", err)
	}
	return nil
}

func (e *Editor) noteOutgoing(line []byte) {
	m, bad := decodeMessage(line)
	if bad != "" || m.Method == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if m.ID != nil {
		e.sent[idKey(m.ID)] = m.Method
	}
	switch m.Method {
	case "initialize":
		e.caps = parseClientCaps(m.Params)
	case "session/cancel":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if ch, ok := e.sessionCancel[p.SessionID]; ok {
			close(ch)
			delete(e.sessionCancel, p.SessionID)
		}
	}
}

// request builds a request line.
func request(id json.RawMessage, method string, params any) ([]byte, error) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	return json.Marshal(msg)
}

// Pending is a request the editor sent and whose response it has not consumed yet.
type Pending struct {
	e      *Editor
	ID     json.RawMessage
	Method string
	err    error
	seq    int
}

// CallAsync sends a request and returns at once; Wait collects the response.
func (e *Editor) CallAsync(method string, params any) *Pending {
	e.mu.Lock()
	id := e.nextIDLocked()
	e.mu.Unlock()
	p := &Pending{e: e, ID: id, Method: method}
	line, err := request(id, method, params)
	if err == nil {
		err = e.writeLine(line, true)
	}
	p.err = err
	return p
}

// Wait returns the response's result or error. When no response comes (ctx done, agent
// gone) the test is failed and the error has Code CodeNoResponse.
func (p *Pending) Wait(ctx context.Context) (json.RawMessage, *RPCError) {
	p.e.t.Helper()
	if p.err != nil {
		p.e.t.Errorf("%s: %v", p.Method, p.err)
		return nil, &RPCError{Code: CodeNoResponse, Message: p.err.Error()}
	}
	m, err := p.e.NextResponse(ctx, p.ID)
	if err != nil {
		p.e.t.Errorf("testkit: no response to %s (id %s): %v", p.Method, p.ID, err)
		return nil, &RPCError{Code: CodeNoResponse, Message: err.Error()}
	}
	p.seq = m.Seq
	return m.Result, m.Error
}

// Seq is the transcript index of the response, valid after Wait returned it.
func (p *Pending) Seq() int { return p.seq }

// Call sends a request and waits for its response.
func (e *Editor) Call(ctx context.Context, method string, params any) (json.RawMessage, *RPCError) {
	e.t.Helper()
	return e.CallAsync(method, params).Wait(ctx)
}

// MustCall is Call that fails the test now (t.Fatalf) on an error response, and decodes
// the result into out when out is not nil. Call it from the test goroutine only.
func (e *Editor) MustCall(ctx context.Context, method string, params, out any) json.RawMessage {
	e.t.Helper()
	res, rerr := e.Call(ctx, method, params)
	if rerr != nil {
		e.t.Fatalf("%s: %v", method, rerr)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			e.t.Fatalf("%s: decode result %s: %v", method, shorten(string(res)), err)
		}
	}
	return res
}

// Notify sends a notification.
func (e *Editor) Notify(method string, params any) {
	e.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	line, err := json.Marshal(msg)
	if err == nil {
		err = e.writeLine(line, true)
	}
	if err != nil {
		e.t.Errorf("notify %s: %v", method, err)
	}
}

// Send writes raw as one line, unchanged (for malformed-input tests). If raw is a request,
// its id is noted so the response is validated like any other.
func (e *Editor) Send(raw string) {
	e.t.Helper()
	if err := e.writeLine([]byte(raw), true); err != nil {
		e.t.Errorf("%v", err)
	}
}

// NextResponse waits for a response with the given id (an int, a string, nil for null, or
// a json.RawMessage) that has not been returned before, and returns it.
func (e *Editor) NextResponse(ctx context.Context, id any) (Message, error) {
	key := idKey(marshalID(id))
	var got Message
	err := e.waitFor(ctx, func() bool {
		for _, r := range e.responses {
			if !r.consumed && idKey(r.msg.ID) == key {
				r.consumed = true
				got = r.msg
				return true
			}
		}
		return false
	})
	return got, err
}

// isSessionEnd reports whether m is a session/update carrying CodeBuddy's
// session_end: exactly a sessionId and an update with sessionUpdate
// "session_end" (and optionally stopReason and _meta).
func isSessionEnd(m Message) bool {
	if m.Method != "session/update" {
		return false
	}
	var p struct {
		SessionID string                     `json:"sessionId"`
		Update    map[string]json.RawMessage `json:"update"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.SessionID == "" || string(p.Update["sessionUpdate"]) != `"session_end"` {
		return false
	}
	for k := range p.Update {
		switch k {
		case "sessionUpdate", "stopReason", "_meta":
		default:
			return false
		}
	}
	return true
}
