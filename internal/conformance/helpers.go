package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/corvid-agent/corvid/internal/acpkit"
)

// initInfo is the part of an initialize result the checks use.
type initInfo struct {
	ProtocolVersion   json.RawMessage `json:"protocolVersion"`
	AgentCapabilities struct {
		LoadSession        bool `json:"loadSession"`
		PromptCapabilities struct {
			Image           bool `json:"image"`
			Audio           bool `json:"audio"`
			EmbeddedContext bool `json:"embeddedContext"`
		} `json:"promptCapabilities"`
		SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
		Auth                map[string]json.RawMessage `json:"auth"`
	} `json:"agentCapabilities"`
	AuthMethods []json.RawMessage `json:"authMethods"`
	AgentInfo   *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"agentInfo"`

	raw json.RawMessage
}

// session reports whether sessionCapabilities.<name> is advertised (present, not null).
func (i *initInfo) session(name string) bool {
	v, ok := i.AgentCapabilities.SessionCapabilities[name]
	return ok && string(v) != "null"
}

// noClientCaps is what every check advertises: nothing.
var noClientCaps = map[string]any{
	"fs":       map[string]any{"readTextFile": false, "writeTextFile": false},
	"terminal": false,
}

func initParams(version int) map[string]any {
	return map[string]any{
		"protocolVersion":    version,
		"clientCapabilities": noClientCaps,
		"clientInfo":         map[string]any{"name": "corvid-conformance", "title": "corvid conformance runner", "version": "1"},
	}
}

// step bounds one exchange inside a check, so a single hang does not eat the whole check.
func (c *checkRun) step() (context.Context, context.CancelFunc) {
	d := c.r.opts.Timeout / 3
	if d < time.Second {
		d = time.Second
	}
	return context.WithTimeout(c.ctx, d)
}

// callStep is call bounded by step.
func (c *checkRun) callStep(a *agent, method string, params any) (*msg, []*msg, error) {
	ctx, cancel := c.step()
	defer cancel()
	return a.call(ctx, method, params)
}

// open launches the agent and initializes it with protocol version 1 and no client capabilities.
func (c *checkRun) open() (*agent, *initInfo, error) {
	return c.openWith(initParams(1))
}

func (c *checkRun) openWith(params map[string]any) (*agent, *initInfo, error) {
	a, err := c.launch()
	if err != nil {
		return nil, nil, err
	}
	resp, _, err := c.callStep(a, "initialize", params)
	if err != nil {
		return a, nil, fmt.Errorf("initialize: %w", err)
	}
	if resp.Error != nil {
		return a, nil, fmt.Errorf("initialize: error %s", resp.Error)
	}
	info := &initInfo{raw: resp.Result}
	if err := json.Unmarshal(resp.Result, info); err != nil {
		return a, nil, fmt.Errorf("initialize result: %v", err)
	}
	return a, info, nil
}

// errNeedsAuth marks a session/new or prompt the agent refused for want of credentials.
var errNeedsAuth = errors.New("the agent needs credentials for this (authentication required)")

// authWords is compiled on first use: the kit is linked into every corvid
// binary but runs only for `corvid conformance`.
var authWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)auth|credential|api[ _-]?key|log ?in|sign ?in|unauthori[sz]ed|\b401\b`)
})

// needsAuth reports whether an error response says credentials are missing.
func needsAuth(e *acpkit.RPCError) bool {
	return e != nil && (e.Code == -32000 || authWords().MatchString(e.Message+" "+string(e.Data)))
}

// newSession creates a session in the check's workspace. extra params are merged in.
func (c *checkRun) newSession(a *agent, extra map[string]any) (string, *msg, error) {
	p := map[string]any{"cwd": c.ws.cwd, "mcpServers": []any{}}
	for k, v := range extra {
		p[k] = v
	}
	resp, _, err := c.callStep(a, "session/new", p)
	if err != nil {
		return "", nil, fmt.Errorf("session/new: %w", err)
	}
	if resp.Error != nil {
		if resp.Error.Code == -32000 {
			return "", resp, errNeedsAuth
		}
		return "", resp, fmt.Errorf("session/new: error %s", resp.Error)
	}
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(resp.Result, &r) != nil || r.SessionID == "" {
		return "", resp, fmt.Errorf("session/new: no sessionId in %s", oneLine(string(resp.Result), 200))
	}
	return r.SessionID, resp, nil
}

