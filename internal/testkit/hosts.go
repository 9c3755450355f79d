package testkit

import (
	"context"
	"encoding/json"
)

// Host is what one real ACP client sends to initialize (ARCHITECTURE.md §8). Params is sent
// as-is (not validated: old Gas City's request is not schema-valid, on purpose).
type Host struct {
	Name   string
	Params map[string]any
	// SendInitialized sends the non-standard `initialized` notification after the
	// initialize response (old Gas City).
	SendInitialized bool
	// IDs is the id style the host uses; pass it in Options.IDs to emulate it fully.
	IDs IDStyle
}

// Zed advertises fs read/write and terminal, with Zed's _meta flags. Ids from 0.
func Zed() Host {
	return Host{Name: "zed", Params: map[string]any{
		"protocolVersion": 1,
		"clientCapabilities": map[string]any{
			"fs":       map[string]any{"readTextFile": true, "writeTextFile": true},
			"terminal": true,
			"_meta":    map[string]any{"terminal_output": true, "terminal-auth": true},
		},
		"clientInfo": map[string]any{"name": "zed", "title": "Zed", "version": "0.220.0"},
	}}
}

// Emacs (acp.el) advertises fs and has no terminal key at all. Ids from 1.
func Emacs() Host {
	return Host{Name: "emacs", IDs: IDsFromOne, Params: map[string]any{
		"protocolVersion": 1,
		"clientCapabilities": map[string]any{
			"fs": map[string]any{"readTextFile": true, "writeTextFile": true},
		},
		"clientInfo": map[string]any{"name": "acp.el", "version": "0.8.0"},
	}}
}

// OldGasCity sends only clientInfo (no protocolVersion, no clientCapabilities) and then
// the non-standard `initialized` notification; it never answers agent requests
// (use Options.NeverAnswer).
func OldGasCity() Host {
	return Host{Name: "gascity-old", SendInitialized: true, Params: map[string]any{
		"clientInfo": map[string]any{"name": "gascity", "version": "0.1.0"},
	}}
}

// NewGasCity advertises every capability explicitly false.
func NewGasCity() Host {
	return Host{Name: "gascity-new", Params: map[string]any{
		"protocolVersion": 1,
		"clientCapabilities": map[string]any{
			"fs":       map[string]any{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
			"auth":     map[string]any{"terminal": false},
		},
		"clientInfo": map[string]any{"name": "gascity", "version": "0.2.0"},
	}}
}

// GoSDK is the coder/acp-go-sdk client: `auth: {}` and no clientInfo. Ids from 1.
func GoSDK() Host {
	return Host{Name: "go-sdk", IDs: IDsFromOne, Params: map[string]any{
		"protocolVersion": 1,
		"clientCapabilities": map[string]any{
			"fs":       map[string]any{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
			"auth":     map[string]any{},
		},
	}}
}

// Minimal sends `clientCapabilities: {}` and nothing else optional.
func Minimal() Host {
	return Host{Name: "minimal", Params: map[string]any{
		"protocolVersion":    1,
		"clientCapabilities": map[string]any{},
	}}
}

// BooleanOptions is Minimal plus `session.configOptions.boolean: {}`, the
// capability without which an agent offers no type "boolean" config option
// (corvid's multitask).
func BooleanOptions() Host {
	return Host{Name: "boolean-options", Params: map[string]any{
		"protocolVersion": 1,
		"clientCapabilities": map[string]any{
			"session": map[string]any{"configOptions": map[string]any{"boolean": map[string]any{}}},
		},
	}}
}

// LiveUpdates is a client that advertises the schema's live updates
// (`session.notices`, `session.compaction`), as the TypeScript SDK 2.4.0 lets a
// client do, and nothing else optional.
func LiveUpdates() Host {
	return Host{Name: "live-updates", Params: map[string]any{
		"protocolVersion": 1,
		"clientCapabilities": map[string]any{
			"session": map[string]any{"notices": map[string]any{}, "compaction": map[string]any{}},
		},
	}}
}

// Implementation is ACP's clientInfo/agentInfo.
type Implementation struct {
	Name    string  `json:"name"`
	Title   *string `json:"title"`
	Version string  `json:"version"`
}

// InitializeResult is the decoded initialize response.
type InitializeResult struct {
	ProtocolVersion   int             `json:"protocolVersion"`
	AgentInfo         *Implementation `json:"agentInfo"`
	AgentCapabilities json.RawMessage `json:"agentCapabilities"`
	AuthMethods       json.RawMessage `json:"authMethods"`
	Raw               json.RawMessage `json:"-"`
}

// Initialize sends h's initialize request and returns the decoded response.
func (e *Editor) Initialize(ctx context.Context, h Host) (InitializeResult, *RPCError) {
	e.t.Helper()
	var params any = h.Params
	if h.Params == nil {
		params = map[string]any{}
	}
	raw, rerr := e.Call(ctx, "initialize", params)
	var res InitializeResult
	if rerr != nil {
		return res, rerr
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		e.t.Errorf("testkit: decode initialize result: %v", err)
	}
	res.Raw = raw
	if h.SendInitialized {
		e.Notify("initialized", map[string]any{})
	}
	return res, nil
}

// NewSession calls session/new with cwd and no MCP servers and returns the session id;
// it fails the test now on an error.
func (e *Editor) NewSession(ctx context.Context, cwd string) string {
	e.t.Helper()
	var res struct {
		SessionID string `json:"sessionId"`
	}
	e.MustCall(ctx, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &res)
	return res.SessionID
}

// TextPrompt is the params of a session/prompt with one text block.
func TextPrompt(sessionID, text string) map[string]any {
	return map[string]any{
		"sessionId": sessionID,
		"prompt":    []any{map[string]any{"type": "text", "text": text}},
	}
}

// Prompt sends a one-text-block prompt and waits for the turn to end; it returns the
// stop reason.
func (e *Editor) Prompt(ctx context.Context, sessionID, text string) (string, *RPCError) {
	e.t.Helper()
	raw, rerr := e.Call(ctx, "session/prompt", TextPrompt(sessionID, text))
	if rerr != nil {
		return "", rerr
	}
	var res struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(raw, &res)
	return res.StopReason, nil
}

// Cancel sends session/cancel for sessionID.
func (e *Editor) Cancel(sessionID string) {
	e.t.Helper()
	e.Notify("session/cancel", map[string]any{"sessionId": sessionID})
}
