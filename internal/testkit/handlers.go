package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/corvid-agent/corvid/internal/acpkit"
)

// clientCaps is what the editor advertised in its last initialize request.
type clientCaps struct {
	sent       bool // an initialize request was sent
	absent     bool // it had no clientCapabilities member (old Gas City)
	readFile   bool
	writeFile  bool
	terminal   bool
	elicitForm bool
	elicitURL  bool
	notices    bool // session.notices
	compaction bool // session.compaction
}

func parseClientCaps(params json.RawMessage) clientCaps {
	var p struct {
		Caps *struct {
			FS *struct {
				Read  bool `json:"readTextFile"`
				Write bool `json:"writeTextFile"`
			} `json:"fs"`
			Terminal    bool `json:"terminal"`
			Elicitation *struct {
				Form json.RawMessage `json:"form"`
				URL  json.RawMessage `json:"url"`
			} `json:"elicitation"`
			Session *struct {
				Notices    json.RawMessage `json:"notices"`
				Compaction json.RawMessage `json:"compaction"`
			} `json:"session"`
		} `json:"clientCapabilities"`
	}
	_ = json.Unmarshal(params, &p)
	c := clientCaps{sent: true, absent: p.Caps == nil}
	if p.Caps == nil {
		return c
	}
	if p.Caps.FS != nil {
		c.readFile, c.writeFile = p.Caps.FS.Read, p.Caps.FS.Write
	}
	c.terminal = p.Caps.Terminal
	if el := p.Caps.Elicitation; el != nil {
		c.elicitForm = len(el.Form) > 0 && string(el.Form) != "null"
		c.elicitURL = len(el.URL) > 0 && string(el.URL) != "null"
	}
	if s := p.Caps.Session; s != nil {
		c.notices = isObject(s.Notices)
		c.compaction = isObject(s.Compaction)
	}
	return c
}

func isObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

// gateUpdate returns why the agent may not send a session/update of kind,
// or "" when it may: notices and compaction updates only to a client that
// advertised them.
func (c clientCaps) gateUpdate(kind string) string {
	switch {
	case kind == "notice" && !c.notices:
		return "but the client did not advertise session.notices"
	case (kind == "compaction_update" || kind == "compaction_summary_chunk") && !c.compaction:
		return "but the client did not advertise session.compaction"
	}
	return ""
}

// gate returns why the agent may not call method, or "" when it may.
func (c clientCaps) gate(method string, params json.RawMessage) string {
	if !c.sent {
		return "before the editor sent initialize"
	}
	switch {
	case method == "fs/read_text_file" && !c.readFile:
		return "but the client did not advertise fs.readTextFile"
	case method == "fs/write_text_file" && !c.writeFile:
		return "but the client did not advertise fs.writeTextFile"
	case strings.HasPrefix(method, "terminal/") && !c.terminal:
		return "but the client did not advertise terminal"
	case method == "session/request_permission" && c.absent:
		return "but the client sent no clientCapabilities at all and cannot answer (old Gas City; ARCHITECTURE.md §3)"
	case method == "elicitation/create":
		var p struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(params, &p)
		if (p.Mode == "form" && !c.elicitForm) || (p.Mode == "url" && !c.elicitURL) {
			return fmt.Sprintf("in mode %q but the client did not advertise elicitation.%s", p.Mode, p.Mode)
		}
	}
	return ""
}