// setup is open + newSession; on failure it decides reqs itself (skip for missing
// credentials, fail otherwise) and returns ok=false.
func (c *checkRun) setup(reqs []string) (*agent, *initInfo, string, bool) {
	a, info, err := c.open()
	if err != nil {
		c.failAll(reqs, "%v%s", err, hint(a))
		return nil, nil, "", false
	}
	sid, _, err := c.newSession(a, nil)
	if errors.Is(err, errNeedsAuth) {
		c.skipAll(reqs, "session/new needs credentials (-32000)")
		return nil, nil, "", false
	}
	if err != nil {
		c.failAll(reqs, "%v", err)
		return nil, nil, "", false
	}
	return a, info, sid, true
}

func hint(a *agent) string {
	if a == nil {
		return ""
	}
	return a.stderrHint()
}

// promptText is what a turn asks for when the agent is not scripted.
func (c *checkRun) promptText() string {
	switch c.script {
	case "slow", "medium":
		return "Write a 400-word essay about rivers. Do not use any tools."
	case "tools":
		return "Read the file input.txt in the current directory, then write its contents to out.txt, then run the shell command `echo conformance > shell.txt`."
	}
	return "Reply with the single word pong. Do not use any tools."
}

func textBlock(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

// turn is one prompt's outcome.
type turn struct {
	resp    *msg
	during  []*msg // everything read before the response
	stop    string
	refused *acpkit.RPCError
}

// prompt sends a prompt and waits (up to the rest of the check) for its response.
// textTurn sets up an agent and a session and runs one text prompt. When it
// cannot (setup failed, the prompt failed or was refused), it has already
// reported every requirement of c and returns false.
func (c *checkRun) textTurn() (*agent, string, *turn, bool) {
	a, _, sid, ok := c.setup(c.reqs)
	if !ok {
		return nil, "", nil, false
	}
	t, err := c.prompt(a, sid, []any{textBlock(c.promptText())}, nil)
	if err != nil {
		c.failAll(c.reqs, "%v", err)
		return nil, "", nil, false
	}
	if t.refused != nil {
		if needsAuth(t.refused) {
			c.skipAll(c.reqs, "the prompt needs credentials: %s", t.refused)
		} else {
			c.failAll(c.reqs, "the prompt was refused: %s", t.refused)
		}
		return nil, "", nil, false
	}
	return a, sid, t, true
}

func (c *checkRun) prompt(a *agent, sid string, blocks []any, meta map[string]any) (*turn, error) {
	p := map[string]any{"sessionId": sid, "prompt": blocks}
	if meta != nil {
		p["_meta"] = meta
	}
	id, err := a.request("session/prompt", p)
	if err != nil {
		return nil, err
	}
	return c.awaitTurn(a, id)
}

func (c *checkRun) awaitTurn(a *agent, id json.RawMessage) (*turn, error) {
	resp, during, err := a.await(c.ctx, id)
	if err != nil {
		return nil, fmt.Errorf("session/prompt: %w", err)
	}
	t := &turn{resp: resp, during: during, refused: resp.Error}
	if resp.Error == nil {
		var r struct {
			StopReason string `json:"stopReason"`
		}
		_ = json.Unmarshal(resp.Result, &r)
		t.stop = r.StopReason
	}
	return t, nil
}

// stopReasons are v1's defined stop reasons.
var stopReasons = map[string]bool{"end_turn": true, "max_tokens": true, "max_turn_requests": true, "refusal": true, "cancelled": true}

// contentKinds are the session/update kinds that belong to a turn's content;
// they must precede the prompt response. State updates (usage, title, commands,
// mode, config) may follow it.
var contentKinds = map[string]bool{"user_message_chunk": true, "agent_message_chunk": true,
	"agent_thought_chunk": true, "tool_call": true, "tool_call_update": true, "plan": true}

// lateContent returns the content updates for sid among msgs.
func lateContent(msgs []*msg, sid string) []*msg {
	var out []*msg
	for _, m := range msgs {
		if s, kind := m.update(); s == sid && contentKinds[kind] {
			out = append(out, m)
		}
	}
	return out
}

// isObject reports whether raw is a JSON object (not null, not an array).
func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

func short(raw []byte) string { return oneLine(string(raw), 240) }
