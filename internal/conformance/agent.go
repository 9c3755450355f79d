package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/acpkit"
)

// msg is one line the agent wrote, decoded as far as it would go.
type msg struct {
	acpkit.Message
	At     time.Duration // since the agent started
	Object bool          // the line is a JSON object
}

func (m *msg) isResponse() bool { return m.Object && m.ID != nil && m.Method == "" }

// isReply is any response-like object, including one that (wrongly) lacks an id.
func (m *msg) isReply() bool {
	return m.Object && m.Method == "" && (m.ID != nil || m.Result != nil || m.Error != nil)
}
func (m *msg) isRequest() bool      { return m.Object && m.ID != nil && m.Method != "" }
func (m *msg) isNotification() bool { return m.Object && m.ID == nil && m.Method != "" }

// update returns the session id and sessionUpdate tag of a session/update, or "", "".
func (m *msg) update() (sessionID, kind string) {
	if !m.isNotification() || m.Method != "session/update" {
		return "", ""
	}
	var p struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			Kind string `json:"sessionUpdate"`
		} `json:"update"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.SessionID, p.Update.Kind
}

// decodeLine parses one stdout line without judging it (the observer does).
func decodeLine(line []byte) *msg {
	m, problem := acpkit.Decode(line)
	return &msg{Message: m, Object: problem != acpkit.NotAnObject}
}

// idKey is a canonical form of a JSON-RPC id.
func idKey(raw json.RawMessage) string { return acpkit.IDKey(raw) }

// agent is one running agent process and the client side of its connection.
type agent struct {
	run   *checkRun
	proc  *acpkit.Proc
	start time.Time

	stdin  *os.File
	wmu    sync.Mutex
	wrote  bool // the client has written its first line
	nextID int64

	mu        sync.Mutex
	inbox     []*msg
	wake      chan struct{}
	eof       bool
	pending   map[string]string // idKey → method, for schema checks of results
	agentReqs []*msg            // agent→client requests, in order

	stderr *tailBuffer
}

// launch starts the agent for the check, in the check's workspace.
func (c *checkRun) launch(extra ...string) (*agent, error) {
	argv := append(append([]string{}, c.r.opts.Agent...), extra...)
	if c.r.opts.Scripted && c.script != "" {
		path, err := c.ws.writeScript(c.script)
		if err != nil {
			return nil, err
		}
		argv = append(argv, "-m", "script:"+path)
	}
	c.note("launch: %s (cwd %s)", strings.Join(argv, " "), c.ws.cwd)
	start := time.Now()
	p, err := acpkit.Spawn(argv, c.ws.cwd, c.ws.env(c.r.opts.Env))
	if err != nil {
		return nil, fmt.Errorf("start agent: %w", err)
	}
	a := &agent{run: c, proc: p, start: start, stdin: p.Stdin, wake: make(chan struct{}, 1),
		pending: map[string]string{}, stderr: &tailBuffer{max: 8 << 10}}
	c.agents = append(c.agents, a)
	go func() {
		_, _ = io.Copy(a.stderr, p.Stderr)
		p.Stderr.Close()
	}()
	go a.read(p.Stdout)
	return a, nil
}

func (a *agent) since() time.Duration { return time.Since(a.start) }

func (a *agent) read(out *os.File) {
	defer out.Close()
	br := bufio.NewReaderSize(out, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			a.handle(bytes.TrimSuffix(line, []byte("\n")))
		}
		if err != nil {
			break
		}
	}
	a.mu.Lock()
	a.eof = true
	a.mu.Unlock()
	a.signal()
}

func (a *agent) signal() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// handle judges one line (hygiene, envelope, schema), answers agent requests, and queues it.
func (a *agent) handle(line []byte) {
	line = bytes.Clone(line)
	at := a.since()
	c := a.run
	c.transcript("recv", at, string(line))
	obs := c.r.obs
	obs.countLine()
	a.wmu.Lock()
	early := !a.wrote
	a.wmu.Unlock()
	if early {
		obs.add("stdio.quiet-before-input", c.name, "written before any request", line)
	}
	if !utf8.Valid(line) {
		obs.add("stdio.utf8", c.name, "invalid UTF-8", line)
	}
	m := decodeLine(line)
	m.At = at
	switch {
	case !m.Object:
		obs.add("stdio.jsonrpc-lines", c.name, acpkit.NotAnObject, line)
	case !bytes.Equal(bytes.TrimSpace(fieldRaw(line, "jsonrpc")), []byte(`"2.0"`)):
		obs.add("stdio.jsonrpc-lines", c.name, `missing "jsonrpc":"2.0"`, line)
	case m.Method == "" && m.ID == nil && (m.Result != nil || m.Error != nil):
		obs.add("stdio.jsonrpc-lines", c.name, `a response without "id" (JSON-RPC 2.0 requires it, null when unknown)`, line)
	case m.Method == "" && m.ID == nil:
		obs.add("stdio.jsonrpc-lines", c.name, "neither a request, a response nor a notification", line)
	}
	if m.Object {
		a.judge(m)
	}
	a.mu.Lock()
	a.inbox = append(a.inbox, m)
	a.mu.Unlock()
	a.signal()
}

func fieldRaw(line []byte, name string) json.RawMessage {
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(line, &fields)
	return fields[name]
}

func (a *agent) judge(m *msg) {
	c, obs := a.run, a.run.r.obs
	sch, err := loadSchema()
	if err != nil {
		obs.add("schema.messages", c.name, err.Error(), nil)
		return
	}
	switch {
	case m.isResponse():
		if (m.Result != nil) == (m.Error != nil) {
			obs.add("envelope.result-xor-error", c.name, "a response must carry exactly one of result and error", m.Raw)
		}
		a.mu.Lock()
		method := a.pending[idKey(m.ID)]
		delete(a.pending, idKey(m.ID))
		a.mu.Unlock()
		if m.Error != nil {
			obs.countError()
			if strings.ContainsAny(m.Error.Message, "\r\n") {
				obs.add("envelope.error-message-one-line", c.name, "error message spans lines", m.Raw)
			}
			if err := sch.validate("Error", fieldRaw(m.Raw, "error")); err != nil {
				obs.add("schema.messages", c.name, err.Error(), m.Raw)
			}
		} else if def := sch.Def(acpkit.AgentResult, method); def != "" {
			if err := sch.validate(def, m.Result); err != nil {
				obs.add("schema.messages", c.name, method+" result: "+err.Error(), m.Raw)
			}
		}
	case m.isRequest():
		a.mu.Lock()
		a.agentReqs = append(a.agentReqs, m)
		a.mu.Unlock()
		if def := sch.Def(acpkit.ClientParams, m.Method); def != "" {
			if err := sch.validate(def, m.Params); err != nil {
				obs.add("schema.messages", c.name, m.Method+" params: "+err.Error(), m.Raw)
			}
		} else if !strings.HasPrefix(m.Method, "_") {
			obs.add("schema.messages", c.name, "request for a method not in the ACP v1 schema: "+m.Method, m.Raw)
		}
		a.answer(m)
	case m.isNotification():
		if def := sch.Def(acpkit.AgentNotification, m.Method); def != "" {
			if err := sch.validate(def, m.Params); err != nil {
				obs.add("schema.messages", c.name, m.Method+" params: "+err.Error(), m.Raw)
			}
		} else if !strings.HasPrefix(m.Method, "_") {
			obs.add("schema.messages", c.name, "notification not in the ACP v1 schema: "+m.Method, m.Raw)
		}
	}
}

// answer plays a client that advertised nothing: permission requests get allow_once,
// everything else -32601.
func (a *agent) answer(m *msg) {
	if m.Method == "session/request_permission" {
		var p struct {
			Options []struct {
				OptionID string `json:"optionId"`
				Kind     string `json:"kind"`
			} `json:"options"`
		}
		_ = json.Unmarshal(m.Params, &p)
		pick := ""
		for _, o := range p.Options {
			if o.Kind == "allow_once" || (pick == "" && strings.HasPrefix(o.Kind, "allow")) {
				pick = o.OptionID
				if o.Kind == "allow_once" {
					break
				}
			}
		}
		if pick == "" && len(p.Options) > 0 {
			pick = p.Options[0].OptionID
		}
		_ = a.writeJSON(map[string]any{"jsonrpc": "2.0", "id": m.ID,
			"result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": pick}}})
		return
	}
	_ = a.writeJSON(map[string]any{"jsonrpc": "2.0", "id": m.ID,
		"error": map[string]any{"code": acpkit.CodeMethodNotFound, "message": "Method not found"}})
}

func (a *agent) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return a.writeLine(string(b))
}

// writeLine sends one line exactly as given (the newline is added).
func (a *agent) writeLine(line string) error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	a.wrote = true
	a.run.transcript("send", a.since(), line)
	_, err := a.stdin.Write([]byte(line + "\n"))
	return err
}

// send writes a request with the given raw id and remembers its method.
func (a *agent) send(id json.RawMessage, method string, params any) error {
	a.mu.Lock()
	a.pending[idKey(id)] = method
	a.mu.Unlock()
	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	return a.writeJSON(req)
}

// request sends a request with the next integer id and returns the id.
func (a *agent) request(method string, params any) (json.RawMessage, error) {
	a.wmu.Lock()
	a.nextID++
	id := json.RawMessage(fmt.Sprint(a.nextID))
	a.wmu.Unlock()
	return id, a.send(id, method, params)
}

func (a *agent) notify(method string, params any) error {
	n := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		n["params"] = params
	}
	return a.writeJSON(n)
}

var errAgentGone = errors.New("the agent closed stdout")

// next returns the next message, waiting until ctx ends.
func (a *agent) next(ctx context.Context) (*msg, error) {
	for {
		a.mu.Lock()
		if len(a.inbox) > 0 {
			m := a.inbox[0]
			a.inbox = a.inbox[1:]
			a.mu.Unlock()
			return m, nil
		}
		eof := a.eof
		a.mu.Unlock()
		if eof {
			return nil, fmt.Errorf("%w (%s)%s", errAgentGone, a.exitState(), a.stderrHint())
		}
		select {
		case <-a.wake:
		case <-ctx.Done():
			return nil, fmt.Errorf("no answer: %w", ctx.Err())
		}
	}
}

// await reads until the response to id arrives; everything read before it is returned too.
func (a *agent) await(ctx context.Context, id json.RawMessage) (*msg, []*msg, error) {
	var before []*msg
	want := idKey(id)
	for {
		m, err := a.next(ctx)
		if err != nil {
			return nil, before, err
		}
		if m.isResponse() && idKey(m.ID) == want {
			return m, before, nil
		}
		before = append(before, m)
	}
}

// call sends a request and waits for its response.
func (a *agent) call(ctx context.Context, method string, params any) (*msg, []*msg, error) {
	id, err := a.request(method, params)
	if err != nil {
		return nil, nil, fmt.Errorf("write %s: %w", method, err)
	}
	return a.await(ctx, id)
}

// collect gathers whatever arrives during d (or until ctx ends).
func (a *agent) collect(ctx context.Context, d time.Duration) []*msg {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var out []*msg
	for {
		m, err := a.next(ctx)
		if err != nil {
			return out
		}
		out = append(out, m)
	}
}

// requestsSeen returns the agent→client requests received so far.
func (a *agent) requestsSeen() []*msg {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*msg(nil), a.agentReqs...)
}

// closeInput closes the agent's stdin, the ACP way of ending a connection.
func (a *agent) closeInput() {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	if a.stdin != nil {
		a.stdin.Close()
		a.stdin = nil
		a.run.transcript("note", a.since(), "client closed stdin")
	}
}

// stop closes stdin, gives the agent grace to exit, then kills its process group.
func (a *agent) stop(grace time.Duration) {
	a.closeInput()
	select {
	case <-a.proc.Done():
	case <-time.After(grace):
	}
	a.proc.Kill()
	<-a.proc.Done()
}

func (a *agent) exitState() string {
	select {
	case <-a.proc.Done():
		if err := a.proc.Err(); err != nil {
			return "exited: " + err.Error()
		}
		return "exited 0"
	default:
		return "still running"
	}
}

func (a *agent) stderrHint() string {
	s := strings.TrimSpace(a.stderr.String())
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	return "; stderr: " + oneLine(lines[len(lines)-1], 300)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