func (e *Editor) handleRequest(m Message) {
	def := e.sch.Def(acpkit.ClientParams, m.Method)
	if def != "" {
		e.checkDef("params of request "+m.Method, def, m.Params, m.Raw)
	}
	e.mu.Lock()
	e.requests = append(e.requests, m)
	caps := e.caps
	e.broadcastLocked()
	e.mu.Unlock()

	_, custom := e.opts.Handlers[m.Method]
	refused := false
	switch {
	case def == "" && custom:
	case def == "" && strings.HasPrefix(m.Method, "_"):
	case def == "":
		e.t.Errorf("testkit: agent called %q, which is not an ACP v1 agent→client method:\n%s", m.Method, shorten(string(m.Raw)))
	default:
		if why := caps.gate(m.Method, m.Params); why != "" {
			e.t.Errorf("testkit: agent called %s %s:\n%s", m.Method, why, shorten(string(m.Raw)))
			refused = true
		}
	}
	if e.opts.NeverAnswer {
		return
	}
	ctx, cancel := context.WithCancel(e.ctx)
	key := idKey(m.ID)
	e.mu.Lock()
	e.inflight[key] = cancel
	e.mu.Unlock()
	e.handlers.Add(1)
	go func() {
		defer e.handlers.Done()
		defer cancel()
		var result any
		var rerr *RPCError
		if refused {
			rerr = &RPCError{Code: CodeMethodNotFound, Message: "Method not found"}
		} else {
			result, rerr = e.serve(ctx, m)
		}
		e.mu.Lock()
		delete(e.inflight, key)
		e.mu.Unlock()
		e.respond(m.ID, result, rerr)
	}()
}

func (e *Editor) serve(ctx context.Context, m Message) (any, *RPCError) {
	if h, ok := e.opts.Handlers[m.Method]; ok {
		return h(ctx, m.Params)
	}
	switch {
	case m.Method == "session/request_permission":
		return e.servePermission(ctx, m)
	case m.Method == "fs/read_text_file":
		return e.serveRead(m)
	case m.Method == "fs/write_text_file":
		return e.serveWrite(m)
	case strings.HasPrefix(m.Method, "terminal/"):
		return e.serveTerminal(ctx, m)
	case m.Method == "elicitation/create":
		return e.serveElicitation(ctx, m)
	}
	return nil, &RPCError{Code: CodeMethodNotFound, Message: "Method not found"}
}

// respond answers an agent request. Answers after stdin closed are dropped.
func (e *Editor) respond(id json.RawMessage, result any, rerr *RPCError) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rerr != nil {
		msg["error"] = rerr
	} else {
		if result == nil {
			result = map[string]any{}
		}
		msg["result"] = result
	}
	line, err := json.Marshal(msg)
	if err != nil {
		e.t.Errorf("testkit: encode response: %v", err)
		return
	}
	_ = e.writeLine(line, false)
}

// PermissionRequest is a decoded session/request_permission.
type PermissionRequest struct {
	SessionID  string
	ToolCallID string
	Title      string
	Kind       string
	ToolCall   json.RawMessage // the ToolCallUpdate
	Options    []PermissionOption
	Raw        json.RawMessage // the params
}

// PermissionOption is one option offered by the agent.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// PermissionOutcome is the editor's answer: a selected option, or cancelled.
type PermissionOutcome struct {
	Cancelled bool
	OptionID  string
}

// PermissionCall records one permission request and, once answered, its outcome.
type PermissionCall struct {
	Request  PermissionRequest
	Answered bool
	Outcome  PermissionOutcome
}

// PermissionHandler decides a permission request. ctx is cancelled when the editor sends
// session/cancel for the request's session, when the agent cancels the request with
// $/cancel_request, or when the editor shuts down; a handler that is waiting should then
// return Cancelled, as the spec requires of a client.
type PermissionHandler func(ctx context.Context, req PermissionRequest) (PermissionOutcome, error)

// AllowOnce selects the first allow_once option (the default).
func AllowOnce() PermissionHandler { return PickKind("allow_once") }

// RejectOnce selects the first reject_once option.
func RejectOnce() PermissionHandler { return PickKind("reject_once") }

// PickKind selects the first option of the first kind in kinds that is offered. A request
// that offers none of them fails the test and is answered cancelled.
func PickKind(kinds ...string) PermissionHandler {
	return func(_ context.Context, req PermissionRequest) (PermissionOutcome, error) {
		for _, k := range kinds {
			for _, o := range req.Options {
				if o.Kind == k {
					return PermissionOutcome{OptionID: o.OptionID}, nil
				}
			}
		}
		return PermissionOutcome{Cancelled: true}, fmt.Errorf("no option of kind %v offered", kinds)
	}
}

// PickOption selects the option with the given id, whether or not it was offered (to test
// how the agent treats an unknown optionId).
func PickOption(optionID string) PermissionHandler {
	return func(context.Context, PermissionRequest) (PermissionOutcome, error) {
		return PermissionOutcome{OptionID: optionID}, nil
	}
}

// CancelPermission answers every request with the cancelled outcome.
func CancelPermission() PermissionHandler {
	return func(context.Context, PermissionRequest) (PermissionOutcome, error) {
		return PermissionOutcome{Cancelled: true}, nil
	}
}

// HoldPermission holds each request until release is closed and then decides it with
// then; if the turn is cancelled first (see PermissionHandler), it answers cancelled.
// A nil release holds until cancellation (new Gas City: held for a human who never comes).
func HoldPermission(release <-chan struct{}, then PermissionHandler) PermissionHandler {
	return func(ctx context.Context, req PermissionRequest) (PermissionOutcome, error) {
		select {
		case <-release:
			return then(ctx, req)
		case <-ctx.Done():
			return PermissionOutcome{Cancelled: true}, nil
		}
	}
}

// DelayPermission answers with then after d (a slow human), or cancelled if cancelled first.
func DelayPermission(d time.Duration, then PermissionHandler) PermissionHandler {
	return func(ctx context.Context, req PermissionRequest) (PermissionOutcome, error) {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
			return then(ctx, req)
		case <-ctx.Done():
			return PermissionOutcome{Cancelled: true}, nil
		}
	}
}

func (e *Editor) servePermission(ctx context.Context, m Message) (any, *RPCError) {
	var p struct {
		SessionID string          `json:"sessionId"`
		ToolCall  json.RawMessage `json:"toolCall"`
		Options   []PermissionOption
	}
	_ = json.Unmarshal(m.Params, &p)
	var tc struct {
		ToolCallID string `json:"toolCallId"`
		Title      string `json:"title"`
		Kind       string `json:"kind"`
	}
	_ = json.Unmarshal(p.ToolCall, &tc)
	req := PermissionRequest{
		SessionID: p.SessionID, ToolCallID: tc.ToolCallID, Title: tc.Title, Kind: tc.Kind,
		ToolCall: p.ToolCall, Options: p.Options, Raw: m.Params,
	}
	call := &PermissionCall{Request: req}

	e.mu.Lock()
	e.permissions = append(e.permissions, call)
	cancelled, ok := e.sessionCancel[p.SessionID]
	if !ok {
		cancelled = make(chan struct{})
		e.sessionCancel[p.SessionID] = cancelled
	}
	e.broadcastLocked()
	e.mu.Unlock()

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-cancelled:
			stop()
		case <-ctx.Done():
		}
	}()
	out, err := e.opts.Permission(ctx, req)
	if err != nil {
		e.t.Errorf("testkit: permission request %s: %v", shorten(string(m.Params)), err)
	}
	e.mu.Lock()
	call.Answered, call.Outcome = true, out
	e.broadcastLocked()
	e.mu.Unlock()
	if out.Cancelled {
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
	}
	return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": out.OptionID}}, nil
}

// Permissions returns every permission request so far (answered or still held).
func (e *Editor) Permissions() []PermissionCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]PermissionCall, len(e.permissions))
	for i, c := range e.permissions {
		out[i] = *c
	}
	return out
}

// WaitPermission waits for the next permission request that WaitPermission has not
// returned yet (it may already have arrived).
func (e *Editor) WaitPermission(ctx context.Context) (PermissionRequest, error) {
	var got PermissionRequest
	err := e.waitFor(ctx, func() bool {
		if e.permCursor < len(e.permissions) {
			got = e.permissions[e.permCursor].Request
			e.permCursor++
			return true
		}
		return false
	})
	return got, err
}
